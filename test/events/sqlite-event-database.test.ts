import { mkdtempSync, readdirSync, readlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NETWORK_TOKEN_EVENT_LOG } from '../../src/events/event-log.ts';
import { parseNetworkTokenNotification } from '../../src/events/network-token-event.ts';
import { openSqliteEventDatabase } from '../../src/events/sqlite-event-log.ts';
import { UNMAPPED_NOTIFICATION_LOG, unmappedNotificationOf } from '../../src/events/unmapped-notification.ts';
import { cardEvent, leftover, networkTokenNotification, startStack } from '../support/fixtures.ts';

const retention = { maxAgeMs: 3_600_000, maxCount: 1_000 };

/**
 * The connections this process holds open on the event log file of `dataDir`: its open file
 * descriptors (the writer thread's too, threads share them) that name `card-events.sqlite`. SQLite
 * opens the file once per connection.
 */
function connectionsTo(dataDir: string): number {
  const file = join(dataDir, 'card-events.sqlite');
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === file;
    } catch {
      // The descriptor closed between the listing and the read (the listing's own, for one).
      return false;
    }
  }).length;
}

/** A network token notification as the receiver hands it to the log (tntsandbox1, a fresh id). */
function tokenEvent() {
  const parsed = parseNetworkTokenNotification(networkTokenNotification());
  if (!parsed.ok) throw new Error(`unmappable test notification: ${parsed.reason}`);
  return parsed.event;
}

/** An unmapped notification without a vault (a body that is no object). */
function unmappedEntry() {
  return unmappedNotificationOf(
    Buffer.from('[1]'),
    [1],
    { reason: 'not-an-object' },
    new Date().toISOString(),
  );
}

/**
 * One sqlite file, one writer: the card, network token and unmapped logs of a data directory are
 * views on one database (one read connection, one writer thread holding the only write connection),
 * whose group commits cover every table.
 */
describe('sqlite event database', () => {
  it('holds the gateway’s three logs on one read and one write connection', async () => {
    const stack = leftover(await startStack(), (s) => s.stop());
    // Three logs each opening their own file would hold six (three read, three write).
    await expect.poll(() => connectionsTo(stack.config.events.dataDir)).toBe(2);
  });

  it('answers appends to two logs issued together from one commit', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cardgraph-db-'));
    const database = openSqliteEventDatabase({ dataDir });
    leftover(database, (d) => d.close());
    const cards = database.openLog({ retention });
    const tokens = database.openLog({ kind: NETWORK_TOKEN_EVENT_LOG, retention });
    await expect.poll(() => connectionsTo(dataDir)).toBe(2);
    expect(database.commits).toBe(0);

    const [card, token] = await Promise.all([cards.append(cardEvent()), tokens.append(tokenEvent())]);
    expect([card.outcome, token.outcome]).toEqual(['appended', 'appended']);
    // Each table keeps its own positions.
    expect([
      card.outcome === 'appended' && card.event.position,
      token.outcome === 'appended' && token.event.position,
    ]).toEqual([1n, 1n]);
    expect(database.commits).toBe(1);

    await cards.append(cardEvent());
    expect(database.commits).toBe(2);
  });

  it('keeps the other logs working when one closes, and closes the file with the last', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'cardgraph-db-'));
    const database = openSqliteEventDatabase({ dataDir });
    const cards = database.openLog({ retention });
    const tokens = database.openLog({ kind: NETWORK_TOKEN_EVENT_LOG, retention });
    const unmapped = database.openLog({ kind: UNMAPPED_NOTIFICATION_LOG, retention });
    const first = cardEvent();
    // Posted before the close: committed and answered before the log closes.
    const posted = cards.append(first);
    await cards.close();
    expect((await posted).outcome).toBe('appended');
    await expect(cards.append(cardEvent())).rejects.toThrow('event log is closed');
    await expect(cards.ping()).rejects.toMatchObject({ code: 'closed' });

    const token = tokenEvent();
    expect((await tokens.append(token)).outcome).toBe('appended');
    expect((await unmapped.append(unmappedEntry())).outcome).toBe('appended');
    await tokens.ping();
    expect(connectionsTo(dataDir)).toBe(2);

    await tokens.close();
    await unmapped.close();
    expect(connectionsTo(dataDir)).toBe(0);
    expect(() => database.openLog({ retention })).toThrow('event log database is closed');
    await database.close();

    const reopened = openSqliteEventDatabase({ dataDir });
    leftover(reopened, (d) => d.close());
    const cardsAgain = reopened.openLog({ retention });
    const tokensAgain = reopened.openLog({ kind: NETWORK_TOKEN_EVENT_LOG, retention });
    expect((await cardsAgain.readAfter({ tenants: ['tntsandbox1'] }, null, 10)).map((e) => e.id)).toEqual([
      first.id,
    ]);
    expect((await tokensAgain.readAfter({ tenants: ['tntsandbox1'] }, null, 10)).map((e) => e.id)).toEqual([
      token.id,
    ]);
    expect((await cardsAgain.append(first)).outcome).toBe('duplicate');
  });
});
