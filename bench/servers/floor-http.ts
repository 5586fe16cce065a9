/**
 * The query floor: the least a server can do to answer the bench's two queries from the same
 * upstream. `POST /graphql` with `{"variables":{"cardId"},"operationName"}`:
 * - `OneCard`: account updater `GET /cards/{card_id}`, its 200 answer kept for 5 min per card id
 *   (cardgraph's card read cache, `CARD_CACHE_TTL_MS` 300000: it too calls upstream once per card,
 *   then answers from memory);
 * - `Joined`: that card, then `GET /network-tokens/{alias}` on every query and the card's BIN
 *   attributes (BIN answers cached for the process, as cardgraph caches them).
 * So the floor makes the upstream calls cardgraph makes (0 per one-card query, 1 per joined query
 * once the card is read), no more: the comparison is of the servers, not of their caches.
 * undici `request` on one pooled Agent, the vault's bearer token fetched once and cached, no
 * parsing of the GraphQL document, no validation, no auth of the client. Env: `UPSTREAM_URL`,
 * `CLIENT_ID`, `CLIENT_SECRET`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { serveStats } from '../lib/child.ts';

const upstream = process.env.UPSTREAM_URL!;
const agent = new Agent({ connections: 128, pipelining: 1, keepAliveTimeout: 30_000 });
const basic = Buffer.from(`${process.env.CLIENT_ID}:${process.env.CLIENT_SECRET}`).toString('base64');
const tokenResponse = await request(`${upstream}/oauth/token`, {
  method: 'POST',
  dispatcher: agent,
  headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
  body: 'grant_type=client_credentials',
});
const { access_token: accessToken } = (await tokenResponse.body.json()) as { access_token: string };
const authorization = `Bearer ${accessToken}`;
const binCache = new Map<string, unknown>();
/** Card answers by card id, as cardgraph's card read cache keeps them (5 min, src/loaders/card-read-cache.ts). */
const CARD_TTL_MS = 300_000;
const cardCache = new Map<string, { card: Promise<Answer>; expiresAt: number }>();

/** The upstream's JSON answers, as far as the floor reads them. */
type Answer = { data: Record<string, unknown> & { number: string } } & { data?: unknown };

async function getJson(path: string): Promise<{ status: number; body: Answer }> {
  const response = await request(`${upstream}${path}`, { dispatcher: agent, headers: { authorization } });
  return { status: response.statusCode, body: (await response.body.json()) as Answer };
}

/** The card's answer body: from the cache, else one upstream read (kept only when it is a 200). */
function cardAnswer(cardId: string): Promise<Answer> {
  const now = Date.now();
  const cached = cardCache.get(cardId);
  if (cached && now < cached.expiresAt) return cached.card;
  const card = getJson(`/account-updater/cards/${cardId}`).then(({ status, body }) => {
    if (status !== 200) cardCache.delete(cardId);
    return body;
  });
  cardCache.set(cardId, { card, expiresAt: now + CARD_TTL_MS });
  card.catch(() => cardCache.delete(cardId));
  return card;
}

async function attributes(bin: string): Promise<unknown> {
  if (binCache.has(bin)) return binCache.get(bin);
  const response = await request(`${upstream}/card-attributes/attributes/attributes`, {
    method: 'POST',
    dispatcher: agent,
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({ number: bin }),
  });
  const body = (await response.body.json()) as { data?: unknown };
  const value = response.statusCode === 200 ? (body.data ?? null) : null;
  binCache.set(bin, value);
  return value;
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', async () => {
    try {
      const { operationName, variables } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const card = await cardAnswer(String(variables.cardId));
      const data: Record<string, unknown> = { ...card.data };
      if (operationName === 'Joined') {
        const [token, attrs] = await Promise.all([
          getJson(`/account-updater/network-tokens/${card.data.number}`),
          attributes(String(card.data.number).slice(0, 6)),
        ]);
        data.networkToken = token.status === 200 ? token.body.data : null;
        data.attributes = attrs;
      }
      const payload = JSON.stringify({ data: { accountUpdaterCard: { __typename: 'Success', data } } });
      res.writeHead(200, { 'content-type': 'application/json' }).end(payload);
    } catch (error) {
      res.writeHead(500).end(String(error));
    }
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  serveStats({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
