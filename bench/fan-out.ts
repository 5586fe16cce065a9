/**
 * Fan-out benchmark: one gateway on the embedded sandbox (sqlite event log), S graphql-ws
 * subscribers of one vault, E signed card notifications posted to the webhook receiver. Reports
 * webhook acknowledgement latency, delivery latency to the last subscriber (ms, p50/p95/p99),
 * deliveries per second, and the upstream card reads (one per event, not one per subscriber, is
 * the point). Run: `npm run bench -- --subscribers 200 --events 200`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createClient } from 'graphql-ws';
import { pino } from 'pino';
import { request } from 'undici';
import WebSocket from 'ws';
import { buildApp } from '../src/app.ts';
import { issueDevToken } from '../src/auth/issue-dev-token.ts';
import { loadConfig } from '../src/config.ts';
import { signWebhookBody } from '../src/lib/webhook-signature.ts';

const { values } = parseArgs({
  options: { subscribers: { type: 'string', default: '200' }, events: { type: 'string', default: '200' } },
});
const SUBSCRIBERS = Number(values.subscribers);
const EVENTS = Number(values.events);
const SECRET = 'whsec_bench_0123456789abcdef0123';
const JWT_SECRET = 'bench-jwt-secret-0123456789abcdef-0123456789';

const config = loadConfig({
  PORT: '0',
  HOST: '127.0.0.1',
  SANDBOX_PORT: '0',
  METRICS_PORT: '0',
  LOG_LEVEL: 'warn',
  WEBHOOK_SECRETS: SECRET,
  AUTH_JWT_SECRET: JWT_SECRET,
  DATA_DIR: join(mkdtempSync(join(tmpdir(), 'cardgraph-bench-')), 'data'),
});
const app = buildApp(config, { logDestination: pino.destination('/dev/null') });
const { url } = await app.start();
const token = await issueDevToken({
  secret: JWT_SECRET,
  subject: 'bench',
  vaults: ['tntsandbox1'],
  scopes: ['cards:read'],
  expiresInS: 3600,
});

const received = new Map<string, number>();
const sentAt = new Map<string, number>();
const lastDelivery = new Map<string, number>();
const clients = Array.from({ length: SUBSCRIBERS }, () =>
  createClient({
    url: `${url.replace('http', 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
  }),
);
const query = 'subscription { cardEvents { id type card { __typename } } }';
let allDone: () => void;
const done = new Promise<void>((resolve) => {
  allDone = resolve;
});
for (const client of clients) {
  client.subscribe<{ cardEvents: { id: string } }>(
    { query },
    {
      next: (result) => {
        const id = result.data?.cardEvents.id;
        if (!id) return;
        const count = (received.get(id) ?? 0) + 1;
        received.set(id, count);
        if (count === SUBSCRIBERS) {
          lastDelivery.set(id, performance.now() - sentAt.get(id)!);
          if (lastDelivery.size === EVENTS) allDone();
        }
      },
      error: (error) => console.error(error),
      complete: () => undefined,
    },
  );
}
while ((app.events?.subscriberCount('tntsandbox1') ?? 0) < SUBSCRIBERS)
  await new Promise((r) => setTimeout(r, 20));

const readsBefore = app
  .sandbox!.requests()
  .filter((r) => r.method === 'GET' && r.path.startsWith('/account-updater/cards/')).length;
const ackMs: number[] = [];
const started = performance.now();
for (let i = 0; i < EVENTS; i++) {
  const now = new Date();
  const details = JSON.stringify({
    card_id: `CRD${String(i).padStart(22, '0')}`,
    occurred_at: now.toISOString(),
    new_account_number: '400021******2002',
    old_account_number: '400021******2002',
    new_expiration_date: '1230',
    old_expiration_date: '1230',
    exp_month: 12,
    exp_year: 2030,
    created_at: `${now.toISOString().slice(0, 19)}Z`,
  });
  const id = randomUUID();
  const body = JSON.stringify({
    id,
    event: 'au_card.updated',
    timestamp: now.toISOString(),
    description: 'Card account updater event sent',
    details,
    fingerprint: 'a'.repeat(64),
    grouping: 'every_single',
    integration_id: 'INTsandbox00000000000001',
    occurrence: 1,
    org_id: 'ACsandbox000000000000001',
    producer: { application_name: 'account-updater', application_protocol: 'https' },
    scope: 'cards',
    tenant: 'tntsandbox1',
  });
  sentAt.set(id, performance.now());
  const t0 = performance.now();
  const response = await request(`${url}/webhooks/card-events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'vgs-signature': signWebhookBody(body, SECRET, Math.floor(Date.now() / 1000)),
    },
    body,
  });
  await response.body.dump();
  ackMs.push(performance.now() - t0);
}
await done;
const elapsedS = (performance.now() - started) / 1000;
const reads =
  app.sandbox!.requests().filter((r) => r.method === 'GET' && r.path.startsWith('/account-updater/cards/'))
    .length - readsBefore;

const pct = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(1);
};
const delivery = [...lastDelivery.values()];
console.log(
  JSON.stringify(
    {
      subscribers: SUBSCRIBERS,
      events: EVENTS,
      deliveries: SUBSCRIBERS * EVENTS,
      deliveriesPerSecond: Math.round((SUBSCRIBERS * EVENTS) / elapsedS),
      webhookAckMs: { p50: pct(ackMs, 50), p95: pct(ackMs, 95), p99: pct(ackMs, 99) },
      deliveredToAllMs: { p50: pct(delivery, 50), p95: pct(delivery, 95), p99: pct(delivery, 99) },
      upstreamCardReads: reads,
    },
    null,
    2,
  ),
);
await Promise.all(clients.map((c) => c.dispose()));
await app.stop();
