/**
 * `npm run bench`: cardgraph side by side with the floor servers and Hive Gateway, on one shared
 * sandbox upstream, in one run (issue 13). Every server runs in its own process (bench/servers);
 * HTTP load comes from autocannon, subscribers from their own process (bench/load/subscribers.ts).
 *
 * Measures (rounds interleaved: every round runs each server once, in turn):
 * - query: req/s, latency p50/p99 (ms), server CPU per request (µs, `process.cpuUsage` of the
 *   server process) and upstream calls per request (the sandbox's request counter) for a one-card
 *   query and a joined query (card + attributes + network token); cardgraph logs as in production
 *   (`LOG_LEVEL=info`, one access line per request, written by pino to /dev/null);
 * - fan-out: idle memory per subscriber (bytes, RSS and heap growth after GC) and delivery latency
 *   p50/p99 (ms, receive time minus the event's timestamp) at each subscriber count over graphql-ws,
 *   and over SSE, with deliveries lost;
 * - ingest: acknowledged signed webhooks per second on sqlite and on Redis at concurrency 10 and
 *   50, every acknowledged id checked in the log afterwards, the worst query latency meanwhile; on
 *   sqlite side by side with the ingest floor (bench/servers/floor-ingest.ts, issue 21 item 4),
 *   rounds interleaved, its acknowledged ids checked in its own database, cardgraph's rate and CPU
 *   per acknowledged notification as ratios to the floor's;
 * - history: a 100-event page with `retained` events in the log, first page and a deep page;
 * - cold start: fork to listening (ms), the median of 5 forks with and without Node's compile cache
 *   (bench/lib/cold-start.ts; --quick: the one fork each server made at setup).
 * Prints a table of ratios and writes the JSON to `--out` (bench/results/latest.json).
 *
 * Flags: `--quick` (seconds; the test suite runs it so the bench cannot rot), `--no-hive`,
 * `--out <file>`, `--only query,fanout,ingest,history` (a subset of the measures; the others are
 * left out of the table; cold starts run in every full run, so `--only coldstart` runs them alone
 * after the setup, about 40 s with `--no-hive`), `--subscribers 10000` (graphql-ws subscriber counts, comma-separated), `--sse-subscribers 4000` (SSE streams),
 * `--backends sqlite,redis` (ingest and history backends), `--queries-only` (the query measures
 * alone, written to bench/results/queries.json), `--compare-yoga` (adds cardgraph with the lean GraphQL path off, `cardgraph-yoga`, to the query
 * rounds), `--compare-jit` (adds cardgraph with queries on graphql-js,
 * `cardgraph-graphql-js`), `--rounds <n>`, `--seconds <n>` (of each query run), `--cpu-prof` (V8 CPU profiles of the
 * cardgraph processes in bench/results/cpu-profiles), `--ingest-rounds <n>`, `--ingest-seconds <n>`,
 * `--ingest-concurrency 10,50` (the ingest runs).
 */
import { execFileSync, fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { pino } from 'pino';
import { request } from 'undici';
import { issueDevToken } from '../src/auth/issue-dev-token.ts';
import { UPSTREAM_SCOPES } from '../src/auth/viewer.ts';
import { createRedisEventLog } from '../src/events/redis-event-log.ts';
import { createSqliteEventLog } from '../src/events/sqlite-event-log.ts';
import { startRedisServer } from '../test/support/redis-server.ts';
import { type ColdStart, measureColdStart } from './lib/cold-start.ts';
import { benchCardId, floorEvent, SUBSCRIPTION, signedCardNotification } from './lib/notifications.ts';
import { type ServerProcess, startServer } from './lib/processes.ts';
import { type LoadResult, reportQueries } from './lib/query-report.ts';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'no-hive': { type: 'boolean', default: false },
    out: { type: 'string' },
    only: { type: 'string', default: 'query,fanout,ingest,history' },
    subscribers: { type: 'string' },
    'sse-subscribers': { type: 'string' },
    backends: { type: 'string', default: 'sqlite,redis' },
    'queries-only': { type: 'boolean', default: false },
    'compare-yoga': { type: 'boolean', default: false },
    'compare-jit': { type: 'boolean', default: false },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'ingest-rounds': { type: 'string' },
    'ingest-seconds': { type: 'string' },
    'ingest-concurrency': { type: 'string' },
  },
});
if (flags['cpu-prof']) {
  process.env.BENCH_CPU_PROF_DIR = fileURLToPath(new URL('./results/cpu-profiles', import.meta.url));
}
const ONLY = new Set(flags.only.split(','));
const BACKENDS = flags.backends.split(',') as ('sqlite' | 'redis')[];
const QUICK = flags.quick;
const OUT =
  flags.out ??
  fileURLToPath(
    new URL(
      flags['queries-only']
        ? './results/queries.json'
        : QUICK
          ? './results/quick.json'
          : './results/latest.json',
      import.meta.url,
    ),
  );
// --quick checks that every measure runs and loses nothing, not its figures: half-second runs.
const PLAN = QUICK
  ? {
      durationS: 0.5,
      rounds: 1,
      connections: 10,
      subscriberCounts: [50],
      sseSubscribers: 20,
      events: 3,
      eventGapMs: 50,
      settleMs: 100,
      ingestS: 0.5,
      ingestConcurrency: [10],
      ingestRounds: 1,
      retained: 120,
      historyS: 0.25,
      sampleIntMs: 250,
    }
  : {
      durationS: 8,
      rounds: 3,
      connections: 20,
      subscriberCounts: [1_000, 5_000, 10_000],
      sseSubscribers: 1_000,
      events: 20,
      eventGapMs: 500,
      /** After every subscription is registered, before the memory reading (ms). */
      settleMs: 500,
      ingestS: 8,
      ingestConcurrency: [10, 50],
      ingestRounds: 3,
      retained: 100_000,
      /** Each timed history page run (s). */
      historyS: 3,
      /** autocannon's sampling interval (ms, its default): a timed run ends on a sample, so no sooner. */
      sampleIntMs: 1_000,
    };
if (flags.subscribers) PLAN.subscriberCounts = flags.subscribers.split(',').map(Number);
// `--sse-subscribers <n>`: the SSE rows' stream count (1,000 in a full run); a graphql-ws count of the
// same size (`--subscribers`) gives their p99 its reference.
if (flags['sse-subscribers']) PLAN.sseSubscribers = Number(flags['sse-subscribers']);
// `--rounds <n>` and `--seconds <n>` change the query rounds (for A/B runs of the query side).
if (flags.rounds) PLAN.rounds = Number(flags.rounds);
if (flags.seconds) PLAN.durationS = Number(flags.seconds);
// `--ingest-rounds <n>`, `--ingest-seconds <n>`, `--ingest-concurrency 10,50` change the ingest runs.
if (flags['ingest-rounds']) PLAN.ingestRounds = Number(flags['ingest-rounds']);
if (flags['ingest-seconds']) PLAN.ingestS = Number(flags['ingest-seconds']);
if (flags['ingest-concurrency']) PLAN.ingestConcurrency = flags['ingest-concurrency'].split(',').map(Number);
const VAULT = 'tntsandbox1';
const CLIENT = { id: 'sandbox-client-1', secret: 'sandbox-secret-1' };
const WEBHOOK_SECRET = 'whsec_bench_0123456789abcdef0123';
const JWT_SECRET = 'bench-jwt-secret-0123456789abcdef-0123456789';

