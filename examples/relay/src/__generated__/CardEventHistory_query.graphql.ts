/**
 * @generated SignedSource<<54c24b294dcf803e01ea5ed40392d70a>>
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import type { ReaderFragment } from 'relay-runtime';
export type CardEventType = "CLOSED" | "CONTACT_CARDHOLDER_ADVICE" | "ENROLLED" | "ENROLLMENT_FAILED" | "EXPIRED" | "NON_PARTICIPATING" | "OPT_OUT" | "OTHER" | "UNKNOWN" | "UPDATED" | "VALID" | "%future added value";
import type { FragmentRefs } from "relay-runtime";
export type CardEventHistory_query$data = {
  readonly cardEventHistory: {
    readonly edges: ReadonlyArray<{
      readonly node: {
        readonly cardId: string | null | undefined;
        readonly id: string;
        readonly timestamp: string;
        readonly type: CardEventType;
        readonly " $fragmentSpreads": FragmentRefs<"CardEventDetails_event">;
      };
    }>;
    readonly pageInfo: {
      readonly endCursor: string | null | undefined;
      readonly hasNextPage: boolean;
    };
  } | null | undefined;
  readonly " $fragmentType": "CardEventHistory_query";
};
export type CardEventHistory_query$key = {
  readonly " $data"?: CardEventHistory_query$data;
  readonly " $fragmentSpreads": FragmentRefs<"CardEventHistory_query">;
};

import CardEventHistoryPaginationQuery_graphql from './CardEventHistoryPaginationQuery.graphql';

const node: ReaderFragment = (function(){
var v0 = [
  "cardEventHistory"
];
return {
  "argumentDefinitions": [
    {
      "defaultValue": null,
      "kind": "LocalArgument",
      "name": "cardId"
    },
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
      "operation": CardEventHistoryPaginationQuery_graphql
    }
  },
  "name": "CardEventHistory_query",
  "selections": [
    {
      "alias": "cardEventHistory",
      "args": [
        {
          "kind": "Variable",
          "name": "cardId",
          "variableName": "cardId"
        }
      ],
      "concreteType": "CardEventConnection",
      "kind": "LinkedField",
      "name": "__CardEventHistory_cardEventHistory_connection",
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
          "concreteType": "CardEventEdge",
          "kind": "LinkedField",
          "name": "edges",
          "plural": true,
          "selections": [
            {
              "alias": null,
              "args": null,
              "concreteType": "CardEvent",
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
                  "name": "cardId",
                  "storageKey": null
                },
                {
                  "alias": null,
                  "args": null,
                  "kind": "ScalarField",
                  "name": "timestamp",
                  "storageKey": null
                },
                {
                  "args": null,
                  "kind": "FragmentSpread",
                  "name": "CardEventDetails_event"
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

(node as any).hash = "014ac1c1d33e8e1f298c5594535f49b3";

export default node;
