/**
 * The sqlite event log's writer (worker thread of src/events/sqlite-event-log.ts): owns the only
 * write connection to the file and commits appends in groups, for every table of the file (card
 * events, network token notifications, unmapped notifications). Every message that arrived while
 * the previous commit was running, whatever its table, is written in one transaction with one fsync
 * (WAL, `synchronous=FULL`), and only then answered, so each acknowledged notification is durable
 * and concurrent appends, to one log or several, share the commit's cost. The event loop of the
 * gateway never waits for a commit.
 *
 * Messages in: arrays of requests (the database posts what one turn of its event loop issued as one
 * message). Requests: `{ kind: 'open', table, subject }` (prepares the table's statements; the table
 * is created and migrated by the database first, and every append or trim of it follows its open),
 * `{ kind: 'append', seq, table, id, tenant, subject, type, timestampMs, receivedMs, body, unordered }`
 * (the event serialized once by the log, so no nested object is cloned across the thread boundary),
 * `{ kind: 'trim', seq, table, nowMs, maxAgeMs, maxCount, receiptMs, maxBytes }`, `{ kind: 'close' }`.
 * Out: one `{ kind: 'batch', replies }` per commit, each reply `{ seq, position, outOfOrder }`
 * (appended), `{ seq, duplicate: position | null }`, `{ seq, dropped }` (trim) or `{ seq, error }`;
 * `{ kind: 'closed' }` after close.
 */

import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
/**
 * An append: the event's columns and its JSON `body` (what the log stores and reads back), its
 * `timestampMs` (ms since the epoch, from the event's ISO 8601 `timestamp`) and `receivedMs`.
 */
export interface WriterAppend {
  kind: 'append';
  seq: number;
  /** The log's table (`EventLogKind.name`), opened before. */
  table: string;
  id: string;
  tenant: string;
  subject: string;
  type: string;
  timestampMs: number;
  receivedMs: number;
  body: string;
  /** The event's own time was flagged: it neither is nor makes another event out of order. */
  unordered: boolean;
}

/** A request to the writer. */
export type WriterRequest =
  | WriterAppend
  | {
      kind: 'trim';
      seq: number;
      table: string;
      nowMs: number;
      maxAgeMs: number;
      maxCount: number;
      receiptMs: number;
      /** 0: no byte bound. */
      maxBytes: number;
    }
  /** Prepares the statements of `table`, whose subject column is `subject` (`EventLogKind`). */
  | { kind: 'open'; table: string; subject: string }
  | { kind: 'close' };

/** A request answered by `seq` (an append or a trim). */
type AnsweredRequest = Extract<WriterRequest, { seq: number }>;

/** One answer of the writer, by request `seq`. */
export type WriterReply =
  | { seq: number; position: bigint; outOfOrder: boolean }
  | { seq: number; duplicate: bigint | null }
  | { seq: number; dropped: number }
  | { seq: number; error: string };

/** Messages the writer posts. */
export type WriterMessage = { kind: 'batch'; replies: WriterReply[] } | { kind: 'closed' };

const port = parentPort!;
const { file } = workerData as { file: string };
const db = new DatabaseSync(file);
db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA busy_timeout = 5000;');

/** The prepared statements of one table, by table name. */
const tables = new Map<string, TableStatements>();
type TableStatements = ReturnType<typeof prepareTable>;

/**
 * The statements of `table` (subject column `subject`), prepared once on its `open`. The table and
 * its schema are created (and migrated) by the database before it posts the open.
 */
