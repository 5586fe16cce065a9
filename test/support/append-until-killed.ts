/**
 * Test helper process (test/events/sqlite-group-commit.test.ts): appends card events to the sqlite
 * log in `argv[2]` in waves of 50 concurrent appends, forever, printing each notification id on its
 * own line as soon as its append is acknowledged. The test SIGKILLs it mid-wave.
 */
import { createSqliteEventLog } from '../../src/events/sqlite-event-log.ts';
import { cardEvent } from './notifications.ts';

const log = createSqliteEventLog({
  dataDir: process.argv[2]!,
  retention: { maxAgeMs: 86_400_000, maxCount: 1_000_000 },
});
for (let wave = 0; ; wave++) {
  await Promise.all(
    Array.from({ length: 50 }, async (_, i) => {
      const event = cardEvent({
        cardId: `CRD${String(wave * 50 + i).padStart(22, '0')}`,
        timestamp: new Date().toISOString(),
      });
      const outcome = await log.append(event);
      if (outcome.outcome === 'appended') process.stdout.write(`${event.id}\n`);
    }),
  );
}
