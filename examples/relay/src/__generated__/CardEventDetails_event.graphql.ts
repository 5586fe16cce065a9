/**
 * @generated SignedSource<<6e5a516a0856825dda368a4e1744d7bb>>
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import type { ReaderFragment } from 'relay-runtime';
export type CardEventType = "CLOSED" | "CONTACT_CARDHOLDER_ADVICE" | "ENROLLED" | "ENROLLMENT_FAILED" | "EXPIRED" | "NON_PARTICIPATING" | "OPT_OUT" | "OTHER" | "UNKNOWN" | "UPDATED" | "VALID" | "%future added value";
export type NotificationSource = "ACCOUNT_UPDATER" | "CARD_MANAGEMENT" | "NETWORK_TOKENS" | "UNKNOWN" | "%future added value";
import type { FragmentRefs } from "relay-runtime";
export type CardEventDetails_event$data = {
  readonly id: string;
  readonly outOfOrder: boolean;
  readonly source: NotificationSource;
  readonly type: CardEventType;
  readonly " $fragmentType": "CardEventDetails_event";
};
export type CardEventDetails_event$key = {
  readonly " $data"?: CardEventDetails_event$data;
  readonly " $fragmentSpreads": FragmentRefs<"CardEventDetails_event">;
};

import CardEventDetailsRefetchQuery_graphql from './CardEventDetailsRefetchQuery.graphql';

const node: ReaderFragment = {
  "argumentDefinitions": [],
  "kind": "Fragment",
  "metadata": {
    "refetch": {
      "connection": null,
      "fragmentPathInResult": [
        "node"
      ],
      "operation": CardEventDetailsRefetchQuery_graphql,
      "identifierInfo": {
        "identifierField": "id",
        "identifierQueryVariableName": "id"
      }
    }
  },
  "name": "CardEventDetails_event",
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
      "name": "source",
      "storageKey": null
    },
    {
      "alias": null,
      "args": null,
      "kind": "ScalarField",
      "name": "outOfOrder",
      "storageKey": null
    }
  ],
  "type": "CardEvent",
  "abstractKey": null
};

(node as any).hash = "6a00e36714f4f3caa93507800a844259";

export default node;
