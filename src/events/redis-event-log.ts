import { createHash } from 'node:crypto';
import { createClient } from 'redis';
import type { Logger } from '../lib/logger.ts';
import type { CardEvent } from './card-event.ts';
import type {
  AppendOutcome,
  EventLog,
  EventLogFilter,
  EventLogKind,
  HistoryCursor,
  LogEvent,
  Logged,
  RetentionPolicy,
} from './event-log.ts';
import { CARD_EVENT_LOG, EventLogAppendError, matchesFilter, toLoggedEvent } from './event-log.ts';

/** Options of {@link createRedisEventLog}. */
export interface RedisEventLogOptions<E extends LogEvent = CardEvent> {
  /** Which events the log holds; card events by default. */
  kind?: EventLogKind<E>;
  /** `redis://host:port/db`. */
  url: string;
  retention: RetentionPolicy;
  logger: Logger;
  /**
   * Key prefix; the hash tag keeps every key of the log in one cluster slot. Default
   * `cardgraph:{events}` for card events, `cardgraph:{network_token_events}` for network token events.
   */
  prefix?: string;
  /** Longest a tail read blocks before it polls again (ms); bounds shutdown time. Default 2000. */
  blockMs?: number;
  now?: () => number;
}

/**
 * Atomic append of a batch of events (group commit): for each event in order, drop a notification
 * id already seen for its tenant (earlier in the same batch included), flag an event older than the
 * newest of its subject, XADD, remember the (tenant, id) for the retention period. One script, so a
 * crash can never leave an id marked as seen without its entry (which would lose the event on
 * redelivery). Ids remembered before dedupe was per tenant (`<prefix>:id:<id>`, written by earlier
 * versions) still count as seen until they expire, so an upgrade never appends a redelivery twice.
 * Each entry is also added to its tenant's history index, a sorted set scored by event timestamp
 * whose members are the stream ids zero-padded (`<15-digit ms>-<7-digit seq>`), so members of one
 * timestamp order by position.
 * KEYS, 5 per event: stream, (tenant, id) marker, subject-latest marker, legacy id marker, tenant
 * history index. ARGV: count, maxLen, ttlS, then 4 per event: id, tenant, timestampMs, body.
 * Returns 3 values per event: appended (1) or duplicate (0), stream id, out of order (1/0).
 */
const APPEND_SCRIPT = `
local n = tonumber(ARGV[1])
local out = {}
for i = 0, n - 1 do
  local k = i * 5
  local a = 3 + i * 4
  local existing = redis.call('GET', KEYS[k + 2]) or redis.call('GET', KEYS[k + 4])
  if existing then
    out[#out + 1] = 0
    out[#out + 1] = existing
    out[#out + 1] = 0
  else
    local ts = tonumber(ARGV[a + 3])
    local latest = tonumber(redis.call('GET', KEYS[k + 3]) or '-1')
    local ooo = 0
    if latest > ts then ooo = 1 else redis.call('SET', KEYS[k + 3], ARGV[a + 3], 'EX', ARGV[3]) end
    local id = redis.call('XADD', KEYS[k + 1], 'MAXLEN', '~', ARGV[2], '*', 'id', ARGV[a + 1], 'tenant', ARGV[a + 2], 'ooo', ooo, 'body', ARGV[a + 4])
    redis.call('SET', KEYS[k + 2], id, 'EX', ARGV[3])
    local dash = string.find(id, '-')
    redis.call('ZADD', KEYS[k + 5], ts, string.format('%015.0f-%07.0f', tonumber(string.sub(id, 1, dash - 1)), tonumber(string.sub(id, dash + 1))))
    out[#out + 1] = 1
    out[#out + 1] = id
    out[#out + 1] = ooo
  end
end
return out
`;
const APPEND_SCRIPT_SHA = createHash('sha1').update(APPEND_SCRIPT).digest('hex');

/** Most events one append script call carries; a longer queue is sent as several pipelined calls. */
export const MAX_APPEND_BATCH = 256;

/** Stream ids are `<ms>-<seq>`; positions pack them into one ordered 64-bit integer. */
function positionOf(streamId: string): bigint {
  const [ms, seq] = streamId.split('-');
  return (BigInt(ms!) << 20n) | BigInt(seq!);
}

function streamIdOf(position: bigint): string {
  return `${position >> 20n}-${position & 0xfffffn}`;
}

type StreamMessage = { id: string; message: Record<string, string> };

/** An append waiting for its batch. */
interface PendingAppend<E extends LogEvent> {
  event: E;
  resolve: (outcome: AppendOutcome<E>) => void;
  reject: (error: Error) => void;
}

/**
 * The distributed event log: one Redis Stream shared by every gateway replica. Appends are atomic
 * (Lua) and deduplicated by notification id, and group-committed: appends that arrive while a batch
 * is in flight go together in the next script call (at most {@link MAX_APPEND_BATCH} per call), each
 * answered only once Redis answered its batch (with `appendfsync always`, once it is fsynced); a
 * failed call rejects every append of its batch with {@link EventLogAppendError}; every replica tails the stream with XREAD and fans
 * entries out to its own subscribers, so an event acknowledged by one replica reaches subscribers
 * on all of them. Durability is Redis's: run it with `appendonly yes` (`appendfsync always` for
 * no loss on power failure).
 */
