// A frontend module importing the generated client as an application would: every typed document,
// `graphql()` on one pasted operation, and `possibleTypes`. test/clients/generated-client.test.ts
// compiles it under `moduleResolution: "nodenext"` and `"bundler"` (tsconfig.*.json here).
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import {
  AccountUpdaterCardByIdDocument,
  type AccountUpdaterCardByIdQuery,
  type AccountUpdaterCardByIdQueryVariables,
  EnrolCardWithWebhookDocument,
  graphql,
  LiveCardEventsDocument,
  type LiveCardEventsSubscription,
  MeDocument,
  type MeQuery,
  possibleTypes,
} from '../../../src/client/generated/index.js';

const me: TypedDocumentNode<MeQuery, Record<string, never>> = MeDocument;
const byId: TypedDocumentNode<AccountUpdaterCardByIdQuery, AccountUpdaterCardByIdQueryVariables> =
  AccountUpdaterCardByIdDocument;

// One operation pasted from src/client/operations.graphql is typed (not `unknown`).
const pasted = graphql(`query Me {
  viewer {
    subject
    vaults
    scopes
  }
}`);
const sameAsMe: typeof MeDocument = pasted;

type CardResult = NonNullable<LiveCardEventsSubscription['cardEvents']>['card'];
export function cardErrorCode(card: CardResult): string | undefined {
  return card?.__typename === 'CardEventCardSuccess' ? undefined : card?.code;
}

export const errorTypes: string[] | undefined = possibleTypes.Error;
export const documents = [me, byId, sameAsMe, EnrolCardWithWebhookDocument, LiveCardEventsDocument];
