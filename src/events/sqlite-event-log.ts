import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { Worker } from 'node:worker_threads';
import type { CardEvent } from './card-event.ts';
import {
  type AppendOutcome,
  CARD_EVENT_LOG,
  type EventLog,
  EventLogAppendError,
  type EventLogFilter,
  type EventLogKind,
  type HistoryCursor,
  type LogEvent,
  type Logged,
  type RetentionPolicy,
  toLoggedEvent,
} from './event-log.ts';
import type { WriterMessage, WriterReply, WriterRequest } from './sqlite-event-log-writer.ts';

/** Options of {@link openSqliteEventDatabase}. */
export interface SqliteEventDatabaseOptions {
  /** Directory of the database file `card-events.sqlite` (created when missing). */
  dataDir: string;
}

/** Options of {@link SqliteEventDatabase.openLog}. */
export interface SqliteEventLogViewOptions<E extends LogEvent> {
  retention: RetentionPolicy;
  /** Which events the log holds (its table); card events by default. */
  kind?: EventLogKind<E>;
  /** Clock in ms (tests). */
  now?: () => number;
}

/** Options of {@link createSqliteEventLog}: a database of one log. */
export type SqliteEventLogOptions<E extends LogEvent> = SqliteEventDatabaseOptions &
  SqliteEventLogViewOptions<E>;

/**
 * Schema version of the database file (`PRAGMA user_version`):
 * 0 → 1: `card_events` deduplicated by (tenant, id) instead of id alone (issue 10, class 10). The
 * table is rebuilt in one transaction keeping every row, its position and the AUTOINCREMENT
 * high-water mark, so positions (and cursors handed out) stay valid and are never reused.
 * 1 → 2: the `(received_ms)` index of each table is dropped (issue 13: one b-tree less per append).
 * Retention by age goes by position instead: one writer appends in arrival order, so `received_ms`
 * rises with position (see src/events/sqlite-event-log-writer.ts).
 * 2 → 3: column `unordered` (1: the event's own time was flagged, so it takes no part in the
 * out-of-order marker of its subject), added to each existing table with default 0.
 */
const SCHEMA_VERSION = 3;

/**
 * `CREATE TABLE` of an event table of `kind`, deduplicated by (tenant, id), and of its receipts:
 * the (tenant, id, position, received_ms) of entries retention dropped while they were younger than
 * the receipt period ({@link RetentionPolicy.receiptMs}), so a replay of them is still a duplicate.
 * Rows move there only when trimmed, so an append pays one lookup in a small table, not one insert.
 */
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
      unordered INTEGER NOT NULL DEFAULT 0,
      UNIQUE (tenant, id)
    );
    CREATE INDEX IF NOT EXISTS ${table}_tenant_position ON ${table} (tenant, position);
    CREATE INDEX IF NOT EXISTS ${table}_tenant_timestamp ON ${table} (tenant, timestamp_ms, position);
    CREATE INDEX IF NOT EXISTS ${table}_subject_timestamp ON ${table} (tenant, ${subject}, timestamp_ms);
    CREATE TABLE IF NOT EXISTS ${table}_receipts (
      tenant TEXT NOT NULL,
      id TEXT NOT NULL,
      position INTEGER NOT NULL,
      received_ms INTEGER NOT NULL,
      PRIMARY KEY (tenant, id)
    ) WITHOUT ROWID;`;
}

/**
 * Brings the file to {@link SCHEMA_VERSION}: once per {@link openSqliteEventDatabase}. Safe to run on
 * every start and from several databases on one file: the version is read and written inside an
 * immediate transaction.
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
    }
    if (version < 2) {
      db.exec(`
        DROP INDEX IF EXISTS card_events_received;
        DROP INDEX IF EXISTS network_token_events_received;
      `);
    }
    if (version < 3) {
      for (const table of ['card_events', 'network_token_events', 'unmapped_notifications']) {
        const columns = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
        if (columns.length > 0 && !columns.some((column) => column.name === 'unordered')) {
          db.exec(`ALTER TABLE ${table} ADD COLUMN unordered INTEGER NOT NULL DEFAULT 0`);
        }
      }
    }
    if (version < SCHEMA_VERSION) db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`);
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}

/**
 * The writer thread's module: this module's sibling in the sources; in the production build
 * (dist/, scripts/build.ts) the writer is an entry of its own, `sqlite-event-log-writer.js`, beside
 * the file this module is bundled into.
 */
const WRITER_FILE = new URL(
  import.meta.url.endsWith('.ts') ? './sqlite-event-log-writer.ts' : './sqlite-event-log-writer.js',
  import.meta.url,
);

type Row = { position: bigint; body: string; timestamp_ms: bigint; out_of_order: bigint };

/** A request answered by the writer, before the database numbers it. */
type UnnumberedRequest =
  | Omit<Extract<WriterRequest, { kind: 'append' }>, 'seq'>
  | Omit<Extract<WriterRequest, { kind: 'trim' }>, 'seq'>;

