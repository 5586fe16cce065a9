import { graphql } from '../generated/index.ts';

/**
 * GraphQL documents that several gateway tests send, written once and typed by the codegen (which
 * reads test/**\/*.ts). A file's own documents stay in that file; only what more than one file asks
 * for the same way lives here.
 */

/**
 * `createCard` in the caller's vault or in `$vaultId`: on success the created card's global `id`,
 * `cardId`, `vaultId`, `panAlias` and `cvcAlias` (null without a CVC); otherwise the error's
 * `ErrorFields`.
 */
export const CreateCard = graphql(`
  mutation TS_CreateCard($input: CreateCardInput!, $vaultId: String) {
    createCard(input: $input, vaultId: $vaultId) {
      __typename
      ... on MutationCreateCardSuccess { data { id cardId vaultId panAlias cvcAlias } }
      ...ErrorFields
    }
  }
`);

/**
 * `enrollAccountUpdaterCard` in the caller's vault or in `$vaultId`: on success the card's global
 * `id`, `cardId`, `vaultId`, `number` (an alias, never a PAN) and `state`; otherwise the error's
 * `ErrorFields`.
 */
export const EnrolCard = graphql(`
  mutation TS_EnrolCard($input: EnrollAccountUpdaterCardInput!, $vaultId: String) {
    enrollAccountUpdaterCard(input: $input, vaultId: $vaultId) {
      __typename
      ... on MutationEnrollAccountUpdaterCardSuccess { data { id cardId vaultId number state } }
      ...ErrorFields
    }
  }
`);

/**
 * `provisionNetworkToken` in the caller's vault or in `$vaultId`: on success the token's `panAlias`
 * and `state` (PENDING until the sandbox decides); otherwise the error's `ErrorFields`.
 */
export const ProvisionToken = graphql(`
  mutation TS_ProvisionToken($input: ProvisionNetworkTokenInput!, $vaultId: String) {
    provisionNetworkToken(input: $input, vaultId: $vaultId) {
      __typename
      ... on MutationProvisionNetworkTokenSuccess { data { panAlias state } }
      ...ErrorFields
    }
  }
`);

/**
 * `createCard` of `$pan` with a fixed CVC and expiry in the caller's vault: on success the card's
 * `cardId` and `bin` (its card attributes not read, so not cached); otherwise the error's code and message.
 */
export const CreateCardOfPan = graphql(`
  mutation TS_CreateCardOfPan($pan: String!) {
    createCard(input: { pan: $pan, cvc: "123", expMonth: 12, expYear: 30 }) {
      __typename
      ... on MutationCreateCardSuccess { data { cardId bin } }
      ... on Error { code message }
    }
  }
`);

/**
 * A card by `$cardId` whose card attributes (`brand`, `cardType`) come in a later part, labelled
 * `attributes` (`@defer`); the error's code and message otherwise.
 */
export const DeferredAttributes = graphql(`
  query TS_DeferredAttributes($cardId: String!) {
    card(cardId: $cardId) {
      __typename
      ... on QueryCardSuccess {
        data {
          cardId
          bin
          ... @defer(label: "attributes") { attributes { brand cardType } }
        }
      }
      ... on Error { code message }
    }
  }
`);
