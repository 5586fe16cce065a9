import { z } from 'zod';
import { commaList, integer, optionalString, redisUrl, type SettingsSection } from './fields.ts';

/** The durable card event log and the caches replicas share. */
export const eventsSettings = {
  title: 'Event log and shared caches',
  about: '',
  shape: {
    EVENTS_BACKEND: z
      .enum(['sqlite', 'redis'])
      .default('sqlite')
      .describe(
        'Durable card event log: sqlite (one gateway, file in DATA_DIR) or redis (Redis Streams shared by replicas; run Redis with appendonly yes).',
      ),
    DATA_DIR: z.string().min(1).default('./data').describe('Directory of the sqlite event log.'),
    REDIS_URL: redisUrl.optional().describe('Redis of the event log; required when EVENTS_BACKEND=redis.'),
    REDIS_SENTINELS: commaList
      .pipe(
        z
          .array(
            z
              .string()
              .regex(/^[A-Za-z0-9.-]+:\d{1,5}$|^\[[0-9A-Fa-f:.]+\]:\d{1,5}$/, 'each sentinel is host:port')
              .refine(
                (entry) => Number(entry.slice(entry.lastIndexOf(':') + 1)) <= 65_535,
                'port above 65535',
              ),
          )
          .min(1),
      )
      .optional()
      .describe(
        "Redis Sentinel: comma-separated host:port of the sentinels. The event log asks them for the primary and follows it when they fail over; REDIS_URL then gives its credentials, database and TLS only (the caches' Redis is connected to directly, without Sentinel). Goes with REDIS_SENTINEL_MASTER.",
      ),
    REDIS_SENTINEL_MASTER: optionalString.describe('The monitored master name of REDIS_SENTINELS.'),
    REDIS_MIN_REPLICAS_ACK: integer(0, 16, 0).describe(
      "Replicas that must hold an appended event before its webhook is acknowledged (Redis WAIT); 0: the primary's answer suffices. Fewer within REDIS_REPLICAS_ACK_TIMEOUT_MS: the webhook is not acknowledged and the provider retries.",
    ),
    REDIS_REPLICAS_ACK_TIMEOUT_MS: integer(10, 60_000, 1_000).describe(
      'Longest wait for those replicas (ms); later the append fails.',
    ),
    REDIS_CACHE_URL: redisUrl
      .optional()
      .describe(
        "Redis of the caches shared by replicas (APQ store, card change notices); REDIS_URL when unset. A Redis of their own keeps a full cache from ever refusing the event log's appends.",
      ),
    EVENTS_RETENTION_HOURS: z.coerce
      .number()
      .positive()
      .max(24 * 365)
      .default(168)
      .describe('Retention of the event log: events older than this (hours) are dropped.'),
    EVENTS_RETENTION_COUNT: integer(100, 10_000_000, 100_000).describe(
      'Retention of the event log: at most this many events are kept.',
    ),
    UNMAPPED_RETENTION_HOURS: z.coerce
      .number()
      .positive()
      .max(24 * 365)
      .default(72)
      .describe(
        'Retention of the unmapped notifications, their own: entries older than this (hours) are dropped.',
      ),
    UNMAPPED_MAX_BYTES: integer(65_536, 1_073_741_824, 16_777_216).describe(
      'Retention of the unmapped notifications: the oldest are dropped once the stored entries hold more than this (bytes of their JSON text).',
    ),
  },
} satisfies SettingsSection;

type EventsEnv = z.output<z.ZodObject<typeof eventsSettings.shape>>;