const log = (message: string) =>
  process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1)} s] ${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function median(values: number[]): number {
  return percentile(values, 50);
}

// ---------------------------------------------------------------------------------------------
// Setup: sandbox, one enrolled card with a network token, the servers.

const started = performance.now();
const sandbox = await startServer('sandbox', 'sandbox.ts', {});
const upstreamUrl = sandbox.ready.url;
const upstreamToken = await sandboxToken();
const card = await enrolCard();
log(`sandbox at ${upstreamUrl}, card ${card.id}`);

const clientToken = await issueDevToken({
  secret: JWT_SECRET,
  subject: 'bench',
  vaults: [VAULT],
  scopes: UPSTREAM_SCOPES,
  expiresInS: 6 * 3600,
});

const dataRoot = mkdtempSync(join(tmpdir(), 'cardgraph-bench-'));
// The gateway as the Docker image runs it: the production build (scripts/build.ts), made here in a
// directory of this run inside the repository, where the packages it leaves to node_modules resolve.
const buildDir = fileURLToPath(new URL(`../.build/bench-${process.pid}`, import.meta.url));
log('building the gateway (scripts/build.ts)');
execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build.ts', import.meta.url)), buildDir], {
  stdio: 'inherit',
});
process.once('exit', () => rmSync(buildDir, { recursive: true, force: true }));
let dataDirs = 0;
function cardgraphEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    CARDGRAPH_BUILD_DIR: buildDir,
    // As in production: info, so every request writes its access line (bench/servers/cardgraph.ts
    // sends the lines through a pino destination to /dev/null; their building and serialization count).
    LOG_LEVEL: 'info',
    UPSTREAM: 'remote',
    CARD_INTERFACE_URL: `${upstreamUrl}/card-interface`,
    ACCOUNT_UPDATER_URL: `${upstreamUrl}/account-updater`,
    CARD_ATTRIBUTES_URL: `${upstreamUrl}/card-attributes`,
    ACCOUNTS_URL: `${upstreamUrl}/accounts`,
    TOKEN_URL: `${upstreamUrl}/oauth/token`,
    UPSTREAM_CREDENTIALS: `${VAULT}=${CLIENT.id}:${CLIENT.secret}`,
    WEBHOOK_SECRETS: WEBHOOK_SECRET,
    AUTH_JWT_SECRET: JWT_SECRET,
    EVENTS_BACKEND: 'sqlite',
    DATA_DIR: join(dataRoot, `data-${dataDirs++}`),
    EVENTS_RETENTION_COUNT: String(Math.max(200_000, PLAN.retained * 2)),
    WS_CONNECTION_INIT_TIMEOUT_MS: '60000',
    // Several gateways run at once: each takes a free metrics port.
    METRICS_PORT: '0',
    // Every load generator and subscriber connects from 127.0.0.1.
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: '1000000',
    ...extra,
  };
}
const floorEnv = { UPSTREAM_URL: upstreamUrl, CLIENT_ID: CLIENT.id, CLIENT_SECRET: CLIENT.secret };

// ---------------------------------------------------------------------------------------------
// Cold start, fork to listening (issue 21 item 2): the median of COLD_START_FORKS forks each of
// cardgraph and the floor, one at a time with only the idle sandbox running, with Node's compile
// cache (as the Docker image runs, see bench/lib/cold-start.ts) and without it. --quick keeps the
// single fork each server made at setup. Hive Gateway's figure is its setup fork (no compile cache).
// Measured first, before any load: after minutes of query and fan-out load this 2-core VM started
// the bare floor itself 40% slower (432 ms against 312 ms quiet), which no gateway change explains.
const COLD_START_FORKS = 5;
const coldStarts: Record<string, ColdStart> = {};
if (!QUICK) {
  const cacheRoot = join(dataRoot, 'node-compile-cache');
  for (const [name, script, env] of [
    ['cardgraph', 'cardgraph.ts', () => cardgraphEnv()],
    ['floor', 'floor-http.ts', () => floorEnv],
  ] as const) {
    log(`cold start: ${name}, ${COLD_START_FORKS} forks without and with the compile cache`);
    coldStarts[`${name}-no-compile-cache`] = await measureColdStart(name, script, env, {
      forks: COLD_START_FORKS,
    });
    coldStarts[name] = await measureColdStart(name, script, env, {
      forks: COLD_START_FORKS,
      compileCacheDir: join(cacheRoot, name),
    });
  }
}
// Cold starts are measured one at a time, except in --quick mode where time matters more.
const startHive = async (): Promise<ServerProcess | string> => {
  if (flags['no-hive'] || !ONLY.has('query')) return 'skipped (--no-hive)';
  try {
    return await startServer('hive-gateway', 'hive-gateway.ts', floorEnv, 120_000);
  } catch (error) {
    log(`Hive Gateway unavailable: ${(error as Error).message}`);
    return (error as Error).message;
  }
};
const startCardgraph = () => startServer('cardgraph', 'cardgraph.ts', cardgraphEnv());
const startFloor = () => startServer('floor', 'floor-http.ts', floorEnv);
const [cardgraph, floor, hiveOrReason] = QUICK
  ? await Promise.all([startCardgraph(), startFloor(), startHive()])
  : [await startCardgraph(), await startFloor(), await startHive()];
const hive = typeof hiveOrReason === 'string' ? undefined : hiveOrReason;
const variants = [
  ...(flags['compare-yoga'] ? [['cardgraph-yoga', { GRAPHQL_LEAN_HTTP: 'off' }] as const] : []),
  ...(flags['compare-jit'] ? [['cardgraph-graphql-js', { GRAPHQL_JIT: 'off' }] as const] : []),
];
const cardgraphVariants: ServerProcess[] = [];
for (const [name, env] of variants) {
  cardgraphVariants.push(await startServer(name, 'cardgraph.ts', cardgraphEnv(env)));
}
const hiveUnavailable = typeof hiveOrReason === 'string' ? hiveOrReason : undefined;
await provisionNetworkToken();

// ---------------------------------------------------------------------------------------------
// Query throughput.

const CARDGRAPH_QUERIES = {
  oneCard: `query OneCard($cardId: String!) { accountUpdaterCard(cardId: $cardId) { __typename
    ... on QueryAccountUpdaterCardSuccess { data { cardId name number expMonth expYear state capabilities } }
    ... on Error { code message } } }`,
  joined: `query Joined($cardId: String!) { accountUpdaterCard(cardId: $cardId) { __typename
    ... on QueryAccountUpdaterCardSuccess { data { cardId name number expMonth expYear state capabilities
      attributes { brand cardType issuingCountryCode } networkToken { state usable networkTokenLast4 expiresAt } } }
    ... on Error { code message } } }`,
};
// Hive Gateway over the OpenAPI source has no joins: the joined query asks the three operations
// side by side with the alias and BIN the client already knows (the most favourable form for it).
// The success member of each result union is found by introspection (its name follows the document).
const HIVE_QUERIES = hive ? await hiveQueries(hive) : { oneCard: '', joined: '' };
type QueryName = keyof typeof CARDGRAPH_QUERIES;

