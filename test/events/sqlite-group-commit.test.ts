import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createSqliteEventLog } from '../../src/events/sqlite-event-log.ts';
import { cardEvent } from '../support/fixtures.ts';

/**
 * Group commit of the sqlite event log (issue 13 "Event log at scale"): appends run in a writer
 * thread, concurrent ones share a transaction, and each is acknowledged only once its transaction
 * is durable, so every acknowledged id survives SIGKILL of the process mid-burst.
 */
describe('sqlite event log group commit', () => {
  it('keeps every acknowledged append when the process is SIGKILLed mid-burst', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cardgraph-group-commit-'));
    const child = spawn(
      process.execPath,
      [fileURLToPath(new URL('../support/append-until-killed.ts', import.meta.url)), dataDir],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const acknowledged: string[] = [];
    let partial = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      acknowledged.push(...lines);
    });
    await expect
      .poll(() => acknowledged.length, { timeout: 30_000, interval: 20 })
      .toBeGreaterThanOrEqual(500);
    child.kill('SIGKILL');
    await once(child, 'exit');

    const log = createSqliteEventLog({ dataDir, retention: { maxAgeMs: 86_400_000, maxCount: 1_000_000 } });
    const stored = new Set<string>();
    for (let after: bigint | null = null; ; ) {
      const page = await log.readAfter({ tenants: ['tntsandbox1'] }, after, 1_000);
      for (const event of page) stored.add(event.id);
      if (page.length < 1_000) break;
      after = page.at(-1)!.position;
    }
    await log.close();
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    // The burst ran on: the log may hold appends whose acknowledgement the kill cut off, never fewer.
    expect(stored.size).toBeGreaterThanOrEqual(acknowledged.length);
  }, 60_000);

  it('answers concurrent appends in order with increasing positions, duplicates by id, across batches', async () => {
    const log = createSqliteEventLog({
      dataDir: mkdtempSync(join(tmpdir(), 'cardgraph-group-commit-')),
      retention: { maxAgeMs: 86_400_000, maxCount: 1_000_000 },
    });
    const seen: bigint[] = [];
    await log.tail((event) => seen.push(event.position));
    const events = Array.from({ length: 300 }, (_, i) =>
      cardEvent({
        id: `00000000-0000-4000-8000-${String(i % 250).padStart(12, '0')}`,
        timestamp: new Date(Date.UTC(2026, 10, 21, 5, 0, 300 - i)).toISOString(),
      }),
    );
    const outcomes = await Promise.all(events.map((event) => log.append(event)));
    expect(outcomes.filter((o) => o.outcome === 'appended')).toHaveLength(250);
    expect(outcomes.slice(250).map((o) => o.outcome)).toEqual(Array(50).fill('duplicate'));
    const positions = outcomes.flatMap((o) => (o.outcome === 'appended' ? [o.event.position] : []));
    expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(seen).toEqual(positions);
    // Each later event is older than the first: all but the first are out of order.
    expect(outcomes.slice(0, 250).map((o) => o.outcome === 'appended' && o.event.outOfOrder)).toEqual([
      false,
      ...Array(249).fill(true),
    ]);
    await log.close();
  });
});
