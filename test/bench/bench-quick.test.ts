import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * `npm run bench -- --quick` end to end, so the benchmark cannot rot: every server (cardgraph, the
 * floors, Hive Gateway), every measure and the JSON report. Only correctness is asserted (every
 * answer a 2xx, nothing lost, every acknowledged webhook in the log); speed figures belong to the
 * full bench, never to a timed test.
 */
describe('npm run bench -- --quick', () => {
  it('runs every measure against every server and reports nothing lost', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'cardgraph-bench-test-')), 'bench.json');
    await promisify(execFile)(process.execPath, ['bench/run.ts', '--quick', '--out', out], {
      timeout: 170_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.hiveGateway).toMatch(/^@graphql-hive\/gateway/);
    for (const name of ['oneCard', 'joined']) {
      expect(Object.keys(report.queries[name]).sort()).toEqual(['cardgraph', 'floor', 'hive-gateway']);
      for (const result of Object.values<{ non2xx: number; errors: number; requestsPerSecond: number }>(
        report.queries[name],
      )) {
        expect(result).toMatchObject({ non2xx: 0, errors: 0 });
        expect(result.requestsPerSecond).toBeGreaterThan(0);
      }
    }
    expect(Object.keys(report.fanOut).sort()).toEqual(['sse-20', 'sse-stream-20', 'ws-50']);
    for (const byServer of Object.values<Record<string, { lost: number; connectFailures: number }>>(
      report.fanOut,
    )) {
      expect(byServer.cardgraph).toMatchObject({ lost: 0, connectFailures: 0 });
      expect(byServer.floor).toMatchObject({ lost: 0, connectFailures: 0 });
    }
    for (const backend of ['sqlite', 'redis']) {
      expect(report.ingest[backend].missingFromLog).toBe(0);
      expect(report.ingest[backend].ingest[0].acknowledged).toBeGreaterThan(0);
      expect(report.ingest[backend].history.firstPageSize).toBe(100);
    }
    // The ingest floor beside cardgraph on sqlite: every acknowledged id in its own database too.
    expect(report.ingest.sqlite.floorMissingFromDb).toBe(0);
    expect(report.ingest.sqlite.floor[0]).toMatchObject({ concurrency: 10, refused: 0, missingFromLog: 0 });
    expect(report.ingest.sqlite.floor[0].acknowledged).toBeGreaterThan(0);
    expect(report.ingest.sqlite.vsFloor[0].throughputRatio).toBeGreaterThan(0);
    expect(report.ingest.redis.floor).toBeUndefined();
    expect(Object.keys(report.targets)).toHaveLength(16);
  }, 180_000);
});
