/**
 * @generated SignedSource<<c752284dbb9449601176a432cd1e70ed>>
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import type { ReaderFragment } from 'relay-runtime';
export type UnmappedNotificationReason = "NOT_AN_OBJECT" | "NOT_UTF8" | "NO_ID" | "NO_TENANT" | "%future added value";
import type { FragmentRefs } from "relay-runtime";
export type UnmappedNotificationHistory_query$data = {
  readonly unmappedNotificationHistory: {
    readonly edges: ReadonlyArray<{
      readonly node: {
        readonly id: string;
        readonly reason: UnmappedNotificationReason;
        readonly receivedAt: string;
      };
    }>;
    readonly pageInfo: {
      readonly endCursor: string | null | undefined;
      readonly hasNextPage: boolean;
    };
  } | null | undefined;
  readonly " $fragmentType": "UnmappedNotificationHistory_query";
};
export type UnmappedNotificationHistory_query$key = {
  readonly " $data"?: UnmappedNotificationHistory_query$data;
  readonly " $fragmentSpreads": FragmentRefs<"UnmappedNotificationHistory_query">;
};

import UnmappedNotificationHistoryPaginationQuery_graphql from './UnmappedNotificationHistoryPaginationQuery.graphql';

const node: ReaderFragment = (function(){
var v0 = [
  "unmappedNotificationHistory"
];
return {
  "argumentDefinitions": [
    {
      "defaultValue": 20,
      "kind": "LocalArgument",
      "name": "count"
    },
    {
      "defaultValue": null,
      "kind": "LocalArgument",
      "name": "cursor"
    }
  ],
  "kind": "Fragment",
  "metadata": {
    "connection": [
      {
        "count": "count",
        "cursor": "cursor",
        "direction": "forward",
        "path": (v0/*:: as any*/)
      }
    ],
    "refetch": {
      "connection": {
        "forward": {
          "count": "count",
          "cursor": "cursor"
        },
        "backward": null,
        "path": (v0/*:: as any*/)
      },
      "fragmentPathInResult": [],
      "operation": UnmappedNotificationHistoryPaginationQuery_graphql
    }
  },
  "name": "UnmappedNotificationHistory_query",
  "selections": [
    {
      "alias": "unmappedNotificationHistory",
      "args": null,
      "concreteType": "UnmappedNotificationConnection",
      "kind": "LinkedField",
      "name": "__UnmappedNotificationHistory_unmappedNotificationHistory_connection",
      "plural": false,
      "selections": [
        {
          "alias": null,
          "args": null,
          "concreteType": "PageInfo",
          "kind": "LinkedField",
          "name": "pageInfo",
          "plural": false,
          "selections": [
            {
              "alias": null,
              "args": null,
              "kind": "ScalarField",
              "name": "endCursor",
              "storageKey": null
            },
            {
              "alias": null,
              "args": null,
              "kind": "ScalarField",
              "name": "hasNextPage",
              "storageKey": null
            }
          ],
          "storageKey": null
        },
        {
          "alias": null,
          "args": null,
          "concreteType": "UnmappedNotificationEdge",
          "kind": "LinkedField",
          "name": "edges",
          "plural": true,
          "selections": [
            {
              "alias": null,
              "args": null,
              "concreteType": "UnmappedNotification",
              "kind": "LinkedField",
              "name": "node",
              "plural": false,
              "selections": [
                {
                  "alias": null,
                  "args": null,
                  "kind": "ScalarField",
                  "name": "id",
                  "storageKey": null
                },
                {
                  "alias": null,
                  "args": null,
                  "kind": "ScalarField",
                  "name": "reason",
                  "storageKey": null
                },
                {
                  "alias": null,
                  "args": null,
                  "kind": "ScalarField",
                  "name": "receivedAt",
                  "storageKey": null
                },
                {
                  "alias": null,
                  "args": null,
                  "kind": "ScalarField",
                  "name": "__typename",
                  "storageKey": null
                }
              ],
              "storageKey": null
            },
            {
              "alias": null,
              "args": null,
              "kind": "ScalarField",
              "name": "cursor",
              "storageKey": null
            }
          ],
          "storageKey": null
        }
      ],
      "storageKey": null
    }
  ],
  "type": "Query",
  "abstractKey": null
};
})();

(node as any).hash = "41f2549930c4bf115bc86d9dcd3f5992";

export default node;
