/**
 * The ingest floor (issue 21 item 4): the least any correct receiver of the provider's signed
 * notifications must do, on bare node:http with no framework, to compare cardgraph's webhook ingest
 * against. `POST /webhooks/card-events`:
 * 1. reads the raw body up to the receiver's limit (64 KiB, src/events/webhook-receiver.ts
 *    `DEFAULT_MAX_WEBHOOK_BODY_BYTES`; larger answers 413);
 * 2. verifies `vgs-signature` on the raw bytes with the shared definition of the wire,
 *    src/lib/webhook-signature.ts `verifyWebhookSignature` (same secrets, 300 s tolerance as
 *    cardgraph's default `WEBHOOK_TOLERANCE_S`; a failure answers 401);
 * 3. parses the UTF-8 JSON (400 when it is not);
 * 4. appends one row to node:sqlite in WAL mode with `synchronous=FULL`, the same group commit as
 *    cardgraph's sqlite event log (src/events/sqlite-event-log-writer.ts): one writer worker thread,
 *    every append that arrived before its `setImmediate` callback (and during the previous commit)
 *    in one `BEGIN IMMEDIATE … COMMIT`, no batch window, no batch size limit;
 * 5. answers 200 `{"data":{"id","status":"accepted"}}` only once that batch is committed (durable),
 *    or `duplicate` for a (tenant, id) already stored.
 * The row is the one cardgraph stores (same table shape and indexes, deduplicated by tenant and id),
 * so the ratio measures the receiver's path, not the schema; the floor stores the raw body where
 * cardgraph stores its mapped, redacted event, and does no mapping, redaction or fan-out.
 *
 * `POST /graphql` answers the bench's one-card query from a process cache of the upstream card (read
 * once, as cardgraph's card read cache does), for the query-stall probe that runs during ingest.
 *
 * Env: `DATA_DIR` (directory of `floor-events.sqlite`), `WEBHOOK_SECRETS` (comma-separated),
 * `UPSTREAM_URL`, `CLIENT_ID`, `CLIENT_SECRET`. Ready message over IPC: `{ url, dbFile }`.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { request } from 'undici';
import { verifyWebhookSignature } from '../../src/lib/webhook-signature.ts';
import { serveStats } from '../lib/child.ts';

/** The floor's table, as cardgraph's `card_events` (src/events/sqlite-event-log.ts). */
const TABLE = 'floor_events';

/** One append the main thread asks the writer for. */
type Append = {
  seq: number;
  id: string;
  tenant: string;
  cardId: string;
  type: string;
  timestampMs: number;
  receivedMs: number;
  body: string;
};
/** The writer's answer per append: stored, duplicate, or the commit's error. */
type Reply = { seq: number; status: 'accepted' | 'duplicate' } | { seq: number; error: string };

if (isMainThread) await main();
else writer();

