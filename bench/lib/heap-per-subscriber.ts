/**
 * What one idle subscriber costs the gateway, and of what: `node --expose-gc
 * bench/lib/heap-per-subscriber.ts <ws|sse|sse-stream|sse-single> [N]` starts the bench sandbox and a gateway in this
 * process, connects N subscribers of the bench subscription from bench/load/subscribers.ts, takes a
 * heap snapshot, connects N more, takes another, and prints the growth per subscriber (V8 heap used
 * + external after GC, and the snapshots' self sizes) with the object kinds that grew, largest first
 * (issue 21: "a heap snapshot diff of N vs 2N idle subscribers"). Snapshots go to the system's
 * temporary directory.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { pino } from 'pino';
import { issueDevToken } from '../../src/auth/issue-dev-token.ts';
import { UPSTREAM_SCOPES } from '../../src/auth/viewer.ts';
import { SUBSCRIPTION } from './notifications.ts';
import { startServer } from './processes.ts';

const snapshots = mkdtempSync(join(tmpdir(), 'heap-per-subscriber-'));
/**
 * `sse`: Yoga's SSE on `/graphql`; `sse-stream`: graphql-sse's distinct connections on
 * `/graphql/stream`; `sse-single`: its single-connection mode (one stream, one operation each).
 */
const mode = (process.argv[2] ?? 'ws') as 'ws' | 'sse' | 'sse-stream' | 'sse-single';
const N = Number(process.argv[3] ?? 1000);
const VAULT = 'tntsandbox1';
const JWT_SECRET = 'bench-jwt-secret-0123456789abcdef-0123456789';
const sandbox = await startServer('sandbox', 'sandbox.ts', {});
const u = sandbox.ready.url;
Object.assign(process.env, {
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  UPSTREAM: 'remote',
  CARD_INTERFACE_URL: `${u}/card-interface`,
  ACCOUNT_UPDATER_URL: `${u}/account-updater`,
  CARD_ATTRIBUTES_URL: `${u}/card-attributes`,
  ACCOUNTS_URL: `${u}/accounts`,
  TOKEN_URL: `${u}/oauth/token`,
  UPSTREAM_CREDENTIALS: `${VAULT}=sandbox-client-1:sandbox-secret-1`,
  WEBHOOK_SECRETS: 'whsec_bench_0123456789abcdef0123',
  AUTH_JWT_SECRET: JWT_SECRET,
  EVENTS_BACKEND: 'sqlite',
  DATA_DIR: mkdtempSync(join(tmpdir(), 'heapdiff-')),
  WS_CONNECTION_INIT_TIMEOUT_MS: '60000',
  METRICS_PORT: '0',
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: '1000000',
  // sse-single: every stream is the one bench client's, reserved 200 at a time.
  SSE_MAX_UNOPENED_STREAMS_PER_CLIENT: '1000',
});
const { buildApp } = await import('../../src/app.ts');
const { gatewayConfig, loadConfig } = await import('../../src/config/index.ts');
const app = buildApp(gatewayConfig(loadConfig()), { logDestination: pino.destination('/dev/null') });
const { url } = await app.start();
const token = await issueDevToken({
  secret: JWT_SECRET,
  subject: 'bench',
  vaults: [VAULT],
  scopes: UPSTREAM_SCOPES,
  expiresInS: 3600,
});
const load = fork(fileURLToPath(new URL('../load/subscribers.ts', import.meta.url)), {
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const next = (type: string) =>
  new Promise<unknown>((resolve) => {
    const on = (m: { type?: string }) => {
      if (m.type === type) {
        load.off('message', on);
        resolve(m);
      }
    };
    load.on('message', on);
  });
await next('ready');
const target =
  mode === 'ws'
    ? `${url.replace('http', 'ws')}/graphql`
    : mode === 'sse-single'
      ? `${url}/graphql/stream`
      : `${url}${mode === 'sse' ? '/graphql' : '/graphql/stream'}?query=${encodeURIComponent(SUBSCRIPTION)}`;
async function connect(total: number) {
  const done = next('connected');
  load.send({ type: 'connect', mode, count: N, url: target, token, query: SUBSCRIPTION });
  await done;
  while ((app.events?.subscriberCount() ?? 0) < total) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 500));
  globalThis.gc!();
  globalThis.gc!();
}
function summary(file: string) {
  const snap = JSON.parse(readFileSync(file, 'utf8'));
  const f = snap.snapshot.meta.node_fields as string[];
  const types = snap.snapshot.meta.node_types[0] as string[];
  const nodes = snap.nodes as number[];
  const strings = snap.strings as string[];
  const w = f.length,
    ti = f.indexOf('type'),
    ni = f.indexOf('name'),
    si = f.indexOf('self_size');
  const agg = new Map<string, { n: number; b: number }>();
  let total = 0;
  for (let i = 0; i < nodes.length; i += w) {
    const t = types[nodes[i + ti]!]!;
    let name = strings[nodes[i + ni]!]!;
    if (t === 'string' || t === 'concatenated string' || t === 'sliced string') name = '';
    if (t === 'code' || t === 'hidden') name = name.slice(0, 40);
    const k = `${t}:${name.slice(0, 60)}`;
    const e = agg.get(k) ?? { n: 0, b: 0 };
    e.n++;
    e.b += nodes[i + si]!;
    total += nodes[i + si]!;
    agg.set(k, e);
  }
  return { agg, total };
}
await connect(N);
const a = v8.writeHeapSnapshot(join(snapshots, 'a.heapsnapshot'));
const memA = process.memoryUsage();
await connect(2 * N);
const memB = process.memoryUsage();
const b = v8.writeHeapSnapshot(join(snapshots, 'b.heapsnapshot'));
const A = summary(a),
  B = summary(b);
console.log(
  `mode ${mode} N ${N}: snapshot self bytes per subscriber ${((B.total - A.total) / N).toFixed(0)}; heapUsed+external ${((memB.heapUsed + memB.external - memA.heapUsed - memA.external) / N).toFixed(0)}`,
);
const rows = [...B.agg]
  .map(([k, e]) => {
    const o = A.agg.get(k) ?? { n: 0, b: 0 };
    return { k, dn: (e.n - o.n) / N, db: (e.b - o.b) / N };
  })
  .filter((r) => Math.abs(r.db) > 8)
  .sort((x, y) => y.db - x.db);
for (const r of rows.slice(0, 60)) console.log(r.db.toFixed(0).padStart(6), r.dn.toFixed(2).padStart(6), r.k);
load.send({ type: 'close' });
await app.stop();
await sandbox.stop('SIGKILL');
process.exit(0);
