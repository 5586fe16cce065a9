/**
 * @generated SignedSource<<f03681ec23c021ba2717f98f50208a44>>
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import type { ReaderFragment } from 'relay-runtime';
export type NetworkTokenEventType = "ACTIVE" | "OTHER" | "SUSPENDED" | "UPDATED" | "%future added value";
import type { FragmentRefs } from "relay-runtime";
export type NetworkTokenEventHistory_query$data = {
  readonly networkTokenEventHistory: {
    readonly edges: ReadonlyArray<{
      readonly node: {
        readonly id: string;
        readonly panAlias: string | null | undefined;
        readonly type: NetworkTokenEventType;
        readonly " $fragmentSpreads": FragmentRefs<"NetworkTokenEventDetails_event">;
      };
    }>;
    readonly pageInfo: {
      readonly endCursor: string | null | undefined;
      readonly hasNextPage: boolean;
    };
  } | null | undefined;
  readonly " $fragmentType": "NetworkTokenEventHistory_query";
};
export type NetworkTokenEventHistory_query$key = {
  readonly " $data"?: NetworkTokenEventHistory_query$data;
  readonly " $fragmentSpreads": FragmentRefs<"NetworkTokenEventHistory_query">;
};

import NetworkTokenEventHistoryPaginationQuery_graphql from './NetworkTokenEventHistoryPaginationQuery.graphql';

const node: ReaderFragment = (function(){
var v0 = [
  "networkTokenEventHistory"
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
    },
    {
      "defaultValue": null,
      "kind": "LocalArgument",
      "name": "panAlias"
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
      "operation": NetworkTokenEventHistoryPaginationQuery_graphql
    }
  },
  "name": "NetworkTokenEventHistory_query",
  "selections": [
    {
      "alias": "networkTokenEventHistory",
      "args": [
        {
          "kind": "Variable",
          "name": "panAlias",
          "variableName": "panAlias"
        }
      ],
      "concreteType": "NetworkTokenEventConnection",
      "kind": "LinkedField",
      "name": "__NetworkTokenEventHistory_networkTokenEventHistory_connection",
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
          "concreteType": "NetworkTokenEventEdge",
          "kind": "LinkedField",
          "name": "edges",
          "plural": true,
          "selections": [
            {
              "alias": null,
              "args": null,
              "concreteType": "NetworkTokenEvent",
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
                  "name": "type",
                  "storageKey": null
                },
                {
                  "alias": null,
                  "args": null,
                  "kind": "ScalarField",
                  "name": "panAlias",
                  "storageKey": null
                },
                {
                  "args": null,
                  "kind": "FragmentSpread",
                  "name": "NetworkTokenEventDetails_event"
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

(node as any).hash = "ecd68064821f51696134d853700fd9ac";

export default node;