function queryBody(target: string, name: QueryName): string {
  if (target === 'floor') {
    return JSON.stringify({
      operationName: name === 'oneCard' ? 'OneCard' : 'Joined',
      variables: { cardId: card.id },
    });
  }
  const query = target === 'hive-gateway' ? HIVE_QUERIES[name] : CARDGRAPH_QUERIES[name];
  return JSON.stringify({
    query,
    variables: {
      cardId: card.id,
      ...(target === 'hive-gateway' && name === 'joined' ? { alias: card.number } : {}),
    },
  });
}

async function postGraphql(server: ServerProcess, body: string): Promise<{ status: number; text: string }> {
  const response = await request(`${server.ready.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${clientToken}` },
    body,
  });
  return { status: response.statusCode, text: await response.body.text() };
}

async function measureQuery(server: ServerProcess, name: QueryName): Promise<LoadResult> {
  const body = queryBody(server.name, name);
  const check = await postGraphql(server, body);
  if (check.status !== 200 || check.text.includes('"errors"') || !check.text.includes(card.id.slice(3))) {
    throw new Error(`${server.name} ${name} answered ${check.status}: ${check.text.slice(0, 500)}`);
  }
  const [before, upstreamBefore] = await Promise.all([server.stats(), sandbox.stats()]);
  const result = await autocannon({
    url: `${server.ready.url}/graphql`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${clientToken}` },
    body,
    connections: PLAN.connections,
    duration: PLAN.durationS,
    sampleInt: PLAN.sampleIntMs,
  });
  const [after, upstreamAfter] = await Promise.all([server.stats(), sandbox.stats()]);
  const total = result.requests.total;
  return {
    requestsPerSecond: Math.round(total / PLAN.durationS),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    cpuUsPerRequest: Math.round((after.cpuUs - before.cpuUs) / total),
    upstreamCallsPerRequest:
      Math.round((((upstreamAfter.requests ?? 0) - (upstreamBefore.requests ?? 0)) / total) * 1000) / 1000,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

const queryTargets = [cardgraph, ...cardgraphVariants, floor, ...(hive ? [hive] : [])];
const queryRuns: Record<QueryName, Record<string, LoadResult[]>> = { oneCard: {}, joined: {} };
for (const name of ONLY.has('query') ? (['oneCard', 'joined'] as const) : []) {
  for (let round = 0; round < PLAN.rounds; round++) {
    for (const server of queryTargets) {
      log(`query ${name} round ${round + 1}/${PLAN.rounds}: ${server.name}`);
      const runs = queryRuns[name][server.name] ?? [];
      queryRuns[name][server.name] = runs;
      runs.push(await measureQuery(server, name));
    }
  }
}
/** Per server, the median of each figure over the rounds. */
function summarize(runs: LoadResult[]): LoadResult & { rounds: number[] } {
  const pick = (key: keyof LoadResult) => median(runs.map((run) => run[key]));
  return {
    requestsPerSecond: pick('requestsPerSecond'),
    p50Ms: pick('p50Ms'),
    p99Ms: pick('p99Ms'),
    maxMs: Math.max(...runs.map((run) => run.maxMs)),
    cpuUsPerRequest: pick('cpuUsPerRequest'),
    upstreamCallsPerRequest: pick('upstreamCallsPerRequest'),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    rounds: runs.map((run) => run.requestsPerSecond),
  };
}
const queries = Object.fromEntries(
  Object.entries(queryRuns).map(([name, byServer]) => [
    name,
    Object.fromEntries(Object.entries(byServer).map(([server, runs]) => [server, summarize(runs)])),
  ]),
) as Record<QueryName, Record<string, ReturnType<typeof summarize>>>;

if (flags['queries-only']) {
  await reportQueries({ out: OUT, plan: PLAN, queries, started, hive: Boolean(hive) });
  await Promise.all([cardgraph, ...cardgraphVariants, floor, hive, sandbox].map((server) => server?.stop()));
  process.exit(0);
}
await Promise.all(cardgraphVariants.map((server) => server.stop('SIGKILL')));

// ---------------------------------------------------------------------------------------------
// Fan-out: graphql-ws at each subscriber count, then SSE.

const floorWs = await startServer('floor-ws', 'floor-ws.ts', {});

interface FanOutResult {
  subscribers: number;
  connectFailures: number;
  rssBytesPerSubscriber: number;
  heapBytesPerSubscriber: number;
  deliveries: number;
  lost: number;
  deliveryP50Ms: number;
  deliveryP99Ms: number;
  deliveryMaxMs: number;
  /** Server CPU time (µs, user + system) from the first event until every delivery arrived, per delivery. */
  cpuUsPerDelivery: number;
  closeCodes: Record<string, number>;
}

type SubscriberReport = {
  latenciesMs: number[];
  perCard: Record<string, number>;
  closeCodes: Record<string, number>;
};

async function measureFanOut(
  server: ServerProcess,
  mode: 'ws' | 'sse' | 'sse-stream',
  count: number,
): Promise<FanOutResult> {
  const isFloor = server.name === 'floor-ws';
  const load = fork(fileURLToPath(new URL('./load/subscribers.ts', import.meta.url)), {
    execArgv: ['--disable-warning=ExperimentalWarning'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const nextMessage = <T>(type: string) =>
    new Promise<T>((resolve) => {
      const onMessage = (message: { type: string }) => {
        if (message.type !== type) return;
        load.off('message', onMessage);
        resolve(message as T);
      };
      load.on('message', onMessage);
    });
  await nextMessage('ready');
  const idle = await server.stats(true);
  const url =
    mode === 'ws'
      ? `${server.ready.url.replace('http', 'ws')}/graphql`
      : isFloor
        ? `${server.ready.url}/sse`
        : // sse: Yoga's SSE on /graphql; sse-stream: graphql-sse's distinct connections (same wire).
          `${server.ready.url}${mode === 'sse' ? '/graphql' : '/graphql/stream'}?query=${encodeURIComponent(SUBSCRIPTION)}`;
  const connected = nextMessage<{ failed: number }>('connected');
  load.send({ type: 'connect', mode, count, url, token: clientToken, query: SUBSCRIPTION });
  const { failed } = await connected;
  // Subscriptions are registered a moment after the socket answers; wait for all of them.
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && ((await server.stats()).subscribers ?? 0) < count - failed)
    await sleep(100);
  await sleep(PLAN.settleMs);
  const subscribed = await server.stats(true);

  const cpuBefore = (await server.stats()).cpuUs;
  const cardIds: string[] = [];
  for (let i = 0; i < PLAN.events; i++) {
    const cardId = benchCardId();
    cardIds.push(cardId);
    if (isFloor) {
      const response = await request(`${server.ready.url}/publish`, {
        method: 'POST',
        body: floorEvent(cardId),
      });
      await response.body.dump();
    } else {
      const notification = signedCardNotification(VAULT, cardId, WEBHOOK_SECRET);
      const response = await request(`${server.ready.url}/webhooks/card-events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'vgs-signature': notification.signature },
        body: notification.body,
      });
      await response.body.dump();
      if (response.statusCode >= 300) throw new Error(`webhook answered ${response.statusCode}`);
    }
    await sleep(PLAN.eventGapMs);
  }
  // Collect until every delivery arrived or 30 s passed.
  const expected = (count - failed) * PLAN.events;
  const reports: SubscriberReport[] = [];
  let received = 0;
  const collectUntil = Date.now() + 30_000;
  while (Date.now() < collectUntil) {
    const report = nextMessage<SubscriberReport>('report');
    load.send({ type: 'report' });
    const part = await report;
    reports.push(part);
    received += part.latenciesMs.length;
    if (received >= expected) break;
    await sleep(250);
  }
  const finalReport = nextMessage<SubscriberReport>('report');
  load.send({ type: 'report' });
  reports.push(await finalReport);
  const cpuAfter = (await server.stats()).cpuUs;
  load.send({ type: 'close' });
  const latencies = reports.flatMap((report) => report.latenciesMs);
  const perCard = new Map<string, number>();
  const closeCodes: Record<string, number> = {};
  for (const report of reports) {
    for (const [id, n] of Object.entries(report.perCard)) perCard.set(id, (perCard.get(id) ?? 0) + n);
    for (const [code, n] of Object.entries(report.closeCodes)) closeCodes[code] = (closeCodes[code] ?? 0) + n;
  }
  const lost = cardIds.reduce((sum, id) => sum + Math.max(0, count - failed - (perCard.get(id) ?? 0)), 0);
  // Let the server notice the closed sockets before the next measurement.
  const closedBy = Date.now() + 15_000;
  while (Date.now() < closedBy && ((await server.stats()).subscribers ?? 0) > 0) await sleep(100);
  return {
    subscribers: count,
    connectFailures: failed,
    rssBytesPerSubscriber: Math.round((subscribed.rss - idle.rss) / Math.max(1, count - failed)),
    heapBytesPerSubscriber: Math.round(
      (subscribed.heapUsed + subscribed.external - idle.heapUsed - idle.external) /
        Math.max(1, count - failed),
    ),
    deliveries: latencies.length,
    lost,
    deliveryP50Ms: percentile(latencies, 50),
    deliveryP99Ms: percentile(latencies, 99),
    deliveryMaxMs: latencies.length ? latencies.reduce((max, x) => (x > max ? x : max), 0) : Number.NaN,
    cpuUsPerDelivery:
      latencies.length > 0 ? Math.round(((cpuAfter - cpuBefore) / latencies.length) * 100) / 100 : Number.NaN,
    closeCodes,
  };
}

