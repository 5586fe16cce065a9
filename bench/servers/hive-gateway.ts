/**
 * Hive Gateway (`@graphql-hive/gateway`) on the bench sandbox: the sandbox's OpenAPI document
 * (`GET /openapi.json`) composed into a supergraph by `@graphql-mesh/compose-cli` with
 * `@omnigraph/openapi`, served by the gateway runtime on `node:http` (what the `hive-gateway` CLI
 * does without uWebSockets). Upstream calls carry the vault's bearer token, fetched once at start
 * (Hive Gateway has no OAuth client-credentials source). Env: `UPSTREAM_URL`, `CLIENT_ID`,
 * `CLIENT_SECRET`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGatewayRuntime, Logger } from '@graphql-hive/gateway';
import { getComposedSchemaFromConfig } from '@graphql-mesh/compose-cli';
import { loadOpenAPISubgraph } from '@omnigraph/openapi';
import { request } from 'undici';
import { serveStats } from '../lib/child.ts';

const upstream = process.env.UPSTREAM_URL!;
const basic = Buffer.from(`${process.env.CLIENT_ID}:${process.env.CLIENT_SECRET}`).toString('base64');
const tokenResponse = await request(`${upstream}/oauth/token`, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
  body: 'grant_type=client_credentials',
});
const { access_token: accessToken } = (await tokenResponse.body.json()) as { access_token: string };
const log = new Logger({ level: 'error' });

/**
 * The sandbox document with the OpenAPI 3.1 constructs @omnigraph/openapi 0.112 cannot read made
 * plain (it throws "Cannot read properties of undefined (reading 'anyOf')" on them): forbidden
 * properties (`"holder_info": false`) and `not` are dropped, `type: [T, "null"]` becomes `T`, and
 * multi-type lists become untyped (JSON). Nothing else changes, so Hive Gateway sees the same
 * operations, parameters and response shapes as cardgraph's upstream client.
 */
function adaptForOmnigraph(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(adaptForOmnigraph);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'not') continue;
    if (key === 'type' && Array.isArray(value)) {
      const types = value.filter((t) => t !== 'null');
      if (types.length === 1) out.type = types[0];
      continue;
    }
    if (key === 'properties' && value && typeof value === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(value)
          .filter(([, schema]) => schema !== false)
          .map(([name, schema]) => [name, adaptForOmnigraph(schema)]),
      );
      continue;
    }
    out[key] = adaptForOmnigraph(value);
  }
  return out;
}
const documentPath = join(mkdtempSync(join(tmpdir(), 'cardgraph-bench-hive-')), 'openapi.json');
const document = await (await request(`${upstream}/openapi.json`)).body.json();
writeFileSync(documentPath, JSON.stringify(adaptForOmnigraph(document)));

const supergraph = await getComposedSchemaFromConfig(
  {
    subgraphs: [
      {
        sourceHandler: loadOpenAPISubgraph('Sandbox', {
          source: documentPath,
          endpoint: upstream,
          operationHeaders: { authorization: `Bearer ${accessToken}` },
          // POST lookups read; expose them as queries so one operation can join them.
          selectQueryOrMutationField: [{ type: 'query', fieldName: 'lookupCardAttributes' }],
        }),
      },
    ],
  },
  log as never,
);

const gateway = createGatewayRuntime({ supergraph, logging: false, graphiql: false, landingPage: false });
const server = createServer(gateway);
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => {
  serveStats({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
