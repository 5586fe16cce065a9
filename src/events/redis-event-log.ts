import { createHash } from 'node:crypto';
import type { createClient } from 'redis';
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

/** A Redis Sentinel deployment the log finds its primary through (`REDIS_SENTINELS`, `REDIS_SENTINEL_MASTER`). */
export interface RedisSentinelSettings {
  /** Sentinel addresses; any one that answers tells the current primary (three or more in production). */
  nodes: { host: string; port: number }[];
  /** The monitored master's name (`sentinel monitor <name> …`). */
  masterName: string;
}

/** Options of {@link RedisEventLog.open}. */
export interface RedisEventLogOptions<E extends LogEvent = CardEvent> {
  /** Which events the log holds; card events by default. */
  kind?: EventLogKind<E>;
  /**
   * `redis[s]://[user:password@]host:port[/db]`: the server, or with `sentinel` only its credentials,
   * database and TLS (the address comes from the sentinels).
   */
  url: string;
  /** Find the primary through Sentinel and follow it across failovers (issue 20, item 11). */
  sentinel?: RedisSentinelSettings;
  /**
   * Replicas that must hold an append before it is acknowledged (`WAIT n timeout` after each batch,
   * `REDIS_MIN_REPLICAS_ACK`); 0 (default) acknowledges once the primary answered.
   */
  minReplicasAck?: number;
  /** Longest `WAIT` for `minReplicasAck` replicas (ms, `REDIS_REPLICAS_ACK_TIMEOUT_MS`); default 1,000. */
  replicasAckTimeoutMs?: number;
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
 * newest of its subject, XADD, remember the (tenant, id) for the receipt period. One script, so a
 * crash can never leave an id marked as seen without its entry (which would lose the event on
 * redelivery). Each entry is also added to its tenant's history index, a sorted set scored by event
 * timestamp whose members are the stream ids zero-padded (`<15-digit ms>-<7-digit seq>`), so members
 * of one timestamp order by position.
 *
 * The (tenant, id) marker is {@link seenKey}: length-prefixed, so no tenant and id pair can spell
 * another's key. Markers of earlier versions (`<prefix>:id:<tenant>:<id>`, and before dedupe was per
 * tenant `<prefix>:id:<id>`) can be read as either form (`id:tntsandbox1:coll-1` is vault 1's
 * `coll-1` or the old global marker of id `tntsandbox1:coll-1`), so one counts only when the entry
 * it points at is that same (tenant, id); when the entry already left the stream, only for an event
 * stamped before the first append with length-prefixed markers (the era key, set once from the
 * server clock): a redelivery of a notification from that era is still recognised, and a new
 * notification is never taken for an old one of another vault.
 * KEYS: stream, era key, then 5 per event: (tenant, id) marker, subject-latest marker, legacy
 * (tenant, id) marker, legacy id marker, tenant history index. ARGV: count, maxLen, ttlS, then 5 per
 * event: id, tenant, timestampMs, body, unordered (1: its own time was flagged, so it neither reads
 * nor moves the subject-latest marker and is never out of order; else 0).
 * Returns 3 values per event: appended (1) or duplicate (0), stream id, out of order (1/0).
 */
