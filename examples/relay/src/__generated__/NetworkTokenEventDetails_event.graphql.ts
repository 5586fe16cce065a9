/**
 * @generated SignedSource<<6529e3ddaeda44a7fd6d6cb3dbb17022>>
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import type { ReaderFragment } from 'relay-runtime';
export type NetworkTokenState = "ACTIVE" | "DELETED" | "PENDING" | "SUSPENDED" | "UNKNOWN" | "%future added value";
import type { FragmentRefs } from "relay-runtime";
export type NetworkTokenEventDetails_event$data = {
  readonly id: string;
  readonly state: NetworkTokenState | null | undefined;
  readonly stateName: string | null | undefined;
  readonly " $fragmentType": "NetworkTokenEventDetails_event";
};
export type NetworkTokenEventDetails_event$key = {
  readonly " $data"?: NetworkTokenEventDetails_event$data;
  readonly " $fragmentSpreads": FragmentRefs<"NetworkTokenEventDetails_event">;
};

import NetworkTokenEventDetailsRefetchQuery_graphql from './NetworkTokenEventDetailsRefetchQuery.graphql';

const node: ReaderFragment = {
  "argumentDefinitions": [],
  "kind": "Fragment",
  "metadata": {
    "refetch": {
      "connection": null,
      "fragmentPathInResult": [
        "node"
      ],
      "operation": NetworkTokenEventDetailsRefetchQuery_graphql,
      "identifierInfo": {
        "identifierField": "id",
        "identifierQueryVariableName": "id"
      }
    }
  },
  "name": "NetworkTokenEventDetails_event",
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
};

(node as any).hash = "d6dc9755493b7c0c9a0d004a45ddbf95";

export default node;
