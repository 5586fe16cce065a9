import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import type { CardEvent } from './card-event.ts';
import type { CardEventFilter } from './card-event-bus.ts';
import {
  type AppendOutcome,
  type CardEventLog,
  type HistoryCursor,
  type LoggedCardEvent,
  type RetentionPolicy,
  toLoggedEvent,
} from './event-log.ts';

/** Options of {@link createSqliteEventLog}. */
export interface SqliteEventLogOptions {
  /** Directory of the database file `card-events.sqlite` (created when missing). */
  dataDir: string;
  retention: RetentionPolicy;
  /** Clock in ms (tests). */
  now?: () => number;
}

type Row = { position: bigint; body: string; timestamp_ms: bigint; out_of_order: bigint };

/**
 * The embedded event log: node:sqlite in WAL mode with `synchronous=FULL`, so an append that
 * returned survives a crash or SIGKILL of the process. One gateway process owns the file; live
 * tailing is in-process. Positions are the table's AUTOINCREMENT key (never reused, even after
 * retention deletes the newest rows).
 */
export function createSqliteEventLog(options: SqliteEventLogOptions): CardEventLog {
  mkdirSync(options.dataDir, { recursive: true });
  const db = new DatabaseSync(join(options.dataDir, 'card-events.sqlite'));
  const now = options.now ?? Date.now;
  db.exec(`
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = FULL;
    PRAGMA busy_timeout = 5000;
    CREATE TABLE IF NOT EXISTS card_events (
      position INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      tenant TEXT NOT NULL,
      card_id TEXT NOT NULL,
      type TEXT NOT NULL,
      timestamp_ms INTEGER NOT NULL,
      received_ms INTEGER NOT NULL,
      out_of_order INTEGER NOT NULL,
      body TEXT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS card_events_tenant_position ON card_events (tenant, position);
    CREATE INDEX IF NOT EXISTS card_events_tenant_timestamp ON card_events (tenant, timestamp_ms, position);
    CREATE INDEX IF NOT EXISTS card_events_card_timestamp ON card_events (tenant, card_id, timestamp_ms);
    CREATE INDEX IF NOT EXISTS card_events_received ON card_events (received_ms);
  `);

  const findById = db.prepare('SELECT position FROM card_events WHERE id = ?');
  const latestOfCard = db.prepare(
    'SELECT MAX(timestamp_ms) AS latest FROM card_events WHERE tenant = ? AND card_id = ?',
  );
  const insert = db.prepare(`
    INSERT INTO card_events (id, tenant, card_id, type, timestamp_ms, received_ms, out_of_order, body)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO NOTHING
    RETURNING position`);
  for (const statement of [findById, insert]) statement.setReadBigInts(true);
  const listeners = new Set<(event: LoggedCardEvent) => void>();
  let closed = false;

  function fromRow(row: Row): LoggedCardEvent {
    return toLoggedEvent(JSON.parse(row.body) as CardEvent, row.position, row.out_of_order === 1n);
  }

  function where(filter: CardEventFilter, params: SQLInputValue[]): string {
    const clauses = [`tenant IN (${filter.tenants.map(() => '?').join(', ')})`];
    params.push(...filter.tenants);
    if (filter.cardId !== undefined) {
      clauses.push('card_id = ?');
      params.push(filter.cardId);
    }
    if (filter.types !== undefined) {
      if (filter.types.length === 0) return '0';
      clauses.push(`type IN (${filter.types.map(() => '?').join(', ')})`);
      params.push(...filter.types);
    }
    return clauses.join(' AND ');
  }

  function select(sql: string, params: SQLInputValue[]): LoggedCardEvent[] {
    const statement = db.prepare(sql);
    statement.setReadBigInts(true);
    return (statement.all(...params) as Row[]).map(fromRow);
  }

  return {
    async append(event) {
      if (closed) throw new Error('event log is closed');
      const timestampMs = Date.parse(event.timestamp);
      // node:sqlite is synchronous: nothing else runs between these statements in this process.
      const latest = latestOfCard.get(event.tenant, event.cardId) as { latest: number | null } | undefined;
      const outOfOrder = latest?.latest != null && latest.latest > timestampMs;
      const inserted = insert.get(
        event.id,
        event.tenant,
        event.cardId,
        event.type,
        timestampMs,
        now(),
        outOfOrder ? 1 : 0,
        JSON.stringify(event),
      ) as { position: bigint } | undefined;
      if (!inserted) {
        const existing = findById.get(event.id) as { position: bigint } | undefined;
        return { outcome: 'duplicate', position: existing?.position ?? null } satisfies AppendOutcome;
      }
      const logged = toLoggedEvent(event, inserted.position, outOfOrder);
      for (const listener of listeners) listener(logged);
      return { outcome: 'appended', event: logged };
    },

    async readAfter(filter, after, limit) {
      const params: SQLInputValue[] = [after ?? 0n];
      const condition = where(filter, params);
      params.push(limit);
      return select(
        `SELECT position, body, timestamp_ms, out_of_order FROM card_events
         WHERE position > ? AND ${condition} ORDER BY position LIMIT ?`,
        params,
      );
    },

    async history(filter, after: HistoryCursor | null, limit) {
      const params: SQLInputValue[] = [];
      const condition = where(filter, params);
      let range = '';
      if (after) {
        range = 'AND (timestamp_ms > ? OR (timestamp_ms = ? AND position > ?))';
        params.push(after.timestampMs, after.timestampMs, after.position);
      }
      params.push(limit);
      return select(
        `SELECT position, body, timestamp_ms, out_of_order FROM card_events
         WHERE ${condition} ${range} ORDER BY timestamp_ms, position LIMIT ?`,
        params,
      );
    },

    async tail(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async trim() {
      const byAge = db
        .prepare('DELETE FROM card_events WHERE received_ms < ?')
        .run(now() - options.retention.maxAgeMs);
      const byCount = db
        .prepare('DELETE FROM card_events WHERE position <= (SELECT MAX(position) FROM card_events) - ?')
        .run(options.retention.maxCount);
      return Number(byAge.changes) + Number(byCount.changes);
    },

    async ping() {
      if (closed) throw Object.assign(new Error('event log closed'), { code: 'closed' });
      db.prepare('SELECT 1').get();
    },

    async close() {
      if (closed) return;
      closed = true;
      listeners.clear();
      db.close();
    },
  };
}
