/**
 * @generated SignedSource<<4bd20e18016c888c3d20a0dae4512d38>>
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import type { ConcreteRequest } from 'relay-runtime';
import type { FragmentRefs } from "relay-runtime";
export type NetworkTokenEventDetailsRefetchQuery$variables = {
  id: string;
};
export type NetworkTokenEventDetailsRefetchQuery$data = {
  readonly node: {
    readonly " $fragmentSpreads": FragmentRefs<"NetworkTokenEventDetails_event">;
  } | null | undefined;
};
export type NetworkTokenEventDetailsRefetchQuery = {
  response: NetworkTokenEventDetailsRefetchQuery$data;
  variables: NetworkTokenEventDetailsRefetchQuery$variables;
};

const node: ConcreteRequest = (function(){
var v0 = [
  {
    "defaultValue": null,
    "kind": "LocalArgument",
    "name": "id"
  }
],
v1 = [
  {
    "kind": "Variable",
    "name": "id",
    "variableName": "id"
  }
];
return {
  "fragment": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Fragment",
    "metadata": null,
    "name": "NetworkTokenEventDetailsRefetchQuery",
    "selections": [
      {
        "alias": null,
        "args": (v1/*:: as any*/),
        "concreteType": null,
        "kind": "LinkedField",
        "name": "node",
        "plural": false,
        "selections": [
          {
            "args": null,
            "kind": "FragmentSpread",
            "name": "NetworkTokenEventDetails_event"
          }
        ],
        "storageKey": null
      }
    ],
    "type": "Query",
    "abstractKey": null
  },
  "kind": "Request",
  "operation": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Operation",
    "name": "NetworkTokenEventDetailsRefetchQuery",
    "selections": [
      {
        "alias": null,
        "args": (v1/*:: as any*/),
        "concreteType": null,
        "kind": "LinkedField",
        "name": "node",
        "plural": false,
        "selections": [
          {
            "alias": null,
            "args": null,
            "kind": "ScalarField",
            "name": "__typename",
            "storageKey": null
          },
          {
            "alias": null,
            "args": null,
            "kind": "ScalarField",
            "name": "id",
            "storageKey": null
          },
          {
            "kind": "InlineFragment",
            "selections": [
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
              }
            ],
            "type": "NetworkTokenEvent",
            "abstractKey": null
          }
        ],
        "storageKey": null
      }
    ]
  },
  "params": {
    "cacheID": "11c861921d6c3ecd16dc1e3af9776119",
    "id": null,
    "metadata": {},
    "name": "NetworkTokenEventDetailsRefetchQuery",
    "operationKind": "query",
    "text": "query NetworkTokenEventDetailsRefetchQuery(\n  $id: ID!\n) {\n  node(id: $id) {\n    __typename\n    ...NetworkTokenEventDetails_event\n    id\n  }\n}\n\nfragment NetworkTokenEventDetails_event on NetworkTokenEvent {\n  id\n  state\n  stateName\n}\n"
  }
};
})();

(node as any).hash = "d6dc9755493b7c0c9a0d004a45ddbf95";

export default node;
