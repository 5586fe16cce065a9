/**
 * @generated SignedSource<<de79fb9c0649281c8e9139b55658a66a>>
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import type { ConcreteRequest } from 'relay-runtime';
import type { FragmentRefs } from "relay-runtime";
export type NetworkTokenEventHistoryPaginationQuery$variables = {
  count?: number | null | undefined;
  cursor?: string | null | undefined;
  panAlias?: string | null | undefined;
};
export type NetworkTokenEventHistoryPaginationQuery$data = {
  readonly " $fragmentSpreads": FragmentRefs<"NetworkTokenEventHistory_query">;
};
export type NetworkTokenEventHistoryPaginationQuery = {
  response: NetworkTokenEventHistoryPaginationQuery$data;
  variables: NetworkTokenEventHistoryPaginationQuery$variables;
};

const node: ConcreteRequest = (function(){
var v0 = [
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
v1 = {
  "kind": "Variable",
  "name": "panAlias",
  "variableName": "panAlias"
},
v2 = [
  {
    "kind": "Variable",
    "name": "after",
    "variableName": "cursor"
  },
  {
    "kind": "Variable",
    "name": "first",
    "variableName": "count"
  },
  (v1/*:: as any*/)
];
return {
  "fragment": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Fragment",
    "metadata": null,
    "name": "NetworkTokenEventHistoryPaginationQuery",
    "selections": [
      {
        "args": [
          {
            "kind": "Variable",
            "name": "count",
            "variableName": "count"
          },
          {
            "kind": "Variable",
            "name": "cursor",
            "variableName": "cursor"
          },
          (v1/*:: as any*/)
        ],
        "kind": "FragmentSpread",
        "name": "NetworkTokenEventHistory_query"
      }
    ],
    "type": "Query",
    "abstractKey": null
  },
  "kind": "Request",
  "operation": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Operation",
    "name": "NetworkTokenEventHistoryPaginationQuery",
    "selections": [
      {
        "alias": null,
        "args": (v2/*:: as any*/),
        "concreteType": "NetworkTokenEventConnection",
        "kind": "LinkedField",
        "name": "networkTokenEventHistory",
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
                    "alias": null,
                    "args": null,
                    "kind": "ScalarField",
                    "name": "state",
                    "storageKey": null
                  },
                  {
                    "alias": null,
                    "args": null,
                    "kind": "ScalarField",
                    "name": "stateName",
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
      },
      {
        "alias": null,
        "args": (v2/*:: as any*/),
        "filters": [
          "panAlias"
        ],
        "handle": "connection",
        "key": "NetworkTokenEventHistory_networkTokenEventHistory",
        "kind": "LinkedHandle",
        "name": "networkTokenEventHistory"
      }
    ]
  },
  "params": {
    "cacheID": "6d8fa664d3497078582ef016519b6ddb",
    "id": null,
    "metadata": {},
    "name": "NetworkTokenEventHistoryPaginationQuery",
    "operationKind": "query",
    "text": "query NetworkTokenEventHistoryPaginationQuery(\n  $count: Int = 20\n  $cursor: String\n  $panAlias: String\n) {\n  ...NetworkTokenEventHistory_query_1Zis06\n}\n\nfragment NetworkTokenEventDetails_event on NetworkTokenEvent {\n  id\n  state\n  stateName\n}\n\nfragment NetworkTokenEventHistory_query_1Zis06 on Query {\n  networkTokenEventHistory(first: $count, after: $cursor, panAlias: $panAlias) {\n    pageInfo {\n      endCursor\n      hasNextPage\n    }\n    edges {\n      node {\n        id\n        type\n        panAlias\n        ...NetworkTokenEventDetails_event\n        __typename\n      }\n      cursor\n    }\n  }\n}\n"
  }
};
})();

(node as any).hash = "ecd68064821f51696134d853700fd9ac";

export default node;