const fanOut: Record<string, Record<string, FanOutResult>> = {};
const fanOutCases = ONLY.has('fanout')
  ? [
      ...PLAN.subscriberCounts.map((count) => ({ mode: 'ws' as const, count })),
      { mode: 'sse' as const, count: PLAN.sseSubscribers },
      // graphql-sse's distinct-connections mode on /graphql/stream beside Yoga's SSE (issue 21 item 1).
      { mode: 'sse-stream' as const, count: PLAN.sseSubscribers },
    ]
  : [];
for (const { mode, count } of fanOutCases) {
  const byServer: Record<string, FanOutResult> = {};
  fanOut[`${mode}-${count}`] = byServer;
  for (const server of [cardgraph, floorWs]) {
    log(`fan-out ${mode} ${count} subscribers: ${server.name}`);
    byServer[server.name === 'floor-ws' ? 'floor' : 'cardgraph'] = await measureFanOut(server, mode, count);
  }
}
log('stopping the query and fan-out servers');
await floorWs.stop('SIGKILL');
// Their state is not needed any more: no graceful shutdown to wait for.
await Promise.all([cardgraph.stop('SIGKILL'), floor.stop('SIGKILL'), hive?.stop('SIGKILL')]);

const coldStartMs = {
  sandbox: Math.round(sandbox.startMs),
  cardgraph: coldStarts.cardgraph?.medianMs ?? Math.round(cardgraph.startMs),
  floor: coldStarts.floor?.medianMs ?? Math.round(floor.startMs),
  ...(hive ? { 'hive-gateway': Math.round(hive.startMs) } : {}),
  ...(QUICK
    ? {}
    : {
        'cardgraph-no-compile-cache': coldStarts['cardgraph-no-compile-cache']!.medianMs,
        'floor-no-compile-cache': coldStarts['floor-no-compile-cache']!.medianMs,
      }),
};

// ---------------------------------------------------------------------------------------------
// Webhook ingest and history, per backend.

interface IngestResult {
  concurrency: number;
  /** Median over the rounds (`--ingest-rounds`) of acknowledged notifications per second. */
  acknowledgedPerSecond: number;
  /** Acknowledged notifications, all rounds. */
  acknowledged: number;
  refused: number;
  missingFromLog: number;
  /** Worst round's acknowledgement latency p99, ms. */
  ackP99Ms: number;
  /**
   * CPU time (µs, all threads of the server process: event loop and sqlite writer) per acknowledged
   * notification over all rounds, the 100 probe queries per second included: steadier than the rate
   * on a shared machine, where the load generator competes for the same two cores.
   */
  cpuUsPerAcknowledged: number;
  /** Worst round's probe query latency p99, ms. */
  queryDuringIngestP99Ms: number;
  /** Slowest probe query of all rounds (the stall), ms. */
  queryDuringIngestMaxMs: number;
  /** Acknowledged per second of each round, in order. */
  rounds: number[];
  /** Slowest probe query of each round, in order, ms. */
  queryDuringIngestMaxMsRounds: number[];
}

/** cardgraph against the ingest floor at one concurrency (sqlite; issue 21 item 4). */
interface IngestVsFloor {
  concurrency: number;
  /** cardgraph's acknowledged/s ÷ the floor's (medians over the interleaved rounds). */
  throughputRatio: number;
  /** cardgraph's CPU µs per acknowledged notification ÷ the floor's. */
  cpuRatio: number;
}

/** Event timestamps (ms) of acknowledged notifications, in acknowledgement order (deep history cursors). */
const ackedTimestamps: number[] = [];

/**
 * Signed notifications at `concurrency` to `server` for `PLAN.ingestS` (or `amount` of them); the ids
 * of the 2xx answers go to `acked` (and their timestamps to `timestamps` when given).
 */
async function ingest(
  server: ServerProcess,
  concurrency: number,
  acked: string[],
  amount?: number,
  timestamps: number[] | undefined = ackedTimestamps,
) {
  let refused = 0;
  const run = autocannon({
    url: server.ready.url,
    connections: concurrency,
    ...(amount !== undefined ? { amount } : { duration: PLAN.ingestS }),
    sampleInt: PLAN.sampleIntMs,
    requests: [
      {
        method: 'POST',
        path: '/webhooks/card-events',
        setupRequest: (req, context) => {
          const cardId = benchCardId();
          const notification = signedCardNotification(VAULT, cardId, WEBHOOK_SECRET);
          Object.assign(context, { id: notification.id, timestampMs: notification.timestampMs });
          return {
            ...req,
            headers: { 'content-type': 'application/json', 'vgs-signature': notification.signature },
            body: notification.body,
          };
        },
        onResponse: (status, _body, context) => {
          if (status >= 200 && status < 300) {
            acked.push((context as { id: string }).id);
            timestamps?.push((context as { timestampMs: number }).timestampMs);
          } else refused++;
        },
      },
    ],
  });
  return { run, refused: () => refused };
}

/**
 * One ingest round on `server` at `concurrency`, with a client querying meanwhile (100 one-card
 * queries per second: its slowest answer is the stall).
 */
