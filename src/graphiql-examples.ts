/**
 * The document GraphiQL opens with in embedded mode: one example operation per root field, using the
 * sandbox test cards of contract §5. Pick an operation with the play button's menu.
 */
export const GRAPHIQL_EXAMPLE_OPERATIONS = `# cardgraph on the embedded sandbox. The Authorization header below is a dev token for
# vault tntsandbox1 with every scope (make others with: npm run token -- --vault tntsandbox2).
# Start "LiveCardEvents" in one tab, then run "EnrolCardWithWebhook" in another.

query Me {
  viewer { subject vaults scopes }
}

subscription LiveCardEvents {
  cardEvents {
    id type tenant cardId timestamp oldAccountNumber newAccountNumber
    oldExpiry { month year } newExpiry { month year }
    card { __typename ... on CardEventCardSuccess { data { cardId state event } } ... on Error { code message } }
  }
}

mutation EnrolCardWithWebhook {
  enrollAccountUpdaterCard(input: { name: "Ada Lovelace", number: "4000210000192002", expMonth: 12, expYear: 30 }) {
    __typename
    ... on MutationEnrollAccountUpdaterCardSuccess { data { id cardId state event number } }
    ... on Error { code message }
  }
}

mutation EnrolNormalCard {
  enrollAccountUpdaterCard(input: { name: "Grace Hopper", number: "4111111111111111", expMonth: 12, expYear: 30 }) {
    __typename
    ... on MutationEnrollAccountUpdaterCardSuccess { data { id cardId state capabilities } }
    ... on Error { code message }
  }
}

mutation CheckCard {
  checkAccountUpdaterCard(input: { name: "Ada Lovelace", number: "5100260000193001", expMonth: 12, expYear: 30 }) {
    __typename
    ... on MutationCheckAccountUpdaterCardSuccess { data { number expMonth expYear event failureCode } }
    ... on Error { code message }
  }
}

mutation CreateCard {
  createCard(input: { pan: "4000210000593001", cvc: "123", expMonth: 12, expYear: 30, metadata: { customerId: 42 } }) {
    __typename
    ... on MutationCreateCardSuccess { data { id cardId panAlias bin last4 brand metadata } }
    ... on Error { code message }
  }
}

mutation SubscribeCard($cardId: String!) {
  subscribeCardUpdates(cardId: $cardId) {
    __typename
    ... on MutationSubscribeCardUpdatesSuccess { data { subscriptionId state } }
    ... on Error { code message }
  }
}

mutation CheckCardUpdates($cardId: String!) {
  checkCardUpdates(cardId: $cardId) {
    __typename
    ... on MutationCheckCardUpdatesSuccess { data { event updatedValues { fieldName oldValue newValue } } }
    ... on Error { code message }
  }
}

query CardById($cardId: String!) {
  card(cardId: $cardId) {
    __typename
    ... on QueryCardSuccess { data { id cardId panAlias last4 updateSubscription { subscriptionId state } } }
    ... on Error { code message }
  }
}
`;
