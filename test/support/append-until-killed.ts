/**
 * Test helper process (test/events/sqlite-group-commit.test.ts): appends card events to the sqlite
 * log in `argv[2]` in waves of 50 concurrent appends, forever, printing each notification id on its
 * own line as soon as its append is acknowledged. The test SIGKILLs it mid-wave.
 */
import { randomUUID } from 'node:crypto';
import type { CardEvent } from '../../src/events/card-event.ts';
import { createSqliteEventLog } from '../../src/events/sqlite-event-log.ts';

const log = createSqliteEventLog({
  dataDir: process.argv[2]!,
  retention: { maxAgeMs: 86_400_000, maxCount: 1_000_000 },
});
for (let wave = 0; ; wave++) {
  await Promise.all(
    Array.from({ length: 50 }, async (_, i) => {
      const event: CardEvent = {
        id: randomUUID(),
        type: 'au_card.updated',
        tenant: 'tntsandbox1',
        cardId: `CRD${String(wave * 50 + i).padStart(22, '0')}`,
        timestamp: new Date().toISOString(),
        createdAt: '2026-11-21T05:00:00Z',
        newAccountNumber: '400021******2002',
        oldAccountNumber: '400021******2002',
        newExpiry: { month: 12, year: 2030 },
        oldExpiry: { month: 12, year: 2030 },
        expMonth: 12,
        expYear: 2030,
        fingerprint: 'a'.repeat(64),
        grouping: 'every_single',
        occurrence: 1,
        orgId: 'ACsandbox000000000000001',
        integrationId: 'INTsandbox00000000000001',
      };
      const outcome = await log.append(event);
      if (outcome.outcome === 'appended') process.stdout.write(`${event.id}\n`);
    }),
  );
}