const APPEND_SCRIPT = `
local n = tonumber(ARGV[1])
local stream = KEYS[1]
local era = tonumber(redis.call('GET', KEYS[2]) or '-1')
if era < 0 then
  local now = redis.call('TIME')
  era = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  redis.call('SET', KEYS[2], era)
end
local function legacy(key, id, tenant, ts)
  local streamId = redis.call('GET', key)
  if not streamId then return nil end
  local entry = redis.call('XRANGE', stream, streamId, streamId)[1]
  if not entry then
    if ts < era then return streamId end
    return nil
  end
  local fields = entry[2]
  local entryId, entryTenant
  for j = 1, #fields, 2 do
    if fields[j] == 'id' then entryId = fields[j + 1] elseif fields[j] == 'tenant' then entryTenant = fields[j + 1] end
  end
  if entryId == id and entryTenant == tenant then return streamId end
  return nil
end
local out = {}
for i = 0, n - 1 do
  local k = 2 + i * 5
  local a = 3 + i * 5
  local ts = tonumber(ARGV[a + 3])
  local existing = redis.call('GET', KEYS[k + 1])
    or legacy(KEYS[k + 3], ARGV[a + 1], ARGV[a + 2], ts)
    or legacy(KEYS[k + 4], ARGV[a + 1], ARGV[a + 2], ts)
  if existing then
    out[#out + 1] = 0
    out[#out + 1] = existing
    out[#out + 1] = 0
  else
    local ooo = 0
    if ARGV[a + 5] == '0' then
      local latest = tonumber(redis.call('GET', KEYS[k + 2]) or '-1')
      if latest > ts then ooo = 1 else redis.call('SET', KEYS[k + 2], ARGV[a + 3], 'EX', ARGV[3]) end
    end
    local id = redis.call('XADD', stream, 'MAXLEN', '~', ARGV[2], '*', 'id', ARGV[a + 1], 'tenant', ARGV[a + 2], 'ooo', ooo, 'body', ARGV[a + 4])
    redis.call('SET', KEYS[k + 1], id, 'EX', ARGV[3])
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

/**
 * The (tenant, id) dedupe marker of an event: `<prefix>:seen:<tenant length>:<tenant>:<id>`. The
 * length prefix makes the key unambiguous whatever characters tenant and id hold (an id may hold
 * `:`), so no two pairs share one.
 */
export function seenKey(prefix: string, tenant: string, id: string): string {
  return `${prefix}:seen:${tenant.length}:${tenant}:${id}`;
}

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
 * The Redis commands the log sends, on whichever client holds them: a plain client
 * (`createClient`) or a Sentinel lease (`createSentinel().acquire()`), which share these signatures.
 */
interface LogCommands {
  get(key: string): Promise<string | null>;
  xRange(key: string, start: string, end: string, options?: { COUNT: number }): Promise<unknown>;
  xRevRange(key: string, start: string, end: string, options?: { COUNT: number }): Promise<unknown>;
  xRead(stream: { key: string; id: string }, options: { BLOCK: number; COUNT: number }): Promise<unknown>;
  xTrim(
    key: string,
    strategy: 'MAXLEN' | 'MINID',
    threshold: string | number,
    options?: { strategyModifier: '~' },
  ): Promise<number>;
  zRangeWithScores(
    key: string,
    min: string,
    max: string,
    options: { BY: 'SCORE'; LIMIT: { offset: number; count: number } },
  ): Promise<{ value: string; score: number }[]>;
  zRem(key: string, members: string[]): Promise<number>;
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  /** `WAIT numreplicas timeout`: replicas holding every write sent earlier on this connection. */
  wait(replicas: number, timeoutMs: number): Promise<number>;
  ping(): Promise<unknown>;
}

/**
 * The log's three connections to the primary: `commands` (reads, trims, pings), `appends` (the
 * append script, then `WAIT` on the same connection, which is what WAIT measures), `tail` (blocking
 * XREAD). `epoch` grows whenever a connection to the primary broke or the primary changed: an
 * append whose script and WAIT did not run within one epoch may have written to a server that is
 * gone, so its WAIT proves nothing.
 */
interface LogConnections {
  commands: LogCommands;
  appends: LogCommands;
  tail: LogCommands;
  epoch(): number;
  /** Whether the primary currently takes commands (readiness answers at once when not). */
  isReady(): boolean;
  /** Connects the tail's connection (on first `tail()`). */
  openTail(): Promise<void>;
  /** Ends the blocked tail read at once. */
  destroyTail(): void;
  close(): Promise<void>;
}

/** One server at `url`: three node-redis clients. */
async function connectToServer(url: string, logger: Logger): Promise<LogConnections> {
  // node-redis (570 modules) loads only for a Redis deployment, never at a one-gateway start.
  const { createClient } = await import('redis');
  let epoch = 0;
  const watch = (client: ReturnType<typeof createClient>, name: string) => {
    client.on('error', (error: Error) => {
      epoch++;
      logger.error({ err: error.message, connection: name }, 'redis event log connection error');
    });
    // Every reconnection is a new connection: WAIT there says nothing of writes sent before.
    client.on('connect', () => epoch++);
    return client;
  };
  const commands = watch(createClient({ url }), 'commands');
  await commands.connect();
  const appends = watch(commands.duplicate(), 'appends');
  try {
    await appends.connect();
  } catch (error) {
    commands.destroy();
    throw error;
  }
  const tail = watch(commands.duplicate(), 'tail');
  return {
    commands: commands as unknown as LogCommands,
    appends: appends as unknown as LogCommands,
    tail: tail as unknown as LogCommands,
    epoch: () => epoch,
    // While disconnected node-redis queues commands until it reconnects; answer at once instead.
    isReady: () => commands.isReady && appends.isReady,
    openTail: async () => {
      await tail.connect();
    },
    destroyTail: () => {
      if (tail.isOpen) tail.destroy();
    },
    close: async () => {
      if (appends.isOpen) await appends.close();
      await commands.close();
    },
  };
}

/**
 * The primary of a Sentinel deployment (node-redis `createSentinel`): a pool of three connections
 * to whichever server the sentinels name primary, replaced when they fail over (Sentinel's
 * `switch-master` announcement, or a command failing with READONLY or on a lost connection, which
 * node-redis then re-sends to the new primary). The append and tail connections are leases held
 * for the log's lifetime; commands take the third.
 */
async function connectThroughSentinel(
  url: string,
  settings: RedisSentinelSettings,
  logger: Logger,
): Promise<LogConnections> {
  const { createSentinel } = await import('redis');
  const parsed = new URL(url);
  const database = Number(parsed.pathname.slice(1) || '0');
  const sentinel = createSentinel({
    name: settings.masterName,
    sentinelRootNodes: settings.nodes,
    masterPoolSize: 3,
    nodeClientOptions: {
      ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
      ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
      ...(database > 0 ? { database } : {}),
      ...(parsed.protocol === 'rediss:' ? { socket: { tls: true as const } } : {}),
    },
  });
  let epoch = 0;
  sentinel.on('error', (error: Error) =>
    logger.error({ err: error.message }, 'redis event log sentinel error'),
  );
  sentinel.on(
    'client-error',
    (event: { type: string; node: { host: string; port: number }; error: Error }) => {
      if (event.type === 'MASTER') epoch++;
      logger.error(
        { err: event.error.message, node: `${event.node.host}:${event.node.port}`, role: event.type },
        'redis event log connection error',
      );
    },
  );
  sentinel.on('topology-change', (event: { type: string; node?: { host: string; port: number } }) => {
    if (event.type !== 'MASTER_CHANGE') return;
    epoch++;
    logger.warn(
      { primary: `${event.node?.host}:${event.node?.port}` },
      'redis event log follows a new primary',
    );
  });
  await sentinel.connect();
  // Two leases of the three connections, held for the log's lifetime (taken at once: the pool is idle).
  const appends = await sentinel.acquire();
  const tail = await sentinel.acquire();
  let tailReleased = false;
  const releaseTail = () => {
    if (tailReleased) return;
    tailReleased = true;
    void tail.release();
  };
  return {
    commands: sentinel as unknown as LogCommands,
    appends: appends as unknown as LogCommands,
    tail: tail as unknown as LogCommands,
    epoch: () => epoch,
    isReady: () => sentinel.isReady && sentinel.getMasterNode() !== undefined,
    openTail: async () => undefined,
    // A blocked XREAD on a lease cannot be cut alone; the pool's close() destroys it.
    destroyTail: releaseTail,
    close: async () => {
      void appends.release();
      releaseTail();
      await sentinel.destroy();
    },
  };
}

/**
 * The distributed event log: one Redis Stream shared by every gateway replica. Appends are atomic
 * (Lua) and deduplicated by notification id, and group-committed: appends that arrive while a batch
 * is in flight go together in the next script call (at most {@link MAX_APPEND_BATCH} per call), each
 * answered only once Redis answered its batch (with `appendfsync always`, once it is fsynced) and,
 * with `minReplicasAck`, once that many replicas hold it (`WAIT`); a failed call or a short WAIT
 * rejects every append of its batch with {@link EventLogAppendError}, so the webhook is not
 * acknowledged and the provider retries (dedupe by tenant and id keeps the retry from appending a
 * second entry when the first did reach Redis). Every replica tails the stream with XREAD and fans
 * entries out to its own subscribers, so an event acknowledged by one replica reaches subscribers
 * on all of them. With `sentinel` the log follows the primary across failovers (issue 20, item 11).
 * Durability is Redis's: run it with `appendonly yes` (`appendfsync always` for no loss on power
 * failure), and with replicas and `minReplicasAck` for none on the loss of the primary.
 */
export class RedisEventLog<E extends LogEvent = CardEvent> implements EventLog<E> {
  readonly #kind: EventLogKind<E>;
  readonly #prefix: string;
  readonly #streamKey: string;
  readonly #retention: RetentionPolicy;
  /** How long dedupe markers live, in whole seconds: the retention age or the receipt period, whichever is longer. */
  readonly #ttlS: number;
  readonly #now: () => number;
  readonly #blockMs: number;
  readonly #minReplicasAck: number;
  readonly #replicasAckTimeoutMs: number;
  readonly #logger: Logger;
  readonly #redis: LogConnections;
  readonly #listeners = new Set<(event: Logged<E>) => void>();
  #closed = false;
  #tailLoop: Promise<void> | undefined;
  /** Appends waiting for the next batch, in arrival order. */
  #queue: PendingAppend<E>[] = [];
  /** The batches in flight, if any: appends arriving meanwhile wait for them (group commit). */
  #flushing: Promise<void> | undefined;

  /**
   * Connects (to `url`, or through `sentinel` to its primary) and returns the log.
   * @throws the connection error when Redis (or every sentinel) is unreachable.
   */
  static async open<E extends LogEvent = CardEvent>(
    options: RedisEventLogOptions<E>,
  ): Promise<RedisEventLog<E>> {
    const redis = options.sentinel
      ? await connectThroughSentinel(options.url, options.sentinel, options.logger)
      : await connectToServer(options.url, options.logger);
    return new RedisEventLog(options, redis);
  }

  private constructor(options: RedisEventLogOptions<E>, redis: LogConnections) {
    this.#kind = options.kind ?? (CARD_EVENT_LOG as unknown as EventLogKind<E>);
    this.#prefix =
      options.prefix ??
      (this.#kind.name === 'card_events' ? 'cardgraph:{events}' : `cardgraph:{${this.#kind.name}}`);
    this.#streamKey = `${this.#prefix}:stream`;
    this.#retention = options.retention;
    this.#ttlS = Math.max(
      1,
      Math.ceil(Math.max(options.retention.maxAgeMs, options.retention.receiptMs ?? 0) / 1000),
    );
    this.#now = options.now ?? Date.now;
    this.#blockMs = options.blockMs ?? 2000;
    this.#minReplicasAck = options.minReplicasAck ?? 0;
    this.#replicasAckTimeoutMs = options.replicasAckTimeoutMs ?? 1000;
    this.#logger = options.logger;
    this.#redis = redis;
  }

  append(event: E): Promise<AppendOutcome<E>> {
    if (this.#closed) return Promise.reject(new EventLogAppendError('the event log is closed'));
    return new Promise<AppendOutcome<E>>((resolve, reject) => {
      this.#queue.push({ event, resolve, reject });
      if (!this.#flushing) void this.#flush();
    });
  }

  async readAfter(filter: EventLogFilter, after: bigint | null, limit: number): Promise<Logged<E>[]> {
    const out: Logged<E>[] = [];
    let start = after === null ? '-' : `(${streamIdOf(after)}`;
    const batch = Math.max(100, limit);
    while (out.length < limit) {
      const messages = (await this.#redis.commands.xRange(this.#streamKey, start, '+', {
        COUNT: batch,
      })) as StreamMessage[];
      for (const message of messages) {
        const event = this.#fromMessage(message);
        if (matchesFilter(event, filter, this.#kind)) out.push(event);
        if (out.length === limit) break;
      }
      if (messages.length < batch) break;
      start = `(${messages[messages.length - 1]!.id}`;
    }
    return out;
  }

  async history(filter: EventLogFilter, after: HistoryCursor | null, limit: number): Promise<Logged<E>[]> {
    // Each tenant's index is read from the cursor on (a page costs the page, not what is
    // retained); several tenants are merged by (timestamp, position).
    const pages = await Promise.all(
      filter.tenants.map((tenant) => this.#historyOf(tenant, filter, after, limit)),
    );
    return pages
      .flat()
      .sort(
        (a, b) =>
          a.timestampMs - b.timestampMs || (a.position < b.position ? -1 : a.position > b.position ? 1 : 0),
      )
      .slice(0, limit);
  }

  async byIds(tenant: string, ids: readonly string[]): Promise<Logged<E>[]> {
    const { commands } = this.#redis;
    // The (tenant, id) dedupe marker holds the entry's stream id (APPEND_SCRIPT); a marker outliving
    // its entry (retention by count) finds none.
    const streamIds = await Promise.all(
      ids.map(
        async (id) =>
          (await commands.get(seenKey(this.#prefix, tenant, id))) ??
          (await commands.get(`${this.#prefix}:id:${tenant}:${id}`)),
      ),
    );
    const found = await Promise.all(
      streamIds.map((streamId) =>
        streamId ? (commands.xRange(this.#streamKey, streamId, streamId) as Promise<StreamMessage[]>) : [],
      ),
    );
    // A marker of an earlier version may name another (tenant, id) (see APPEND_SCRIPT): only the
    // entry of this very pair is one of these.
    const wanted = new Set(ids);
    return found
      .flatMap((messages) => messages.slice(0, 1).map((message) => this.#fromMessage(message)))
      .filter((event) => event.tenant === tenant && wanted.has(event.id));
  }

  async tail(listener: (event: Logged<E>) => void): Promise<() => void> {
    this.#listeners.add(listener);
    if (!this.#tailLoop) {
      await this.#redis.openTail();
      // Positioned at the newest entry now, so nothing appended after this call is missed.
      const newest = (await this.#redis.commands.xRevRange(this.#streamKey, '+', '-', {
        COUNT: 1,
      })) as StreamMessage[];
      this.#tailLoop = this.#runTail(newest[0]?.id ?? '0-0');
    }
    return () => this.#listeners.delete(listener);
  }

  async trim(): Promise<number> {
    const minId = `${this.#now() - this.#retention.maxAgeMs}-0`;
    const byAge = await this.#redis.commands.xTrim(this.#streamKey, 'MINID', minId, {
      strategyModifier: '~',
    });
    const byCount = await this.#redis.commands.xTrim(this.#streamKey, 'MAXLEN', this.#retention.maxCount, {
      strategyModifier: '~',
    });
    const byBytes =
      this.#retention.maxBytes === undefined ? 0 : await this.#trimBytes(this.#retention.maxBytes);
    return Number(byAge) + Number(byCount) + byBytes;
  }

  /**
   * Drops the oldest entries beyond `maxBytes` of bodies (UTF-8 bytes of their JSON), exactly: the
   * stream is read newest first (XREVRANGE pages) until the bound is passed, then trimmed to the
   * oldest entry that fits (XTRIM MINID). Reads at most about `maxBytes`.
   * @returns how many entries were dropped.
   */
  async #trimBytes(maxBytes: number): Promise<number> {
    const { commands } = this.#redis;
    let total = 0;
    let kept: string | undefined;
    let end = '+';
    for (;;) {
      const page = (await commands.xRevRange(this.#streamKey, end, '-', { COUNT: 200 })) as StreamMessage[];
      for (const message of page) {
        total += Buffer.byteLength(message.message.body ?? '');
        if (total > maxBytes) {
          if (kept === undefined) return Number(await commands.xTrim(this.#streamKey, 'MAXLEN', 0));
          return Number(await commands.xTrim(this.#streamKey, 'MINID', kept));
        }
        kept = message.id;
      }
      if (page.length < 200) return 0;
      end = `(${page[page.length - 1]!.id}`;
    }
  }

  async ping(): Promise<void> {
    if (this.#closed || !this.#redis.isReady())
      throw Object.assign(new Error('redis not connected'), { code: 'disconnected' });
    await this.#redis.commands.ping();
  }

  appendedAtMs(event: Logged<E>): number {
    return Number(event.position >> 20n);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listeners.clear();
    // Appends already queued are committed and answered first.
    await this.#flushing;
    this.#redis.destroyTail();
    await this.#redis.close();
    await this.#tailLoop;
  }

  #fromMessage(message: StreamMessage): Logged<E> {
    return toLoggedEvent(
      JSON.parse(message.message.body!) as E,
      positionOf(message.id),
      message.message.ooo === '1',
    );
  }

  /** The history index of a tenant (see APPEND_SCRIPT). */
  #historyKey(tenant: string): string {
    return `${this.#prefix}:history:${tenant}`;
  }

  /**
   * Up to `limit` events of `tenant` matching `filter` after `after` in (timestamp, position) order,
   * from the tenant's index: ZRANGE BYSCORE from the cursor's timestamp, then one XRANGE per member
   * (pipelined). Members whose entry retention already removed are dropped from the index. Index
   * members are stream ids zero-padded, which BigInt reads as they are.
   */
  async #historyOf(
    tenant: string,
    filter: EventLogFilter,
    after: HistoryCursor | null,
    limit: number,
  ): Promise<Logged<E>[]> {
    const { commands } = this.#redis;
    const key = this.#historyKey(tenant);
    const out: Logged<E>[] = [];
    const batch = Math.max(limit + 10, 100);
    let offset = 0;
    const min = after ? String(after.timestampMs) : '-inf';
    while (out.length < limit) {
      const members = await commands.zRangeWithScores(key, min, '+inf', {
        BY: 'SCORE',
        LIMIT: { offset, count: batch },
      });
      offset += members.length;
      const candidates = members.filter(
        (m) => !after || m.score > after.timestampMs || positionOf(m.value) > after.position,
      );
      const entries = await Promise.all(
        candidates.map((m) => {
          const id = streamIdOf(positionOf(m.value));
          return commands.xRange(this.#streamKey, id, id);
        }),
      );
      const gone: string[] = [];
      for (const [i, found] of entries.entries()) {
        const message = (found as StreamMessage[])[0];
        if (!message) {
          gone.push(candidates[i]!.value);
          continue;
        }
        const event = this.#fromMessage(message);
        if (matchesFilter(event, filter, this.#kind)) out.push(event);
        if (out.length === limit) break;
      }
      if (gone.length > 0) await commands.zRem(key, gone);
      if (members.length < batch) break;
    }
    return out;
  }

  /**
   * Sends everything queued, in batches of at most {@link MAX_APPEND_BATCH} (pipelined), and again
   * while appends arrived during the round trip: concurrent appends share one script call (and one
   * WAIT), and the batch of a busy moment grows with the load.
   */
  #flush(): Promise<void> {
    this.#flushing = (async () => {
      while (this.#queue.length > 0) {
        const pending = this.#queue;
        this.#queue = [];
        const epoch = this.#redis.epoch();
        const batches: Promise<(() => void) | undefined>[] = [];
        for (let i = 0; i < pending.length; i += MAX_APPEND_BATCH) {
          batches.push(this.#commit(pending.slice(i, i + MAX_APPEND_BATCH)));
        }
        const answers = (await Promise.all(batches)).filter((answer) => answer !== undefined);
        if (answers.length === 0) continue;
        const replicated = await this.#awaitReplicas(epoch);
        if (replicated === true) for (const answer of answers) answer();
        else for (const { reject } of pending) reject(replicated);
      }
      this.#flushing = undefined;
    })();
    return this.#flushing;
  }

  /**
   * One call of the append script for `batch` on the append connection.
   * @returns what answers each waiter once the batch is confirmed (see {@link #awaitReplicas}), or
   *   undefined when the call failed and every waiter was rejected.
   */
  async #commit(batch: PendingAppend<E>[]): Promise<(() => void) | undefined> {
    let reply: (number | string)[];
    try {
      const keys: string[] = [this.#streamKey, `${this.#prefix}:seen-era`];
      const args: string[] = [String(batch.length), String(this.#retention.maxCount), String(this.#ttlS)];
      for (const { event } of batch) {
        keys.push(
          seenKey(this.#prefix, event.tenant, event.id),
          `${this.#prefix}:latest:${event.tenant}:${this.#kind.subjectOf(event)}`,
          `${this.#prefix}:id:${event.tenant}:${event.id}`,
          `${this.#prefix}:id:${event.id}`,
          this.#historyKey(event.tenant),
        );
        args.push(
          event.id,
          event.tenant,
          String(Date.parse(event.timestamp)),
          JSON.stringify(event),
          event.timestampFlag === undefined ? '0' : '1',
        );
      }
      reply = (await this.#runAppendScript(keys, args)) as (number | string)[];
    } catch (error) {
      // Nothing of this batch is acknowledged: every waiter is told, the sender retries (a retry of
      // an entry the script did write before failing is then recognised as a duplicate).
      const failure = new EventLogAppendError((error as Error).message, { cause: error });
      for (const { reject } of batch) reject(failure);
      return undefined;
    }
    return () => {
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
    };
  }

  /**
   * With `minReplicasAck`: `WAIT n timeout` on the append connection, after the batch's scripts.
   * A duplicate counts too: its first append may itself not have reached a replica yet.
   * @returns true when `n` replicas hold every write of the batch (or none are required), else the
   *   {@link EventLogAppendError} to reject the batch with: fewer replicas within the timeout, the
   *   WAIT failed, or the connection or primary changed since `epoch` (the WAIT would then measure
   *   another connection's writes, or another server's).
   */
  async #awaitReplicas(epoch: number): Promise<true | EventLogAppendError> {
    if (this.#minReplicasAck === 0) return true;
    let replicas: number;
    try {
      replicas = await this.#redis.appends.wait(this.#minReplicasAck, this.#replicasAckTimeoutMs);
    } catch (error) {
      return new EventLogAppendError(`WAIT failed: ${(error as Error).message}`, { cause: error });
    }
    if (this.#redis.epoch() !== epoch) {
      return new EventLogAppendError('the connection to the primary changed during the append');
    }
    if (replicas < this.#minReplicasAck) {
      this.#logger.warn(
        { replicas, required: this.#minReplicasAck, timeoutMs: this.#replicasAckTimeoutMs },
        'event log append not acknowledged: too few replicas hold it',
      );
      return new EventLogAppendError(
        `${replicas} of ${this.#minReplicasAck} replicas acknowledged within ${this.#replicasAckTimeoutMs} ms`,
      );
    }
    return true;
  }

  /** EVALSHA of the append script, loading it with EVAL when Redis does not know it (yet, or after a failover). */
  async #runAppendScript(keys: string[], args: string[]): Promise<unknown> {
    const { appends } = this.#redis;
    try {
      return await appends.evalSha(APPEND_SCRIPT_SHA, { keys, arguments: args });
    } catch (error) {
      if (!(error as Error).message?.startsWith('NOSCRIPT')) throw error;
      return await appends.eval(APPEND_SCRIPT, { keys, arguments: args });
    }
  }

  /** Reads the stream after `fromId` until closed, handing each entry to every listener. */
  async #runTail(fromId: string): Promise<void> {
    let lastId = fromId;
    while (!this.#closed) {
      try {
        const reply = (await this.#redis.tail.xRead(
          { key: this.#streamKey, id: lastId },
          { BLOCK: this.#blockMs, COUNT: 500 },
        )) as { name: string; messages: StreamMessage[] }[] | null;
        for (const stream of reply ?? []) {
          for (const message of stream.messages) {
            lastId = message.id;
            const event = this.#fromMessage(message);
            for (const listener of this.#listeners) listener(event);
          }
        }
      } catch (error) {
        if (this.#closed) return;
        this.#logger.error({ err: (error as Error).message }, 'redis event log tail failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }
}

/** {@link RedisEventLog.open}: the distributed event log, connected. */
export function createRedisEventLog<E extends LogEvent = CardEvent>(
  options: RedisEventLogOptions<E>,
): Promise<RedisEventLog<E>> {
  return RedisEventLog.open(options);
}