/**
 * The embedded event log file `card-events.sqlite` of one data directory: node:sqlite in WAL mode
 * with `synchronous=FULL`, so an append that was answered survives a crash or SIGKILL of the
 * process. One gateway process owns the file; live tailing is in-process. The file holds one table
 * per log (card events, network token notifications, unmapped notifications: `EventLogKind.name`),
 * each with its own positions (the table's AUTOINCREMENT key, never reused, even after retention
 * deletes the newest rows); duplicates are recognised by (tenant, id).
 *
 * The database owns one read connection (history, replay, ping: on the event loop; WAL readers see
 * every committed append and never block the writer), runs the PRAGMAs and the migration once, and
 * starts ONE writer worker thread (src/events/sqlite-event-log-writer.ts) holding the only write
 * connection. The writer commits in groups across tables: appends and trims of every log that
 * arrive while a commit is in progress share the next transaction and its fsync, and each is
 * answered only once its transaction is durable; the gateway's event loop never waits for a commit.
 * Requests issued in one turn of the event loop cross to the writer as one message, so appends to
 * two logs issued together are answered from one commit.
 */
export interface SqliteEventDatabase {
  /**
   * A log of `kind` (its table, created when missing) on this file, with its own retention,
   * listeners and `close()`. Closing the last open log closes the database.
   * @throws Error when the database is closed.
   */
  openLog<E extends LogEvent = CardEvent>(options: SqliteEventLogViewOptions<E>): EventLog<E>;
  /**
   * Transactions (group commits) the writer has run and answered since the file was opened, each one
   * fsync; rises by one per batch, whatever the number of logs and appends in it (tests, metrics).
   */
  readonly commits: number;
  /**
   * Closes every log still open (appends already posted are committed and answered first), then the
   * writer thread and the read connection. Idempotent; resolves when the file is closed.
   */
  close(): Promise<void>;
}

/**
 * Opens (creating and migrating when needed) the event log file of `options.dataDir` and starts its
 * writer thread; see {@link SqliteEventDatabase}.
 * @throws Error (node:sqlite) when the file cannot be opened or migrated.
 */
export function openSqliteEventDatabase(options: SqliteEventDatabaseOptions): SqliteEventDatabase {
  mkdirSync(options.dataDir, { recursive: true });
  const file = join(options.dataDir, 'card-events.sqlite');
  const db = new DatabaseSync(file);
  db.exec(`
    PRAGMA journal_mode = WAL;
    PRAGMA synchronous = FULL;
    PRAGMA busy_timeout = 5000;
  `);
  migrate(db);

  const writer = new Worker(WRITER_FILE, {
    workerData: { file },
  });
  // Unref'd while nothing waits for it, so an idle log never keeps the process up.
  writer.unref();
  const waiting = new Map<
    number,
    { resolve: (reply: WriterReply) => void; reject: (error: Error) => void }
  >();
  let nextSeq = 1;
  let writerFailure: Error | undefined;
  let outbox: WriterRequest[] = [];
  let commits = 0;
  const logs = new Set<EventLog<never>>();
  let closed: Promise<void> | undefined;

  function failAll(error: Error): void {
    writerFailure ??= error;
    for (const { reject } of waiting.values()) reject(error);
    waiting.clear();
  }
  writer.on('message', (message: WriterMessage) => {
    if (message.kind !== 'batch') return;
    commits++;
    for (const reply of message.replies) {
      const entry = waiting.get(reply.seq);
      waiting.delete(reply.seq);
      entry?.resolve(reply);
    }
    if (waiting.size === 0) writer.unref();
  });
  // A writer failure fails the waiting appends of every log on the file.
  writer.on('error', (error) => failAll(error));
  writer.on('exit', (code) => failAll(new Error(`event log writer exited (${code})`)));

  /**
   * Queues `message` for the writer: what this turn of the event loop posts crosses as one message
   * (one structured clone), so requests issued together land in one batch of the writer.
   */
  function post(message: WriterRequest): void {
    if (outbox.length === 0) {
      queueMicrotask(() => {
        const messages = outbox;
        outbox = [];
        writer.postMessage(messages);
      });
    }
    outbox.push(message);
  }

  function request(message: UnnumberedRequest): Promise<WriterReply> {
    if (writerFailure) return Promise.reject(writerFailure);
    return new Promise((resolve, reject) => {
      const seq = nextSeq++;
      waiting.set(seq, { resolve, reject });
      writer.ref();
      post({ ...message, seq } as WriterRequest);
    });
  }

  function shutDown(): Promise<void> {
    closed ??= new Promise<void>((resolve) => {
      if (writerFailure) {
        resolve();
        return;
      }
      // Every log's appends were answered before its close let the database go: the writer's queue
      // holds nothing more to commit.
      writer.once('exit', () => resolve());
      writer.ref();
      post({ kind: 'close' });
    }).finally(() => db.close());
    return closed;
  }

  function openLog<E extends LogEvent>(viewOptions: SqliteEventLogViewOptions<E>): EventLog<E> {
    if (closed) throw new Error('event log database is closed');
    const kind = viewOptions.kind ?? (CARD_EVENT_LOG as unknown as EventLogKind<E>);
    // One transaction: a new file's tables and indexes cost one commit (one fsync), not one each.
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec(createTableSql(kind.name, kind.subjectColumn));
      db.exec('COMMIT');
    } catch (error) {
      db.exec('ROLLBACK');
      throw error;
    }
    post({ kind: 'open', table: kind.name, subject: kind.subjectColumn });
    const log: EventLog<E> = createLogView({
      ...viewOptions,
      kind,
      db,
      request,
      failure: () => writerFailure,
      onClosed: () => {
        logs.delete(log as EventLog<never>);
        return logs.size === 0 ? shutDown() : Promise.resolve();
      },
    });
    logs.add(log as EventLog<never>);
    return log;
  }

  return {
    openLog,
    get commits() {
      return commits;
    },
    async close() {
      await Promise.all([...logs].map((log) => log.close()));
      await shutDown();
    },
  };
}

