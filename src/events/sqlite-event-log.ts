import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import type { CardEvent } from './card-event.ts';
import {
  type AppendOutcome,
  CARD_EVENT_LOG,
  type EventLog,
  type EventLogFilter,
  type EventLogKind,
  type HistoryCursor,
  type LogEvent,
  type Logged,
  type RetentionPolicy,
  toLoggedEvent,
} from './event-log.ts';

/** Options of {@link createSqliteEventLog}. */
export interface SqliteEventLogOptions<E extends LogEvent> {
  /** Directory of the database file `card-events.sqlite` (created when missing). */
  dataDir: string;
  retention: RetentionPolicy;
  /** Which events the log holds (its table); card events by default. */
  kind?: EventLogKind<E>;
  /** Clock in ms (tests). */
  now?: () => number;
}

/**
 * Schema version of the database file (`PRAGMA user_version`):
 * 0 → 1: `card_events` deduplicated by (tenant, id) instead of id alone (issue 10, class 10). The
 * table is rebuilt in one transaction keeping every row, its position and the AUTOINCREMENT
 * high-water mark, so positions (and cursors handed out) stay valid and are never reused.
 */
const SCHEMA_VERSION = 1;

/** `CREATE TABLE` of an event table of `kind`, deduplicated by (tenant, id). */
function createTableSql(table: string, subject: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
      position INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL,
      tenant TEXT NOT NULL,
      ${subject} TEXT NOT NULL,
      type TEXT NOT NULL,
      timestamp_ms INTEGER NOT NULL,
      received_ms INTEGER NOT NULL,
      out_of_order INTEGER NOT NULL,
      body TEXT NOT NULL,
      UNIQUE (tenant, id)
    );
    CREATE INDEX IF NOT EXISTS ${table}_tenant_position ON ${table} (tenant, position);
    CREATE INDEX IF NOT EXISTS ${table}_tenant_timestamp ON ${table} (tenant, timestamp_ms, position);
    CREATE INDEX IF NOT EXISTS ${table}_subject_timestamp ON ${table} (tenant, ${subject}, timestamp_ms);
    CREATE INDEX IF NOT EXISTS ${table}_received ON ${table} (received_ms);`;
}

/**
 * Brings the file to {@link SCHEMA_VERSION}. Safe to run on every start and from several logs on
 * one file: the version is read and written inside an immediate transaction.
 */
function migrate(db: DatabaseSync): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    const { user_version: version } = db.prepare('PRAGMA user_version').get() as { user_version: number };
    if (version < 1) {
      const legacy = db
        .prepare("SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'card_events'")
        .get();
      if (legacy) {
        const sequence = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'card_events'").get() as
          | { seq: number }
          | undefined;
        db.exec(`
          ALTER TABLE card_events RENAME TO card_events_v0;
          DROP INDEX IF EXISTS card_events_tenant_position;
          DROP INDEX IF EXISTS card_events_tenant_timestamp;
          DROP INDEX IF EXISTS card_events_card_timestamp;
          DROP INDEX IF EXISTS card_events_received;
          ${createTableSql('card_events', 'card_id')}
          INSERT INTO card_events (position, id, tenant, card_id, type, timestamp_ms, received_ms, out_of_order, body)
            SELECT position, id, tenant, card_id, type, timestamp_ms, received_ms, out_of_order, body
            FROM card_events_v0 ORDER BY position;
          DROP TABLE card_events_v0;
        `);
        if (sequence) {
          db.prepare("UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = 'card_events'").run(
            sequence.seq,
          );
        }
      }
      db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    }
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}

type Row = { position: bigint; body: string; timestamp_ms: bigint; out_of_order: bigint };

/**
 * The embedded event log: node:sqlite in WAL mode with `synchronous=FULL`, so an append that
 * returned survives a crash or SIGKILL of the process. One gateway process owns the file; live
 * tailing is in-process. Positions are the table's AUTOINCREMENT key (never reused, even after
 * retention deletes the newest rows). Card events and network token notifications are two tables
 * of one file (`kind`), each with its own positions; duplicates are recognised by (tenant, id).
 */
export function createSqliteEventLog<E extends LogEvent = CardEvent>(
  options: SqliteEventLogOptions<E>,
): EventLog<E> {
  const kind = options.kind ?? (CARD_EVENT_LOG as unknown as EventLogKind<E>);
  const table = kind.name;
  const subject = kind.subjectColumn;
  mkdirSync(options.dataDir, { recursive: true });
  const db = new DatabaseSync(join(options.dataDir, 'card-events.sqlite'));
  const now = options.now ?? Date.now;
  db.exec(`
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = FULL;
    PRAGMA busy_timeout = 5000;
  `);
  migrate(db);
  db.exec(createTableSql(table, subject));

  const findById = db.prepare(`SELECT position FROM ${table} WHERE tenant = ? AND id = ?`);
  const latestOfSubject = db.prepare(
    `SELECT MAX(timestamp_ms) AS latest FROM ${table} WHERE tenant = ? AND ${subject} = ?`,
  );
  const insert = db.prepare(`
    INSERT INTO ${table} (id, tenant, ${subject}, type, timestamp_ms, received_ms, out_of_order, body)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (tenant, id) DO NOTHING
    RETURNING position`);
  for (const statement of [findById, insert]) statement.setReadBigInts(true);
  const listeners = new Set<(event: Logged<E>) => void>();
  let closed = false;

  function fromRow(row: Row): Logged<E> {
    return toLoggedEvent(JSON.parse(row.body) as E, row.position, row.out_of_order === 1n);
  }

  function where(filter: EventLogFilter, params: SQLInputValue[]): string {
    const clauses = [`tenant IN (${filter.tenants.map(() => '?').join(', ')})`];
    params.push(...filter.tenants);
    if (filter.subject !== undefined) {
      clauses.push(`${subject} = ?`);
      params.push(filter.subject);
    }
    if (filter.types !== undefined) {
      if (filter.types.length === 0) return '0';
      clauses.push(`type IN (${filter.types.map(() => '?').join(', ')})`);
      params.push(...filter.types);
    }
    return clauses.join(' AND ');
  }

  function select(sql: string, params: SQLInputValue[]): Logged<E>[] {
    const statement = db.prepare(sql);
    statement.setReadBigInts(true);
    return (statement.all(...params) as Row[]).map(fromRow);
  }

  return {
    async append(event) {
      if (closed) throw new Error('event log is closed');
      const timestampMs = Date.parse(event.timestamp);
      // node:sqlite is synchronous: nothing else runs between these statements in this process.
      const subjectValue = kind.subjectOf(event);
      const latest = latestOfSubject.get(event.tenant, subjectValue) as { latest: number | null } | undefined;
      const outOfOrder = latest?.latest != null && latest.latest > timestampMs;
      const inserted = insert.get(
        event.id,
        event.tenant,
        subjectValue,
        event.type,
        timestampMs,
        now(),
        outOfOrder ? 1 : 0,
        JSON.stringify(event),
      ) as { position: bigint } | undefined;
      if (!inserted) {
        const existing = findById.get(event.tenant, event.id) as { position: bigint } | undefined;
        return { outcome: 'duplicate', position: existing?.position ?? null } satisfies AppendOutcome<E>;
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
        `SELECT position, body, timestamp_ms, out_of_order FROM ${table}
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
        `SELECT position, body, timestamp_ms, out_of_order FROM ${table}
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
        .prepare(`DELETE FROM ${table} WHERE received_ms < ?`)
        .run(now() - options.retention.maxAgeMs);
      const byCount = db
        .prepare(`DELETE FROM ${table} WHERE position <= (SELECT MAX(position) FROM ${table}) - ?`)
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