function prepareTable(table: string, subject: string) {
  const findById = db.prepare(`SELECT position FROM ${table} WHERE tenant = ? AND id = ?`);
  // Receipts of entries retention already dropped (see createTableSql of sqlite-event-log.ts).
  const findReceipt = db.prepare(`SELECT position FROM ${table}_receipts WHERE tenant = ? AND id = ?`);
  // One statement per append: the out-of-order flag (an earlier-stamped event of the same subject is
  // already logged) is computed by the insert itself, from the (tenant, subject, timestamp_ms) index.
  // The `WHERE true` makes the `ON CONFLICT` clause parse after an `INSERT … SELECT`. Parameters:
  // ?1 id, ?2 tenant, ?3 subject, ?4 type, ?5 timestamp_ms, ?6 received_ms, ?7 body, ?8 unordered.
  // Rows whose own time was flagged (`unordered`) are left out of the newest time, read from the end of
  // the index backwards (usually its last row).
  const insert = db.prepare(`
    INSERT INTO ${table} (id, tenant, ${subject}, type, timestamp_ms, received_ms, out_of_order, body, unordered)
    SELECT ?1, ?2, ?3, ?4, ?5, ?6,
      CASE WHEN ?8 THEN 0 ELSE COALESCE((SELECT timestamp_ms FROM ${table} WHERE tenant = ?2 AND ${subject} = ?3
        AND unordered = 0 ORDER BY timestamp_ms DESC LIMIT 1) > ?5, 0) END, ?7, ?8
    WHERE true
    ON CONFLICT (tenant, id) DO NOTHING
    RETURNING position, out_of_order AS outOfOrder`);
  // Rows are appended in arrival order by this one writer, so `received_ms` rises with position: the
  // rows older than the cut-off are those before the first row received at or after it, found by a
  // walk in position order that stops there (no index on `received_ms`, one b-tree less per append).
  // Should the wall clock step back, rows after that first one may be kept past their age until the
  // count limit or a later trim removes them; a row younger than the cut-off is never dropped.
  const firstYoungerThan = db.prepare(`
    SELECT COALESCE(
      (SELECT position FROM ${table} WHERE received_ms >= ? ORDER BY position LIMIT 1),
      (SELECT MAX(position) FROM ${table}) + 1, 0) AS position`);
  const countCut = db.prepare(`SELECT COALESCE(MAX(position), 0) + 1 - ? AS position FROM ${table}`);
  // Before rows go, those received within the receipt period leave their receipt (a replay of them is
  // then still a duplicate); receipts past the period go.
  const keepReceipts = db.prepare(`
    INSERT OR IGNORE INTO ${table}_receipts (tenant, id, position, received_ms)
    SELECT tenant, id, position, received_ms FROM ${table} WHERE position < ? AND received_ms >= ?`);
  const deleteBefore = db.prepare(`DELETE FROM ${table} WHERE position < ?`);
  // The newest row whose body, with the bodies of every newer row, exceeds the byte bound: it and
  // everything before it go. A walk of the whole table, newest first: only the unmapped log (small,
  // bounded) has a byte bound.
  const bytesCut = db.prepare(`
    SELECT COALESCE((SELECT position FROM (
      SELECT position, SUM(length(CAST(body AS BLOB))) OVER (ORDER BY position DESC) AS total FROM ${table})
      WHERE total > ? ORDER BY position DESC LIMIT 1) + 1, 0) AS position`);
  const deleteReceipts = db.prepare(`DELETE FROM ${table}_receipts WHERE received_ms < ?`);
  for (const statement of [findById, findReceipt, insert, firstYoungerThan, countCut, bytesCut])
    statement.setReadBigInts(true);
  return {
    findById,
    findReceipt,
    insert,
    firstYoungerThan,
    countCut,
    keepReceipts,
    deleteBefore,
    bytesCut,
    deleteReceipts,
  };
}

let queue: (AnsweredRequest | { kind: 'close' })[] = [];
let scheduled = false;
let closing = false;

function apply(request: AnsweredRequest): WriterReply {
  const statements = tables.get(request.table);
  if (!statements) return { seq: request.seq, error: `table ${request.table} was not opened` };
  if (request.kind === 'trim') {
    // Rows before `cut` are older than the age limit, beyond the newest `maxCount` or `maxBytes`.
    const byAge = (statements.firstYoungerThan.get(request.nowMs - request.maxAgeMs) as { position: bigint })
      .position;
    const byCount = (statements.countCut.get(request.maxCount) as { position: bigint }).position;
    let cut = byAge > byCount ? byAge : byCount;
    if (request.maxBytes > 0) {
      const byBytes = (statements.bytesCut.get(request.maxBytes) as { position: bigint }).position;
      if (byBytes > cut) cut = byBytes;
    }
    const receiptsFrom = request.nowMs - request.receiptMs;
    if (request.receiptMs > 0) statements.keepReceipts.run(cut, receiptsFrom);
    const dropped = statements.deleteBefore.run(cut);
    statements.deleteReceipts.run(receiptsFrom);
    return { seq: request.seq, dropped: Number(dropped.changes) };
  }
  const receipt = statements.findReceipt.get(request.tenant, request.id) as { position: bigint } | undefined;
  if (receipt) return { seq: request.seq, duplicate: receipt.position };
  // Statements of one batch run in order: a later event of the same subject sees the earlier ones.
  const inserted = statements.insert.get(
    request.id,
    request.tenant,
    request.subject,
    request.type,
    request.timestampMs,
    request.receivedMs,
    request.body,
    request.unordered ? 1 : 0,
  ) as { position: bigint; outOfOrder: bigint } | undefined;
  if (!inserted) {
    const existing = statements.findById.get(request.tenant, request.id) as { position: bigint } | undefined;
    return { seq: request.seq, duplicate: existing?.position ?? null };
  }
  return { seq: request.seq, position: inserted.position, outOfOrder: inserted.outOfOrder === 1n };
}

function commitBatch(): void {
  scheduled = false;
  const batch = queue;
  queue = [];
  const requests = batch.filter((request) => request.kind !== 'close');
  // Every table's appends and trims of the batch share its one transaction and fsync.
  if (requests.length > 0) {
    let replies: WriterReply[];
    try {
      db.exec('BEGIN IMMEDIATE');
      replies = requests.map(apply);
      db.exec('COMMIT');
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      const message = (error as Error).message;
      replies = requests.map((request) => ({ seq: request.seq, error: message }));
    }
    port.postMessage({ kind: 'batch', replies } satisfies WriterMessage);
  }
  if (closing && queue.length === 0) {
    db.close();
    port.postMessage({ kind: 'closed' } satisfies WriterMessage);
    port.close();
  }
}

port.on('message', (requests: WriterRequest[]) => {
  for (const request of requests) {
    if (request.kind === 'open') {
      if (!tables.has(request.table)) tables.set(request.table, prepareTable(request.table, request.subject));
      continue;
    }
    if (request.kind === 'close') closing = true;
    queue.push(request);
  }
  if (!scheduled && queue.length > 0) {
    scheduled = true;
    // Everything that arrives before the callback runs (and during the commit) joins the batch.
    setImmediate(commitBatch);
  }
});
