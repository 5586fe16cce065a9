/**
 * Apollo Client 4 against cardgraph: HTTP for queries and mutations, graphql-ws for subscriptions,
 * the generated typed documents and `possibleTypes` (without them the cache drops `... on Error`).
 * Enrols a card, reads it back by id, and reads a card that does not exist (its typed error).
 *
 * Run: `npx tsc -p examples/tsconfig.json` (strict; writes examples/.build/), then
 * `TOKEN=$(npm run -s token -- --vault tntsandbox1) npx node examples/.build/examples/apollo/main.js`
 * (`GRAPHQL_URL` defaults to http://127.0.0.1:4000/graphql). Prints one JSON line per step.
 * An application copies `src/client/generated/` (`npm run codegen`) and imports `./generated/index.js`.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition } from '@apollo/client/utilities';
import { createClient } from 'graphql-ws';
import {
  AccountUpdaterCardByIdDocument,
  EnrolCardWithWebhookDocument,
  possibleTypes,
} from '../../src/client/generated/index.ts';

const url = process.env.GRAPHQL_URL ?? 'http://127.0.0.1:4000/graphql';
const token = process.env.TOKEN;
if (!token) throw new Error('TOKEN is not set: TOKEN=$(npm run -s token -- --vault tntsandbox1)');
const authorization = `Bearer ${token}`;

const ws = createClient({ url: url.replace(/^http/, 'ws'), connectionParams: { authorization } });
const client = new ApolloClient({
  cache: new InMemoryCache({ possibleTypes }),
  link: ApolloLink.split(
    ({ query }) => {
      const main = getMainDefinition(query);
      return main.kind === 'OperationDefinition' && main.operation === 'subscription';
    },
    new GraphQLWsLink(ws),
    new HttpLink({ uri: url, headers: { authorization } }),
  ),
});

// A card of the sandbox contract that no enrolment scenario names enrols as a normal card.
const { data } = await client.mutate({
  mutation: EnrolCardWithWebhookDocument,
  variables: { number: '5100260000895001' },
});
const enrolled = data?.enrollAccountUpdaterCard;
if (enrolled?.__typename !== 'MutationEnrollAccountUpdaterCardSuccess') {
  throw new Error(`enrolment failed: ${enrolled?.__typename}`);
}
console.log(JSON.stringify({ enrolled: enrolled.data.state }));

for (const cardId of [enrolled.data.cardId, 'CRD0000000000000000000000']) {
  const { data: read } = await client.query({ query: AccountUpdaterCardByIdDocument, variables: { cardId } });
  const card = read?.accountUpdaterCard;
  if (!card) throw new Error('no answer');
  if (card.__typename === 'QueryAccountUpdaterCardSuccess')
    console.log(JSON.stringify({ read: card.data.state }));
  // Every error type implements Error: code (stable) and message (for people).
  else console.log(JSON.stringify({ error: card.code }));
}

client.stop();
await ws.dispose();