async function ingestRound(server: ServerProcess, concurrency: number, acked: string[], isFloor: boolean) {
  const probe = autocannon({
    url: `${server.ready.url}/graphql`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${clientToken}` },
    body: queryBody('cardgraph', 'oneCard'),
    connections: 1,
    overallRate: 100,
    duration: PLAN.ingestS,
    sampleInt: PLAN.sampleIntMs,
  });
  const before = await server.stats();
  const roundAcked: string[] = [];
  const { run, refused } = await ingest(
    server,
    concurrency,
    roundAcked,
    undefined,
    isFloor ? undefined : ackedTimestamps,
  );
  const [result, probeResult] = await Promise.all([run, probe]);
  const after = await server.stats();
  acked.push(...roundAcked);
  return {
    acknowledged: roundAcked.length,
    refused: refused(),
    cpuUs: after.cpuUs - before.cpuUs,
    ackP99Ms: result.latency.p99,
    probeP99Ms: probeResult.latency.p99,
    probeMaxMs: probeResult.latency.max,
  };
}

/** The rounds of one server at one concurrency as one {@link IngestResult} (missing counts filled later). */
function ingestResultOf(
  concurrency: number,
  rounds: Awaited<ReturnType<typeof ingestRound>>[],
): IngestResult {
  const acknowledged = rounds.reduce((sum, r) => sum + r.acknowledged, 0);
  const perSecond = rounds.map((r) => Math.round(r.acknowledged / PLAN.ingestS));
  return {
    concurrency,
    acknowledgedPerSecond: Math.round(median(perSecond)),
    acknowledged,
    refused: rounds.reduce((sum, r) => sum + r.refused, 0),
    missingFromLog: Number.NaN,
    ackP99Ms: Math.max(...rounds.map((r) => r.ackP99Ms)),
    cpuUsPerAcknowledged: Math.round(rounds.reduce((sum, r) => sum + r.cpuUs, 0) / Math.max(1, acknowledged)),
    queryDuringIngestP99Ms: Math.max(...rounds.map((r) => r.probeP99Ms)),
    queryDuringIngestMaxMs: Math.max(...rounds.map((r) => r.probeMaxMs)),
    rounds: perSecond,
    queryDuringIngestMaxMsRounds: rounds.map((r) => r.probeMaxMs),
  };
}

/** How many of `ids` the ingest floor's database file does not hold. */
function missingFromFloorDb(dbFile: string, ids: string[]): number {
  const db = new DatabaseSync(dbFile);
  const find = db.prepare('SELECT 1 AS found FROM floor_events WHERE tenant = ? AND id = ?');
  const missing = ids.filter((id) => find.get(VAULT, id) === undefined).length;
  db.close();
  return missing;
}

async function measureIngest(backend: 'sqlite' | 'redis', redisUrl?: string) {
  const env = cardgraphEnv({
    EVENTS_BACKEND: backend,
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    // Interleaved rounds can acknowledge more than the default count limit: retention would then
    // drop acknowledged events before they are checked.
    EVENTS_RETENTION_COUNT: '10000000',
  });
  // The ingest floor runs beside cardgraph on sqlite (the backend it replicates), rounds interleaved;
  // both start at once (their start times are not measured here).
  const [server, floorIngest] = await Promise.all([
    startServer(`cardgraph-${backend}`, 'cardgraph.ts', env),
    backend === 'sqlite' && ONLY.has('ingest')
      ? startServer('floor-ingest', 'floor-ingest.ts', {
          ...floorEnv,
          DATA_DIR: join(dataRoot, `data-${dataDirs++}`),
          WEBHOOK_SECRETS: WEBHOOK_SECRET,
        })
      : undefined,
  ]);
  const results: IngestResult[] = [];
  const floorResults: IngestResult[] = [];
  const allAcked: string[] = [];
  const floorAcked: string[] = [];
  // The probe's first query fills the card read cache and compiles the query path: not a stall.
  for (const target of [server, ...(floorIngest ? [floorIngest] : [])]) {
    const warmUp = await postGraphql(target, queryBody('cardgraph', 'oneCard'));
    if (warmUp.status !== 200) throw new Error(`${target.name} answered ${warmUp.status}`);
  }
  for (const concurrency of ONLY.has('ingest') ? PLAN.ingestConcurrency : []) {
    const rounds: Awaited<ReturnType<typeof ingestRound>>[] = [];
    const floorRounds: typeof rounds = [];
    for (let round = 0; round < PLAN.ingestRounds; round++) {
      log(
        `ingest ${backend} concurrency ${concurrency} round ${round + 1}/${PLAN.ingestRounds}: ${server.name}`,
      );
      rounds.push(await ingestRound(server, concurrency, allAcked, false));
      if (floorIngest) {
        log(`ingest ${backend} concurrency ${concurrency} round ${round + 1}/${PLAN.ingestRounds}: floor`);
        floorRounds.push(await ingestRound(floorIngest, concurrency, floorAcked, true));
      }
    }
    results.push(ingestResultOf(concurrency, rounds));
    if (floorIngest) floorResults.push(ingestResultOf(concurrency, floorRounds));
  }
  let floorMissing = Number.NaN;
  if (floorIngest) {
    await floorIngest.stop();
    floorMissing = missingFromFloorDb(String(floorIngest.ready.dbFile), floorAcked);
    for (const result of floorResults) result.missingFromLog = floorMissing;
  }
  const vsFloor: IngestVsFloor[] = floorResults.map((floorResult, i) => ({
    concurrency: floorResult.concurrency,
    throughputRatio: results[i]!.acknowledgedPerSecond / floorResult.acknowledgedPerSecond,
    cpuRatio: results[i]!.cpuUsPerAcknowledged / floorResult.cpuUsPerAcknowledged,
  }));
  // History with `retained` events in the log.
  const seed = ONLY.has('history') ? PLAN.retained - allAcked.length : 0;
  if (seed > 0) {
    log(`history ${backend}: filling the log to ${PLAN.retained} events (at most 2 minutes)`);
    // autocannon refuses an amount smaller than its connection count.
    const { run } = await ingest(server, Math.min(50, seed), allAcked, seed);
    // autocannon returns its instance made thenable; stop() ends the run early.
    const stop = setTimeout(() => (run as unknown as { stop(): void }).stop(), 120_000);
    await run;
    clearTimeout(stop);
  }
  const page = ONLY.has('history') ? await historyPage(server, null) : undefined;
  // A deep page: after the timestamp of the middle acknowledged notification (position 0, so the
  // page starts at the first event of that millisecond). Cursors are `v1:<position>:<timestampMs>`.
  const sorted = ackedTimestamps.slice(-allAcked.length).sort((a, b) => a - b);
  const middle = {
    endCursor: Buffer.from(`v1:0:${sorted[Math.floor(sorted.length / 2)] ?? 0}`).toString('base64url'),
  };
  const history = page && {
    retained: allAcked.length,
    firstPage: await timeHistory(server, null),
    deepPage: await timeHistory(server, middle.endCursor),
    firstPageSize: page.count,
  };
  log(`stopping cardgraph-${backend}`);
  await server.stop();
  log('reading the log');
  // Every acknowledged id must be in the log (read through the project's own log API).
  const logged = await readLoggedIds(backend, env.DATA_DIR!, redisUrl);
  const missing = allAcked.filter((id) => !logged.has(id)).length;
  for (const result of results) result.missingFromLog = missing;
  return {
    ingest: results,
    history,
    missingFromLog: missing,
    ...(floorIngest ? { floor: floorResults, floorMissingFromDb: floorMissing, vsFloor } : {}),
  };
}

async function historyPage(server: ServerProcess, after: string | null) {
  const query = `query H($after: String) { cardEvents(first: 100, after: $after) { __typename
    ... on QueryCardEventsSuccess { data { edges { cursor } pageInfo { endCursor } } } ... on Error { code message } } }`;
  const { text } = await postGraphql(server, JSON.stringify({ query, variables: { after } }));
  const data = JSON.parse(text).data?.cardEvents?.data;
  if (!data) throw new Error(`history page failed: ${text.slice(0, 300)}`);
  return { count: data.edges.length as number, endCursor: data.pageInfo.endCursor as string };
}

async function timeHistory(server: ServerProcess, after: string | null) {
  const query = `query H($after: String) { cardEvents(first: 100, after: $after) { __typename
    ... on QueryCardEventsSuccess { data { edges { cursor node { id type cardId timestamp } } } } } }`;
  const result = await autocannon({
    url: `${server.ready.url}/graphql`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${clientToken}` },
    body: JSON.stringify({ query, variables: { after } }),
    connections: 1,
    duration: PLAN.historyS,
    sampleInt: PLAN.sampleIntMs,
  });
  return { p50Ms: result.latency.p50, p99Ms: result.latency.p99, requests: result.requests.total };
}