/** The event log's settings. */
export interface EventsConfig {
  /** `sqlite`: one gateway, log in `dataDir`; `redis`: Redis Streams shared by replicas. */
  backend: 'sqlite' | 'redis';
  dataDir: string;
  redisUrl?: string;
  /**
   * Redis Sentinel (`REDIS_SENTINELS` host:port list, `REDIS_SENTINEL_MASTER`): the event log asks
   * the sentinels for the primary and follows it across failovers; `REDIS_URL` then gives only
   * credentials, database and TLS.
   */
  redisSentinel?: { nodes: { host: string; port: number }[]; masterName: string };
  /**
   * Replicas that must hold an appended event before its webhook is acknowledged
   * (`REDIS_MIN_REPLICAS_ACK`, Redis `WAIT`); 0: the primary's answer suffices.
   */
  redisMinReplicasAck: number;
  /** Longest wait for those replicas (ms, `REDIS_REPLICAS_ACK_TIMEOUT_MS`); later the append fails. */
  redisReplicasAckTimeoutMs: number;
  /**
   * Redis of the caches shared by replicas (APQ, cache invalidations): `REDIS_CACHE_URL`, else
   * `redisUrl`. A Redis of their own keeps a full cache from ever stopping the event log's appends.
   */
  cacheRedisUrl?: string;
  /** Retention: events older than this (ms) are dropped. */
  retentionMaxAgeMs: number;
  /** Retention: at most this many events are kept. */
  retentionMaxCount: number;
  /**
   * Retention of the unmapped notifications (`Query.unmappedNotifications`), their own: entries
   * older than this (ms, `UNMAPPED_RETENTION_HOURS`) are dropped, and the oldest once the stored
   * entries hold more than `unmappedMaxBytes` (`UNMAPPED_MAX_BYTES`, their JSON text); at most
   * `retentionMaxCount` entries too.
   */
  unmappedRetentionMaxAgeMs: number;
  /** Byte bound of the stored unmapped notifications (bytes of their JSON text). */
  unmappedMaxBytes: number;
}

/** The Redis backend needs its address; Sentinel's two variables go together. */
export function refineEvents(env: EventsEnv, ctx: z.RefinementCtx): void {
  if (env.EVENTS_BACKEND === 'redis' && !env.REDIS_URL) {
    ctx.addIssue({ code: 'custom', path: ['REDIS_URL'], message: 'required when EVENTS_BACKEND=redis' });
  }
  if ((env.REDIS_SENTINELS === undefined) !== (env.REDIS_SENTINEL_MASTER === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [env.REDIS_SENTINELS === undefined ? 'REDIS_SENTINELS' : 'REDIS_SENTINEL_MASTER'],
      message: 'REDIS_SENTINELS and REDIS_SENTINEL_MASTER go together',
    });
  }
}

/** `host:port` or `[ipv6]:port` (validated) as its parts. */
function hostAndPort(entry: string): { host: string; port: number } {
  const colon = entry.lastIndexOf(':');
  return { host: entry.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), port: Number(entry.slice(colon + 1)) };
}

/** {@link EventsConfig} from the parsed variables. */
export function eventsConfig(e: EventsEnv): EventsConfig {
  return {
    backend: e.EVENTS_BACKEND,
    dataDir: e.DATA_DIR,
    ...(e.REDIS_URL ? { redisUrl: e.REDIS_URL } : {}),
    ...(e.REDIS_SENTINELS && e.REDIS_SENTINEL_MASTER
      ? { redisSentinel: { nodes: e.REDIS_SENTINELS.map(hostAndPort), masterName: e.REDIS_SENTINEL_MASTER } }
      : {}),
    redisMinReplicasAck: e.REDIS_MIN_REPLICAS_ACK,
    redisReplicasAckTimeoutMs: e.REDIS_REPLICAS_ACK_TIMEOUT_MS,
    ...(e.REDIS_CACHE_URL || e.REDIS_URL ? { cacheRedisUrl: e.REDIS_CACHE_URL ?? e.REDIS_URL } : {}),
    retentionMaxAgeMs: Math.round(e.EVENTS_RETENTION_HOURS * 3_600_000),
    retentionMaxCount: e.EVENTS_RETENTION_COUNT,
    unmappedRetentionMaxAgeMs: Math.round(e.UNMAPPED_RETENTION_HOURS * 3_600_000),
    unmappedMaxBytes: e.UNMAPPED_MAX_BYTES,
  };
}