/**
 * The log of `kind` on a database's file (a view: its table, its retention, its listeners): reads
 * on the read connection `db`, appends and trims through `request` (the writer). `close()` waits for
 * this log's posted requests to be answered, then calls `onClosed`.
 */
function createLogView<E extends LogEvent>(options: {
  kind: EventLogKind<E>;
  retention: RetentionPolicy;
  now?: (() => number) | undefined;
  db: DatabaseSync;
  request: (message: UnnumberedRequest) => Promise<WriterReply>;
  /** The writer's failure, once it stopped. */
  failure: () => Error | undefined;
  onClosed: () => Promise<void>;
}): EventLog<E> {
  const { kind, db } = options;
  const table = kind.name;
  const subject = kind.subjectColumn;
  const now = options.now ?? Date.now;
  const listeners = new Set<(event: Logged<E>) => void>();
  // Requests of this log not yet answered: its close waits for them.
  const pending = new Set<Promise<WriterReply>>();
  let closed = false;
  let closing: Promise<void> | undefined;

  function request(message: UnnumberedRequest): Promise<WriterReply> {
    const reply = options.request(message);
    pending.add(reply);
    const settled = () => pending.delete(reply);
    reply.then(settled, settled);
    return reply;
  }

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
    if (closed) throw new Error('event log is closed');
    const statement = db.prepare(sql);
    statement.setReadBigInts(true);
    return (statement.all(...params) as Row[]).map(fromRow);
  }

  return {
    async append(event) {
      if (closed) throw new Error('event log is closed');
      const reply = await request({
        kind: 'append',
        table,
        id: event.id,
        tenant: event.tenant,
        subject: kind.subjectOf(event),
        type: event.type,
        timestampMs: Date.parse(event.timestamp),
        receivedMs: now(),
        unordered: event.timestampFlag !== undefined,
        // Serialized here, once: a flat message of strings crosses to the writer thread for less
        // than the event object's structured clone, and the writer stores this text as it is.
        body: JSON.stringify(event),
      });
      if ('error' in reply) throw new EventLogAppendError(reply.error);
      if ('duplicate' in reply)
        return { outcome: 'duplicate', position: reply.duplicate } satisfies AppendOutcome<E>;
      if (!('position' in reply)) throw new Error('event log writer answered an append with no position');
      const logged = toLoggedEvent(event, reply.position, reply.outOfOrder);
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

    async byIds(tenant, ids) {
      if (ids.length === 0) return [];
      return select(
        `SELECT position, body, timestamp_ms, out_of_order FROM ${table}
         WHERE tenant = ? AND id IN (${ids.map(() => '?').join(', ')})`,
        [tenant, ...ids],
      );
    },

    async tail(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async trim() {
      if (closed) return 0;
      const reply = await request({
        kind: 'trim',
        table,
        nowMs: now(),
        maxAgeMs: options.retention.maxAgeMs,
        maxCount: options.retention.maxCount,
        receiptMs: options.retention.receiptMs ?? 0,
        maxBytes: options.retention.maxBytes ?? 0,
      });
      if ('error' in reply) throw new Error(`event log retention failed: ${reply.error}`);
      return 'dropped' in reply ? reply.dropped : 0;
    },

    async ping() {
      if (closed) throw Object.assign(new Error('event log closed'), { code: 'closed' });
      if (options.failure())
        throw Object.assign(new Error('event log writer stopped'), { code: 'disconnected' });
      db.prepare('SELECT 1').get();
    },

    close() {
      if (closing) return closing;
      closed = true;
      listeners.clear();
      // Appends already posted are committed and answered (or failed with the writer) first.
      closing = Promise.allSettled([...pending]).then(() => options.onClosed());
      return closing;
    },
  };
}

/**
 * A database of one log ({@link openSqliteEventDatabase}, {@link SqliteEventDatabase.openLog}):
 * closing the log closes the file and its writer thread. The gateway opens its three logs on one
 * database instead (src/runtime/services.ts).
 * @throws Error (node:sqlite) when the file cannot be opened or migrated.
 */
export function createSqliteEventLog<E extends LogEvent = CardEvent>(
  options: SqliteEventLogOptions<E>,
): EventLog<E> {
  return openSqliteEventDatabase(options).openLog(options);
}