async function readLoggedIds(
  backend: 'sqlite' | 'redis',
  dataDir: string,
  redisUrl?: string,
): Promise<Set<string>> {
  const retention = { maxAgeMs: 86_400_000, maxCount: 10_000_000 };
  const eventLog =
    backend === 'sqlite'
      ? createSqliteEventLog({ dataDir, retention })
      : await createRedisEventLog({ url: redisUrl!, retention, logger: pino({ level: 'silent' }) });
  const ids = new Set<string>();
  let after: bigint | null = null;
  for (;;) {
    const page = await eventLog.readAfter({ tenants: [VAULT] }, after, 5_000);
    for (const event of page) ids.add(event.id);
    if (page.length < 5_000) break;
    after = page.at(-1)!.position;
  }
  await eventLog.close();
  return ids;
}

const ingestResults: Record<string, Awaited<ReturnType<typeof measureIngest>>> = {};
if (ONLY.has('ingest') || ONLY.has('history')) {
  if (BACKENDS.includes('sqlite')) ingestResults.sqlite = await measureIngest('sqlite');
  if (BACKENDS.includes('redis')) {
    const redis = await startRedisServer();
    try {
      ingestResults.redis = await measureIngest('redis', redis.url);
    } finally {
      await redis.stop();
    }
  }
}
await sandbox.stop('SIGKILL');

// ---------------------------------------------------------------------------------------------
// Report.

const hiveOne = queries.oneCard?.['hive-gateway'];
const cgOne = queries.oneCard?.cardgraph;
const floorOne = queries.oneCard?.floor;
const ws10k = fanOut[`ws-${PLAN.subscriberCounts.at(-1)}`];
/** The largest of `values`; NaN (no verdict) when a measure was left out. */
/** The largest value, NaN for none: the best rate of the ingest concurrencies, the worst stall. */
const largest = (values: number[]) => (values.length ? Math.max(...values) : Number.NaN);
const sqliteRun = ingestResults.sqlite;
const redisRun = ingestResults.redis;
const cgJoined = queries.joined?.cardgraph;
const floorJoined = queries.joined?.floor;
// graphql-ws at the SSE rows' subscriber count (1k in a full run), the reference of their p99.
const ws1k = fanOut[`ws-${PLAN.sseSubscribers}`];
/** The SSE rows at 1k (Yoga's SSE on /graphql and graphql-sse on /graphql/stream): the worse of the two. */
const sse1k = [fanOut[`sse-${PLAN.sseSubscribers}`], fanOut[`sse-stream-${PLAN.sseSubscribers}`]].filter(
  (row) => row?.cardgraph,
);
/**
 * The targets of issues 13 and 21 as they stand: issue 21 raised the query, subscriber and cold start
 * ones and replaced the absolute sqlite ingest rate by a ratio to the ingest floor.
 */
const targets = {
  oneCardThroughputVsFloor: {
    target: '≥ 0.6',
    value: cgOne && floorOne ? cgOne.requestsPerSecond / floorOne.requestsPerSecond : Number.NaN,
  },
  oneCardThroughputVsHive: {
    target: '≥ 3',
    value: cgOne && hiveOne ? cgOne.requestsPerSecond / hiveOne.requestsPerSecond : Number.NaN,
  },
  cpuPerQueryUs: { target: '≤ 200', value: cgOne?.cpuUsPerRequest ?? Number.NaN },
  joinedThroughputVsFloor: {
    target: '≥ 0.5',
    value: cgJoined && floorJoined ? cgJoined.requestsPerSecond / floorJoined.requestsPerSecond : Number.NaN,
  },
  // V8 heap used + external memory growth after a forced GC in the server (RSS is in the table too).
  bytesPerSubscriber: { target: '≤ 8,192', value: ws10k?.cardgraph?.heapBytesPerSubscriber ?? Number.NaN },
  deliveryP99Ms: { target: '≤ 250', value: ws10k?.cardgraph?.deliveryP99Ms ?? Number.NaN },
  deliveriesLost: {
    target: '0',
    value: Object.values(fanOut).reduce((sum, byServer) => sum + (byServer.cardgraph?.lost ?? 0), 0),
  },
  sseBytesPerSubscriber: {
    target: '≤ 12,288',
    value: largest(sse1k.map((row) => row!.cardgraph!.heapBytesPerSubscriber)),
  },
  sseDeliveryP99VsWs: {
    target: '≤ 1.2',
    value: ws1k?.cardgraph
      ? largest(sse1k.map((row) => row!.cardgraph!.deliveryP99Ms / ws1k.cardgraph!.deliveryP99Ms))
      : Number.NaN,
  },
  coldStartMs: { target: '≤ 1,000', value: QUICK ? Number.NaN : coldStartMs.cardgraph },
  // issue 21 item 4: the ratio to the ingest floor at the highest concurrency replaces the absolute rate.
  ingestSqliteVsFloor: {
    target: '≥ 0.8',
    value: sqliteRun?.vsFloor?.at(-1)?.throughputRatio ?? Number.NaN,
  },
  ingestRedisPerSecond: {
    target: '≥ 10,000',
    value: largest(redisRun?.ingest.map((r) => r.acknowledgedPerSecond) ?? []),
  },
  acknowledgedMissingFromLog: {
    target: '0',
    value: Object.keys(ingestResults).length
      ? Object.values(ingestResults).reduce(
          (sum, r) =>
            sum + r.missingFromLog + (Number.isNaN(r.floorMissingFromDb) ? 0 : (r.floorMissingFromDb ?? 0)),
          0,
        )
      : Number.NaN,
  },
  queryStallDuringIngestMs: {
    target: '≤ 50',
    value: largest(
      Object.values(ingestResults).flatMap((r) => r.ingest.map((i) => i.queryDuringIngestMaxMs)),
    ),
  },
  historyPageSqliteMs: {
    target: '≤ 20',
    value: largest(
      sqliteRun?.history ? [sqliteRun.history.firstPage.p99Ms, sqliteRun.history.deepPage.p99Ms] : [],
    ),
  },
  historyPageRedisMs: {
    target: '≤ 20',
    value: largest(
      redisRun?.history ? [redisRun.history.firstPage.p99Ms, redisRun.history.deepPage.p99Ms] : [],
    ),
  },
};
const met = (target: string, value: number) => {
  const bound = Number(target.replace(/[^\d.]/g, ''));
  if (Number.isNaN(value)) return 'n/a';
  if (target.startsWith('≥')) return value >= bound ? 'met' : 'NOT met';
  if (target.startsWith('≤')) return value <= bound ? 'met' : 'NOT met';
  return value === bound ? 'met' : 'NOT met';
};