export async function createRedisEventLog<E extends LogEvent = CardEvent>(
  options: RedisEventLogOptions<E>,
): Promise<EventLog<E>> {
  const kind = options.kind ?? (CARD_EVENT_LOG as unknown as EventLogKind<E>);
  const prefix =
    options.prefix ?? (kind.name === 'card_events' ? 'cardgraph:{events}' : `cardgraph:{${kind.name}}`);
  const streamKey = `${prefix}:stream`;
  const now = options.now ?? Date.now;
  const ttlS = Math.max(1, Math.ceil(options.retention.maxAgeMs / 1000));
  const client = createClient({ url: options.url });
  client.on('error', (error: Error) =>
    options.logger.error({ err: error.message }, 'redis event log connection error'),
  );
  await client.connect();
  const tailClient = client.duplicate();
  tailClient.on('error', (error: Error) =>
    options.logger.error({ err: error.message }, 'redis event log tail connection error'),
  );
  const listeners = new Set<(event: Logged<E>) => void>();
  let closed = false;
  let tailLoop: Promise<void> | undefined;

  function fromMessage(message: StreamMessage): Logged<E> {
    return toLoggedEvent(
      JSON.parse(message.message.body!) as E,
      positionOf(message.id),
      message.message.ooo === '1',
    );
  }

  async function range(start: string, count: number): Promise<StreamMessage[]> {
    return (await client.xRange(streamKey, start, '+', { COUNT: count })) as StreamMessage[];
  }

  async function scan(filter: EventLogFilter, after: bigint | null, limit: number): Promise<Logged<E>[]> {
    const out: Logged<E>[] = [];
    let start = after === null ? '-' : `(${streamIdOf(after)}`;
    const batch = Math.max(100, limit);
    while (out.length < limit) {
      const messages = await range(start, batch);
      for (const message of messages) {
        const event = fromMessage(message);
        if (matchesFilter(event, filter, kind)) out.push(event);
        if (out.length === limit) break;
      }
      if (messages.length < batch) break;
      start = `(${messages[messages.length - 1]!.id}`;
    }
    return out;
  }

  /** The position of a history index member (`<ms>-<seq>`, zero-padded). */
  function positionOfMember(member: string): bigint {
    // BigInt reads the zero-padded parts as they are.
    return positionOf(member);
  }

  /** The history index of a tenant (see APPEND_SCRIPT). */
  function historyKey(tenant: string): string {
    return `${prefix}:history:${tenant}`;
  }

  /**
   * Up to `limit` events of `tenant` matching `filter` after `after` in (timestamp, position) order,
   * from the tenant's index: ZRANGE BYSCORE from the cursor's timestamp, then one XRANGE per member
   * (pipelined). Members whose entry retention already removed are dropped from the index.
   */
  async function historyOf(
    tenant: string,
    filter: EventLogFilter,
    after: HistoryCursor | null,
    limit: number,
  ): Promise<Logged<E>[]> {
    const key = historyKey(tenant);
    const out: Logged<E>[] = [];
    const batch = Math.max(limit + 10, 100);
    let offset = 0;
    const min = after ? String(after.timestampMs) : '-inf';
    while (out.length < limit) {
      const members = await client.zRangeWithScores(key, min, '+inf', {
        BY: 'SCORE',
        LIMIT: { offset, count: batch },
      });
      offset += members.length;
      const candidates = members.filter(
        (m) => !after || m.score > after.timestampMs || positionOfMember(m.value) > after.position,
      );
      const entries = await Promise.all(
        candidates.map((m) => {
          const id = streamIdOf(positionOfMember(m.value));
          return client.xRange(streamKey, id, id);
        }),
      );
      const gone: string[] = [];
      for (const [i, found] of entries.entries()) {
        const message = (found as StreamMessage[])[0];
        if (!message) {
          gone.push(candidates[i]!.value);
          continue;
        }
        const event = fromMessage(message);
        if (matchesFilter(event, filter, kind)) out.push(event);
        if (out.length === limit) break;
      }
      if (gone.length > 0) await client.zRem(key, gone);
      if (members.length < batch) break;
    }
    return out;
  }

  /** Appends waiting for the next batch, in arrival order. */
  let queue: PendingAppend<E>[] = [];
  /** The batches in flight, if any: appends arriving meanwhile wait for them (group commit). */
  let flushing: Promise<void> | undefined;

  /** One call of the append script for `batch`; resolves each waiter once Redis answered. */
  async function commit(batch: PendingAppend<E>[]): Promise<void> {
    let reply: (number | string)[];
    try {
      const keys: string[] = [];
      const args: string[] = [String(batch.length), String(options.retention.maxCount), String(ttlS)];
      for (const { event } of batch) {
        keys.push(
          streamKey,
          `${prefix}:id:${event.tenant}:${event.id}`,
          `${prefix}:latest:${event.tenant}:${kind.subjectOf(event)}`,
          `${prefix}:id:${event.id}`,
          historyKey(event.tenant),
        );
        args.push(event.id, event.tenant, String(Date.parse(event.timestamp)), JSON.stringify(event));
      }
      reply = (await runAppendScript(keys, args)) as (number | string)[];
    } catch (error) {
      // Nothing of this batch is acknowledged: every waiter is told, the sender retries (a retry of
      // an entry the script did write before failing is then recognised as a duplicate).
      const failure = new EventLogAppendError((error as Error).message, { cause: error });
      for (const { reject } of batch) reject(failure);
      return;
    }
    for (const [i, { event, resolve }] of batch.entries()) {
      const streamId = String(reply[i * 3 + 1]);
      resolve(
        reply[i * 3] === 0
          ? { outcome: 'duplicate', position: positionOf(streamId) }
          : {
              outcome: 'appended',
              event: toLoggedEvent(event, positionOf(streamId), reply[i * 3 + 2] === 1),
            },
      );
    }
  }

  /** EVALSHA of the append script, loading it with EVAL when Redis does not know it (yet). */
  async function runAppendScript(keys: string[], args: string[]): Promise<unknown> {
    try {
      return await client.evalSha(APPEND_SCRIPT_SHA, { keys, arguments: args });
    } catch (error) {
      if (!(error as Error).message?.startsWith('NOSCRIPT')) throw error;
      return await client.eval(APPEND_SCRIPT, { keys, arguments: args });
    }
  }

  /**
   * Sends everything queued, in batches of at most {@link MAX_APPEND_BATCH} (pipelined), and again
   * while appends arrived during the round trip: concurrent appends share one script call, and the
   * batch of a busy moment grows with the load.
   */
  function flush(): Promise<void> {
    flushing = (async () => {
      while (queue.length > 0) {
        const pending = queue;
        queue = [];
        const batches: Promise<void>[] = [];
        for (let i = 0; i < pending.length; i += MAX_APPEND_BATCH) {
          batches.push(commit(pending.slice(i, i + MAX_APPEND_BATCH)));
        }
        await Promise.all(batches);
      }
      flushing = undefined;
    })();
    return flushing;
  }

  async function runTail(fromId: string): Promise<void> {
    let lastId = fromId;
    while (!closed) {
      try {
        const reply = (await tailClient.xRead(
          { key: streamKey, id: lastId },
          { BLOCK: options.blockMs ?? 2000, COUNT: 500 },
        )) as { name: string; messages: StreamMessage[] }[] | null;
        for (const stream of reply ?? []) {
          for (const message of stream.messages) {
            lastId = message.id;
            const event = fromMessage(message);
            for (const listener of listeners) listener(event);
          }
        }
      } catch (error) {
        if (closed) return;
        options.logger.error({ err: (error as Error).message }, 'redis event log tail failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  return {
    append(event) {
      if (closed) return Promise.reject(new EventLogAppendError('the event log is closed'));
      return new Promise<AppendOutcome<E>>((resolve, reject) => {
        queue.push({ event, resolve, reject });
        if (!flushing) void flush();
      });
    },

    readAfter: scan,

    async history(filter, after, limit) {
      // Each tenant's index is read from the cursor on (a page costs the page, not what is
      // retained); several tenants are merged by (timestamp, position).
      const pages = await Promise.all(
        filter.tenants.map((tenant) => historyOf(tenant, filter, after, limit)),
      );
      return pages
        .flat()
        .sort(
          (a, b) =>
            a.timestampMs - b.timestampMs || (a.position < b.position ? -1 : a.position > b.position ? 1 : 0),
        )
        .slice(0, limit);
    },

    async tail(listener) {
      listeners.add(listener);
      if (!tailLoop) {
        await tailClient.connect();
        // Positioned at the newest entry now, so nothing appended after this call is missed.
        const newest = (await client.xRevRange(streamKey, '+', '-', { COUNT: 1 })) as StreamMessage[];
        tailLoop = runTail(newest[0]?.id ?? '0-0');
      }
      return () => listeners.delete(listener);
    },

    async trim() {
      const minId = `${now() - options.retention.maxAgeMs}-0`;
      const byAge = await client.xTrim(streamKey, 'MINID', minId, { strategyModifier: '~' });
      const byCount = await client.xTrim(streamKey, 'MAXLEN', options.retention.maxCount, {
        strategyModifier: '~',
      });
      return Number(byAge) + Number(byCount);
    },

    async ping() {
      // While disconnected node-redis queues commands until it reconnects; answer at once instead.
      if (closed || !client.isReady)
        throw Object.assign(new Error('redis not connected'), { code: 'disconnected' });
      await client.ping();
    },

    appendedAtMs: (event) => Number(event.position >> 20n),

    async close() {
      if (closed) return;
      closed = true;
      listeners.clear();
      // Appends already queued are committed and answered first.
      await flushing;
      if (tailClient.isOpen) tailClient.destroy();
      await tailLoop;
      await client.close();
    },
  };
}
