/**
 * The query side of the bench on its own (`npm run bench -- --queries-only [--compare-yoga]`): the
 * report of the query rounds (a table of ratios on stdout, JSON to `out`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname } from 'node:path';

/** One autocannon run of a query against one server (bench/run.ts `measureQuery`). */
export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  cpuUsPerRequest: number;
  upstreamCallsPerRequest: number;
  non2xx: number;
  errors: number;
}

/** Per server, the medians of one query over the rounds (see `summarize` in bench/run.ts). */
export type QuerySummary = LoadResult & {
  /** req/s of each round, in order. */
  rounds: number[];
};

/**
 * Writes `{ machine, plan, queries, targets }` to `out` and prints one row per query and figure:
 * each server's value, and cardgraph ÷ each other server (floor, Hive Gateway, and the cardgraph
 * variants `--compare-yoga` and `--compare-jit` ran: `cardgraph-yoga` without the lean GraphQL path,
 * `cardgraph-graphql-js` without compiled execution), with the issue 13 query targets.
 */
export async function reportQueries(options: {
  out: string;
  plan: { durationS: number; rounds: number; connections: number };
  queries: Record<string, Record<string, QuerySummary>>;
  started: number;
  hive: boolean;
}): Promise<void> {
  const { queries } = options;
  const machine = {
    cpus: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown'}`,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    date: new Date().toISOString(),
  };
  const one = queries.oneCard!;
  const cg = one.cardgraph!;
  const targets = {
    oneCardThroughputVsFloor: { target: '≥ 0.6', value: cg.requestsPerSecond / one.floor!.requestsPerSecond },
    oneCardThroughputVsHive: {
      target: '≥ 3',
      value: one['hive-gateway'] ? cg.requestsPerSecond / one['hive-gateway'].requestsPerSecond : Number.NaN,
    },
    cpuPerQueryUs: { target: '≤ 200', value: cg.cpuUsPerRequest },
    joinedThroughputVsFloor: {
      target: '≥ 0.5',
      value:
        queries.joined?.cardgraph && queries.joined.floor
          ? queries.joined.cardgraph.requestsPerSecond / queries.joined.floor.requestsPerSecond
          : Number.NaN,
    },
  };
  const results = {
    machine,
    plan: options.plan,
    queries,
    targets,
    elapsedS: Math.round((performance.now() - options.started) / 1000),
  };
  mkdirSync(dirname(options.out), { recursive: true });
  writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);

  const ratio = (a: number, b: number | undefined) => (b ? (a / b).toFixed(2) : '–');
  // cardgraph first, its variants (`--compare-*`), then the floor and Hive Gateway.
  const servers = Object.keys(one).sort((a, b) => order(a) - order(b));
  const others = servers.filter((server) => server !== 'cardgraph');
  const lines = [
    `Machine: ${machine.cpus}, ${machine.memoryGiB} GiB, Node.js ${machine.node}, ${machine.date}`,
    `${options.plan.rounds} interleaved rounds of ${options.plan.durationS} s at ${options.plan.connections} connections`,
    '',
    `| Measure | ${servers.join(' | ')} | ${others.map((server) => `cardgraph ÷ ${server}`).join(' | ')} |`,
    `|---|${servers.map(() => '---|').join('')}${others.map(() => '---|').join('')}`,
  ];
  const figures = [
    ['req/s', 'requestsPerSecond'],
    ['p99 ms', 'p99Ms'],
    ['CPU µs per request', 'cpuUsPerRequest'],
    ['upstream calls per request', 'upstreamCallsPerRequest'],
  ] as const;
  for (const [name, byServer] of Object.entries(queries)) {
    for (const [label, key] of figures) {
      const value = (server: string) => byServer[server]?.[key];
      const main = value('cardgraph')!;
      const cells = servers.map((server) => value(server) ?? '–');
      const ratios = others.map((server) => ratio(main, value(server)));
      lines.push(`| ${name}, ${label} | ${cells.join(' | ')} | ${ratios.join(' | ')} |`);
    }
  }
  lines.push('', '| Target | Required | Measured |', '|---|---|---|');
  for (const [name, t] of Object.entries(targets)) {
    lines.push(`| ${name} | ${t.target} | ${Number.isInteger(t.value) ? t.value : t.value.toFixed(2)} |`);
  }
  process.stdout.write(`${lines.join('\n')}\n\nJSON: ${options.out} (${results.elapsedS} s)\n`);
}

/** Column order: cardgraph, its variants, the floor, Hive Gateway. */
function order(server: string): number {
  if (server === 'cardgraph') return 0;
  if (server.startsWith('cardgraph-')) return 1;
  return server === 'floor' ? 2 : 3;
}