const machine = {
  cpus: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown'}`,
  memoryGiB: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  quick: QUICK,
  date: new Date().toISOString(),
};
const results = {
  machine,
  plan: PLAN,
  hiveGateway: hive
    ? '@graphql-hive/gateway 2.15.1 (OpenAPI source via @omnigraph/openapi)'
    : `unavailable: ${hiveUnavailable}`,
  queries,
  fanOut,
  ingest: ingestResults,
  coldStartMs,
  coldStartSamplesMs: Object.fromEntries(Object.entries(coldStarts).map(([k, v]) => [k, v.samplesMs])),
  targets: Object.fromEntries(
    Object.entries(targets).map(([k, t]) => [k, { ...t, verdict: met(t.target, t.value) }]),
  ),
  elapsedS: Math.round((performance.now() - started) / 1000),
};
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, `${JSON.stringify(results, null, 2)}\n`);

const ratio = (a: number, b: number | undefined) => (b ? (a / b).toFixed(2) : '–');
const lines: string[] = [];
lines.push(
  `Machine: ${machine.cpus}, ${machine.memoryGiB} GiB, Node.js ${machine.node}, ${machine.date}${QUICK ? ' (--quick)' : ''}`,
);
lines.push('');
lines.push('| Measure | cardgraph | floor | Hive Gateway | cardgraph ÷ floor | cardgraph ÷ Hive |');
lines.push('|---|---|---|---|---|---|');
for (const name of ['oneCard', 'joined'] as const) {
  const cg = queries[name]?.cardgraph;
  const fl = queries[name]?.floor;
  const hv = queries[name]?.['hive-gateway'];
  if (!cg || !fl) continue;
  const label = name === 'oneCard' ? 'One-card query' : 'Joined query';
  lines.push(
    `| ${label}, req/s (${PLAN.connections} connections) | ${cg.requestsPerSecond} | ${fl.requestsPerSecond} | ${hv?.requestsPerSecond ?? '–'} | ${ratio(cg.requestsPerSecond, fl.requestsPerSecond)} | ${ratio(cg.requestsPerSecond, hv?.requestsPerSecond)} |`,
  );
  lines.push(
    `| ${label}, p50 / p99 ms | ${cg.p50Ms} / ${cg.p99Ms} | ${fl.p50Ms} / ${fl.p99Ms} | ${hv ? `${hv.p50Ms} / ${hv.p99Ms}` : '–'} | ${ratio(cg.p99Ms, fl.p99Ms)} (p99) | ${ratio(cg.p99Ms, hv?.p99Ms)} (p99) |`,
  );
  lines.push(
    `| ${label}, CPU µs per request | ${cg.cpuUsPerRequest} | ${fl.cpuUsPerRequest} | ${hv?.cpuUsPerRequest ?? '–'} | ${ratio(cg.cpuUsPerRequest, fl.cpuUsPerRequest)} | ${ratio(cg.cpuUsPerRequest, hv?.cpuUsPerRequest)} |`,
  );
  lines.push(
    `| ${label}, upstream calls per request | ${cg.upstreamCallsPerRequest} | ${fl.upstreamCallsPerRequest} | ${hv?.upstreamCallsPerRequest ?? '–'} | | |`,
  );
}
for (const [key, byServer] of Object.entries(fanOut)) {
  const cg = byServer.cardgraph!;
  const fl = byServer.floor!;
  const label = key.startsWith('ws')
    ? `graphql-ws, ${cg.subscribers} subscribers`
    : key.startsWith('sse-stream')
      ? `graphql-sse /graphql/stream, ${cg.subscribers} subscribers`
      : `SSE, ${cg.subscribers} subscribers`;
  lines.push(
    `| ${label}: bytes per idle subscriber, heap + external (RSS) | ${cg.heapBytesPerSubscriber} (${cg.rssBytesPerSubscriber}) | ${fl.heapBytesPerSubscriber} (${fl.rssBytesPerSubscriber}) | – | ${ratio(cg.heapBytesPerSubscriber, fl.heapBytesPerSubscriber)} | |`,
  );
  lines.push(
    `| ${label}: delivery p50 / p99 ms, lost | ${cg.deliveryP50Ms} / ${cg.deliveryP99Ms}, ${cg.lost} | ${fl.deliveryP50Ms} / ${fl.deliveryP99Ms}, ${fl.lost} | – | ${ratio(cg.deliveryP99Ms, fl.deliveryP99Ms)} (p99) | |`,
  );
}
for (const [backend, result] of Object.entries(ingestResults)) {
  // With the floor beside it (sqlite), cardgraph's figures are in the rows against the floor below.
  for (const run of result.floor ? [] : result.ingest) {
    lines.push(
      `| Webhook ingest ${backend}, concurrency ${run.concurrency}: acknowledged/s (missing from log; query max ms meanwhile; CPU µs per acknowledged) | ${run.acknowledgedPerSecond} (${run.missingFromLog}; ${run.queryDuringIngestMaxMs}; ${run.cpuUsPerAcknowledged}) | – | – | | |`,
    );
  }
  for (const [i, run] of (result.floor ?? []).entries()) {
    const cg = result.ingest[i]!;
    const vs = result.vsFloor![i]!;
    lines.push(
      `| Webhook ingest ${backend} vs ingest floor, concurrency ${run.concurrency}: acknowledged/s (missing; query max ms meanwhile; CPU µs per acknowledged) | ${cg.acknowledgedPerSecond} (${cg.missingFromLog}; ${cg.queryDuringIngestMaxMs}; ${cg.cpuUsPerAcknowledged}) | ${run.acknowledgedPerSecond} (${run.missingFromLog}; ${run.queryDuringIngestMaxMs}; ${run.cpuUsPerAcknowledged}) | – | ${vs.throughputRatio.toFixed(2)} (CPU ${vs.cpuRatio.toFixed(2)}) | |`,
    );
  }
  if (result.history) {
    lines.push(
      `| History page (100 events) ${backend}, ${result.history.retained} retained: p99 ms first / deep | ${result.history.firstPage.p99Ms} / ${result.history.deepPage.p99Ms} | – | – | | |`,
    );
  }
}
const hiveStartMs = coldStartMs['hive-gateway' as keyof typeof coldStartMs];
if (QUICK) {
  lines.push(
    `| Cold start ms (fork to listening) | ${coldStartMs.cardgraph} | ${coldStartMs.floor} | ${hiveStartMs ?? '–'} | ${ratio(coldStartMs.cardgraph, coldStartMs.floor)} | ${ratio(coldStartMs.cardgraph, hiveStartMs)} |`,
  );
} else {
  const cgCold = coldStartMs['cardgraph-no-compile-cache' as keyof typeof coldStartMs]!;
  const floorCold = coldStartMs['floor-no-compile-cache' as keyof typeof coldStartMs]!;
  lines.push(
    `| Cold start ms (fork to listening, median of ${COLD_START_FORKS}, compile cache as in the image) | ${coldStartMs.cardgraph} | ${coldStartMs.floor} | – | ${ratio(coldStartMs.cardgraph, coldStartMs.floor)} | |`,
    `| Cold start ms (fork to listening, median of ${COLD_START_FORKS}, no compile cache; Hive: one fork) | ${cgCold} | ${floorCold} | ${hiveStartMs ?? '–'} | ${ratio(cgCold, floorCold)} | ${ratio(cgCold, hiveStartMs)} |`,
  );
}
lines.push('');
lines.push('| Target | Required | Measured | Verdict |');
lines.push('|---|---|---|---|');
for (const [name, t] of Object.entries(results.targets)) {
  lines.push(
    `| ${name} | ${t.target} | ${Number.isNaN(t.value) ? 'not measured' : Number.isInteger(t.value) ? t.value : t.value.toFixed(2)} | ${t.verdict} |`,
  );
}
process.stdout.write(`${lines.join('\n')}\n\nJSON: ${OUT} (${results.elapsedS} s)\n`);