async function main(): Promise<void> {
  const MAX_BODY_BYTES = 64 * 1024;
  const TOLERANCE_S = 300;
  const secrets = (process.env.WEBHOOK_SECRETS ?? '').split(',').filter(Boolean);
  if (secrets.length === 0) throw new Error('WEBHOOK_SECRETS is required');
  const dataDir = process.env.DATA_DIR!;
  mkdirSync(dataDir, { recursive: true });
  const dbFile = join(dataDir, 'floor-events.sqlite');
  const db = new DatabaseSync(dbFile);
  db.exec(`
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = FULL;
    CREATE TABLE IF NOT EXISTS ${TABLE} (
      position INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL,
      tenant TEXT NOT NULL,
      card_id TEXT NOT NULL,
      type TEXT NOT NULL,
      timestamp_ms INTEGER NOT NULL,
      received_ms INTEGER NOT NULL,
      out_of_order INTEGER NOT NULL,
      body TEXT NOT NULL,
      UNIQUE (tenant, id)
    );
    CREATE INDEX IF NOT EXISTS ${TABLE}_tenant_position ON ${TABLE} (tenant, position);
    CREATE INDEX IF NOT EXISTS ${TABLE}_tenant_timestamp ON ${TABLE} (tenant, timestamp_ms, position);
    CREATE INDEX IF NOT EXISTS ${TABLE}_subject_timestamp ON ${TABLE} (tenant, card_id, timestamp_ms);`);
  db.close();

  const worker = new Worker(new URL(import.meta.url), { workerData: { file: dbFile } });
  const waiting = new Map<number, (reply: Reply) => void>();
  let nextSeq = 1;
  worker.on('message', (replies: Reply[]) => {
    for (const reply of replies) {
      const resolve = waiting.get(reply.seq);
      waiting.delete(reply.seq);
      resolve?.(reply);
    }
  });
  worker.on('error', (error) => {
    process.stderr.write(`floor-ingest writer failed: ${error.message}\n`);
    process.exit(1);
  });
  const append = (row: Omit<Append, 'seq'>) =>
    new Promise<Reply>((resolve) => {
      const seq = nextSeq++;
      waiting.set(seq, resolve);
      worker.postMessage({ seq, ...row } satisfies Append);
    });

  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const sendJson = (res: ServerResponse, status: number, body: unknown) => {
    const json = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(json),
    });
    res.end(json);
  };
  const error = (res: ServerResponse, status: number, code: string) =>
    sendJson(res, status, { errors: [{ status: String(status), code }] });

  /** The raw body, or undefined when it passed the limit (the rest is discarded unread). */
  const readBody = (req: IncomingMessage) =>
    new Promise<Buffer | undefined>((resolve) => {
      if (Number(req.headers['content-length']) > MAX_BODY_BYTES) {
        req.resume();
        resolve(undefined);
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      });
      req.on('end', () => resolve(size <= MAX_BODY_BYTES ? Buffer.concat(chunks, size) : undefined));
      req.on('error', () => resolve(undefined));
    });

  const text = (value: unknown) => (typeof value === 'string' ? value : '');

  async function webhook(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    if (raw === undefined) return error(res, 413, 'payload-too-large');
    const header = req.headers['vgs-signature'];
    const verdict = verifyWebhookSignature(
      typeof header === 'string' ? header : undefined,
      raw,
      secrets,
      TOLERANCE_S,
      Math.floor(Date.now() / 1000),
    );
    if (!verdict.ok) return error(res, 401, verdict.reason);
    let body: string;
    let json: Record<string, unknown>;
    try {
      body = utf8.decode(raw);
      json = JSON.parse(body);
    } catch {
      return error(res, 400, 'malformed-json');
    }
    const details = (json?.details ?? {}) as Record<string, unknown>;
    const receivedMs = Date.now();
    const timestampMs = Date.parse(text(json?.timestamp));
    const reply = await append({
      id: text(json?.id),
      tenant: text(json?.tenant),
      cardId: text(details.card_id),
      type: text(json?.event),
      timestampMs: Number.isNaN(timestampMs) ? receivedMs : timestampMs,
      receivedMs,
      body,
    });
    if ('error' in reply) return error(res, 503, 'service-unavailable');
    sendJson(res, 200, { data: { id: text(json?.id), status: reply.status } });
  }

  // The probe's one-card query: the card read once from the upstream, then from this cache.
  const upstream = process.env.UPSTREAM_URL!;
  let cardAnswer: Promise<string> | undefined;
  const readCard = async (cardId: string): Promise<string> => {
    const basic = Buffer.from(`${process.env.CLIENT_ID}:${process.env.CLIENT_SECRET}`).toString('base64');
    const token = await request(`${upstream}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
      body: 'grant_type=client_credentials',
    });
    const { access_token: accessToken } = (await token.body.json()) as { access_token: string };
    const card = await request(`${upstream}/account-updater/cards/${cardId}`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    const { data } = (await card.body.json()) as { data: unknown };
    return JSON.stringify({ data: { accountUpdaterCard: { __typename: 'Success', data } } });
  };
  async function query(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    if (raw === undefined) return error(res, 413, 'payload-too-large');
    const { variables } = JSON.parse(raw.toString('utf8')) as { variables: { cardId: string } };
    cardAnswer ??= readCard(variables.cardId);
    const payload = await cardAnswer;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
    res.end(payload);
  }

  const server = createServer((req, res) => {
    const handler =
      req.method === 'POST' && req.url === '/webhooks/card-events'
        ? webhook
        : req.method === 'POST' && req.url === '/graphql'
          ? query
          : undefined;
    if (!handler) return error(res, 404, 'not-found');
    handler(req, res).catch((failure: unknown) => {
      process.stderr.write(`floor-ingest: ${(failure as Error).message}\n`);
      if (!res.headersSent) error(res, 500, 'server-error');
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => {
    serveStats({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, dbFile });
  });
  // A graceful stop lets the writer answer what it holds; every answered append is committed already.
  process.once('SIGTERM', () => {
    server.close();
    void worker.terminate().then(() => process.exit(0));
  });
}

/** The writer thread: group commit exactly as src/events/sqlite-event-log-writer.ts does it. */
function writer(): void {
  const port = parentPort!;
  const db = new DatabaseSync((workerData as { file: string }).file);
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;');
  const insert = db.prepare(`
    INSERT INTO ${TABLE} (id, tenant, card_id, type, timestamp_ms, received_ms, out_of_order, body)
    VALUES (?, ?, ?, ?, ?, ?, 0, ?)
    ON CONFLICT (tenant, id) DO NOTHING`);
  let queue: Append[] = [];
  let scheduled = false;
  const commitBatch = () => {
    scheduled = false;
    const batch = queue;
    queue = [];
    let replies: Reply[];
    try {
      db.exec('BEGIN IMMEDIATE');
      replies = batch.map((a) => {
        const { changes } = insert.run(a.id, a.tenant, a.cardId, a.type, a.timestampMs, a.receivedMs, a.body);
        return { seq: a.seq, status: Number(changes) === 1 ? 'accepted' : 'duplicate' };
      });
      db.exec('COMMIT');
    } catch (failure) {
      if (db.isTransaction) db.exec('ROLLBACK');
      replies = batch.map((a) => ({ seq: a.seq, error: (failure as Error).message }));
    }
    port.postMessage(replies);
  };
  port.on('message', (append: Append) => {
    queue.push(append);
    if (!scheduled) {
      scheduled = true;
      setImmediate(commitBatch);
    }
  });
}
