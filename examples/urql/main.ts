/**
 * urql with graphcache against cardgraph: the generated introspection (`urqlSchema`) lets the cache
 * match `... on Error` exactly; types without `id` (result wrappers, errors, connections) are
 * embedded in their parent, node types are normalized by `id`. Subscriptions go over graphql-ws.
 * Reads the viewer, then a card that does not exist (its typed error).
 *
 * Run: `npx tsc -p examples/tsconfig.json` (strict; writes examples/.build/), then
 * `TOKEN=$(npm run -s token -- --vault tntsandbox1) npx node examples/.build/examples/urql/main.js`
 * (`GRAPHQL_URL` defaults to http://127.0.0.1:4000/graphql). Prints one JSON line per step.
 */
import { Client, fetchExchange, subscriptionExchange } from '@urql/core';
import { cacheExchange } from '@urql/exchange-graphcache';
import { createClient } from 'graphql-ws';
import { AccountUpdaterCardByIdDocument, MeDocument, urqlSchema } from '../../src/client/generated/index.ts';

const url = process.env.GRAPHQL_URL ?? 'http://127.0.0.1:4000/graphql';
const token = process.env.TOKEN;
if (!token) throw new Error('TOKEN is not set: TOKEN=$(npm run -s token -- --vault tntsandbox1)');
const authorization = `Bearer ${token}`;

const keys = Object.fromEntries(
  urqlSchema.__schema.types
    .filter((type) => type.kind === 'OBJECT' && !type.fields.some((field) => field.name === 'id'))
    .map((type) => [type.name, () => null]),
);
const ws = createClient({ url: url.replace(/^http/, 'ws'), connectionParams: { authorization } });
const client = new Client({
  url,
  fetchOptions: { headers: { authorization } },
  exchanges: [
    cacheExchange({ schema: urqlSchema, keys }),
    fetchExchange,
    subscriptionExchange({
      forwardSubscription: (request) => ({
        subscribe: (sink) => ({
          unsubscribe: ws.subscribe({ ...request, query: request.query ?? '' }, sink),
        }),
      }),
    }),
  ],
});

const me = await client.query(MeDocument, {}).toPromise();
console.log(JSON.stringify({ vaults: me.data?.viewer?.vaults }));

const read = await client
  .query(AccountUpdaterCardByIdDocument, { cardId: 'CRD0000000000000000000000' })
  .toPromise();
const card = read.data?.accountUpdaterCard;
if (card?.__typename === 'QueryAccountUpdaterCardSuccess')
  console.log(JSON.stringify({ read: card.data.state }));
else console.log(JSON.stringify({ error: card?.code }));

await ws.dispose();