// ---------------------------------------------------------------------------------------------
// Sandbox fixtures (function declarations, hoisted).

/** A sandbox access token for the bench vault (contract §2, client credentials). */
async function sandboxToken(): Promise<string> {
  const response = await request(`${upstreamUrl}/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString('base64')}`,
    },
    body: 'grant_type=client_credentials',
  });
  return ((await response.body.json()) as { access_token: string }).access_token;
}

/** Enrols a (non-test) Visa card in the account updater: a saved v1 card every query reads. */
async function enrolCard(): Promise<{ id: string; number: string }> {
  const response = await request(`${upstreamUrl}/account-updater/cards`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${upstreamToken}` },
    body: JSON.stringify({ name: 'Ada Lovelace', number: '4111111111111111', exp_month: 12, exp_year: 30 }),
  });
  const body = (await response.body.json()) as { data: { id: string; number: string } };
  // 201 on the specification's wire reading (bench/servers/sandbox.ts), 202 on the documented one.
  if (response.statusCode !== 202 && response.statusCode !== 201)
    throw new Error(`enrolment answered ${response.statusCode}`);
  return body.data;
}

/** Provisions a network token for the card's number alias, so the joined query reads a real token. */
async function provisionNetworkToken(): Promise<void> {
  const response = await request(`${upstreamUrl}/account-updater/network-tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${upstreamToken}` },
    body: JSON.stringify({ pan_alias: card.number, exp_month: 12, exp_year: 30 }),
  });
  const text = await response.body.text();
  if (response.statusCode >= 300)
    throw new Error(`network token provisioning answered ${response.statusCode}: ${text}`);
}

/**
 * How Hive Gateway's schema lets a query read `<type>.<parent>.<field>`: the field itself when it is a
 * leaf, the first leaf of its wrapper object, or each member of its union with its leaf fields. The
 * OpenAPI document types a v1 card's
 * `number` as a string or a number (the gateway reads both, sandbox contract §8), which
 * @omnigraph/openapi turns into a union of wrapper objects.
 * @throws Error when the schema has no such field.
 */
async function leafSelection(
  server: ServerProcess,
  type: string,
  parent: string,
  field: string,
): Promise<string> {
  const typeRef = 'name kind ofType { name kind ofType { name kind ofType { name kind } } }';
  const named = (ref: {
    name: string | null;
    kind: string;
    ofType?: unknown;
  }): { name: string; kind: string } =>
    ref.name ? (ref as { name: string; kind: string }) : named(ref.ofType as typeof ref);
  const introspect = async (name: string) => {
    const { text } = await postGraphql(
      server,
      JSON.stringify({
        query: `{ __type(name: "${name}") { fields { name type { ${typeRef} } } possibleTypes { name fields { name type { ${typeRef} } } } } }`,
      }),
    );
    return JSON.parse(text).data.__type as {
      fields: { name: string; type: { name: string | null; kind: string } }[] | null;
      possibleTypes:
        | { name: string; fields: { name: string; type: { name: string | null; kind: string } }[] }[]
        | null;
    };
  };
  const parentField = (await introspect(type)).fields?.find((f) => f.name === parent);
  if (!parentField) throw new Error(`${type} has no ${parent}`);
  const target = (await introspect(named(parentField.type).name)).fields?.find((f) => f.name === field);
  if (!target) throw new Error(`${type}.${parent} has no ${field}`);
  const fieldType = named(target.type);
  if (fieldType.kind === 'SCALAR' || fieldType.kind === 'ENUM') return field;
  const described = await introspect(fieldType.name);
  const leaves = (fields: { name: string; type: { name: string | null; kind: string } }[]) =>
    fields.filter((f) => ['SCALAR', 'ENUM'].includes(named(f.type).kind)).map((f) => f.name);
  // A wrapper object has one field per member; Hive fails a member the value is not, so read the
  // first (the string: the document lists it first, and the sandbox answers an alias).
  if (fieldType.kind === 'OBJECT') return `${field} { ${leaves(described.fields ?? [])[0]} }`;
  const members = described.possibleTypes ?? [];
  return `${field} { ${members.map((m) => `... on ${m.name} { ${leaves(m.fields).join(' ')} }`).join(' ')} }`;
}

/** The bench queries in Hive Gateway's schema (the names @omnigraph/openapi derived). */
async function hiveQueries(server: ServerProcess): Promise<{ oneCard: string; joined: string }> {
  const successOf = async (union: string, field: string) => {
    const { text } = await postGraphql(
      server,
      JSON.stringify({ query: `{ __type(name: "${union}") { possibleTypes { name fields { name } } } }` }),
    );
    const types = JSON.parse(text).data.__type.possibleTypes as {
      name: string;
      fields: { name: string }[];
    }[];
    const success = types.find((type) => type.fields.some((f) => f.name === field));
    if (!success) throw new Error(`no member of ${union} has a ${field} field`);
    return success.name;
  };
  const cardType = await successOf('getAccountUpdaterCard_response', 'data');
  const numberSelection = await leafSelection(server, cardType, 'data', 'number');
  const tokenType = await successOf('getNetworkToken_response', 'data');
  const attributesType = await successOf('lookupCardAttributes_response', 'brand');
  const cardSelection = `getAccountUpdaterCard(card_id: $cardId) {
    ... on ${cardType} { data { id name ${numberSelection} exp_month exp_year state capabilities } } }`;
  return {
    oneCard: `query OneCard($cardId: NonEmptyString!) { ${cardSelection} }`,
    joined: `query Joined($cardId: NonEmptyString!, $alias: NonEmptyString!) { ${cardSelection}
      getNetworkToken(pan_alias: $alias) { ... on ${tokenType} { data { state network_token_last4 expires_at } } }
      lookupCardAttributes(input: { number: "${card.number.slice(0, 6)}" }) { ... on ${attributesType} { brand card_type issuing_country_code } } }`,
  };
}
