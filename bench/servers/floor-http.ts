/**
 * The query floor: the least a server can do to answer the bench's two queries from the same
 * upstream. `POST /graphql` with `{"variables":{"cardId"},"operationName"}`:
 * - `OneCard`: one upstream call, account updater `GET /cards/{card_id}`;
 * - `Joined`: that call, then `GET /network-tokens/{alias}` and the card's BIN attributes (BIN
 *   answers cached for the process, as cardgraph caches them).
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

/** The upstream's JSON answers, as far as the floor reads them. */
type Answer = { data: Record<string, unknown> & { number: string } } & { data?: unknown };

async function getJson(path: string): Promise<{ status: number; body: Answer }> {
  const response = await request(`${upstream}${path}`, { dispatcher: agent, headers: { authorization } });
  return { status: response.statusCode, body: (await response.body.json()) as Answer };
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
      const card = await getJson(`/account-updater/cards/${variables.cardId}`);
      const data: Record<string, unknown> = { ...card.body.data };
      if (operationName === 'Joined') {
        const [token, attrs] = await Promise.all([
          getJson(`/account-updater/network-tokens/${card.body.data.number}`),
          attributes(String(card.body.data.number).slice(0, 6)),
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
