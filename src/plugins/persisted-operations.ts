import { existsSync, readFileSync } from 'node:fs';
import { type APQStore, hashSHA256 } from '@graphql-yoga/plugin-apq';
import { usePersistedOperations as useTrustedOperations } from '@graphql-yoga/plugin-persisted-operations';
import { createGraphQLError, type GraphQLParams, type Plugin } from 'graphql-yoga';
import { LRUCache } from 'lru-cache';
import type { Config } from '../config/index.ts';
import { ConfigError } from '../config/index.ts';
import type { Logger } from '../lib/logger.ts';

/**
 * Persisted operations on every transport: Automatic Persisted Queries (APQ, Apollo's protocol) and
 * trusted documents (the manifest codegen writes from src/client/operations.graphql), per
 * `PERSISTED_OPERATIONS`:
 *
 * | mode      | manifest id               | APQ hash only / hash + query           | query text alone |
 * |-----------|---------------------------|----------------------------------------|------------------|
 * | `off`     | APQ lookup (as any hash)  | stored document / verified and stored* | runs             |
 * | `allow`   | runs its manifest document| stored document / verified and stored* | runs             |
 * | `require` | runs its manifest document| `persisted-operation-not-found`        | `persisted-operation-required` |
 *
 * (*) from an authenticated request only, once the document has passed validation (issue 20 item 1).
 *
 * A request naming a manifest id runs the manifest's document, whatever query text it also carries
 * (graphql-ws and graphql-sse clients must send a string; Apollo's links send the text they hold).
 * A manifest id is `sha256:<hex>` (GraphQL over HTTP, persisted documents appendix); `<hex>` alone is
 * accepted too, in `extensions.persistedQuery.sha256Hash`.
 *
 * APQ errors follow Apollo's protocol (`PersistedQueryNotFound` / `PERSISTED_QUERY_NOT_FOUND`, the
 * client then retries with the query; `PersistedQueryMismatch`); trusted-document refusals carry the
 * gateway's codes above (HTTP 400).
 */
export type PersistedOperationsPlugin = Plugin;

/** A trusted-documents manifest: document by lowercase sha256 hex (without the `sha256:` prefix). */
export type TrustedDocuments = ReadonlyMap<string, string>;

/** Largest document APQ stores (bytes of UTF-8); larger registrations run but are not stored. */
export const APQ_MAX_DOCUMENT_BYTES = 64 * 1024;

/**
 * Reads the trusted-documents manifest (`{ "sha256:<hex>": "<document>" }`, as written by the codegen
 * client preset's `persistedDocuments`).
 * @throws ConfigError naming `PERSISTED_OPERATIONS_MANIFEST` when `require` mode has no readable
 * manifest; in the other modes a missing manifest is an empty one.
 */
export function loadTrustedDocuments(
  settings: Pick<Config['persistedOperations'], 'mode' | 'manifestPath'>,
): TrustedDocuments {
  if (settings.mode === 'off') return new Map();
  if (!existsSync(settings.manifestPath)) {
    if (settings.mode === 'require') {
      throw new ConfigError(
        'Invalid configuration:\n  PERSISTED_OPERATIONS_MANIFEST: no manifest at this path (run `npm run codegen`), required when PERSISTED_OPERATIONS=require',
      );
    }
    return new Map();
  }
  const parsed: unknown = JSON.parse(readFileSync(settings.manifestPath, 'utf8'));
  const documents = new Map<string, string>();
  for (const [id, document] of Object.entries(parsed as Record<string, unknown>)) {
    const hex = manifestKey(id);
    if (!hex || typeof document !== 'string') {
      throw new ConfigError(
        'Invalid configuration:\n  PERSISTED_OPERATIONS_MANIFEST: expected { "sha256:<hex>": "<document>" }',
      );
    }
    documents.set(hex, document);
  }
  return documents;
}

/** `sha256:<hex>` or `<hex>` → lowercase hex; anything else → undefined. */
function manifestKey(id: string): string | undefined {
  const hex = id.startsWith('sha256:') ? id.slice(7) : id;
  return /^[0-9a-fA-F]{64}$/.test(hex) ? hex.toLowerCase() : undefined;
}

/** `extensions.persistedQuery.sha256Hash` of Apollo's protocol (version 1), if the request names one. */
function persistedQueryHash(params: GraphQLParams): string | undefined {
  const persisted = (params.extensions as { persistedQuery?: { version?: unknown; sha256Hash?: unknown } })
    ?.persistedQuery;
  return persisted?.version === 1 && typeof persisted.sha256Hash === 'string'
    ? persisted.sha256Hash
    : undefined;
}

/**
 * Bounds of an APQ store (issue 20 item 1), in memory and in Redis alike: at most `maxEntries`
 * documents holding at most `maxBytes` bytes of UTF-8 text together (the oldest dropped to make room
 * for a new one), each kept `ttlS` seconds after its registration.
 */
export interface ApqStoreLimits {
  maxEntries: number;
  maxBytes: number;
  ttlS: number;
}

/**
 * In-memory APQ store within {@link ApqStoreLimits}: least recently used entries are dropped beyond
 * `maxEntries` or `maxBytes` (document bytes), each lives `ttlS`. One gateway only; replicas use
 * {@link createRedisApqStore}.
 */
export function createMemoryApqStore(options: ApqStoreLimits): APQStore {
  const cache = new LRUCache<string, string>({
    max: options.maxEntries,
    maxSize: options.maxBytes,
    sizeCalculation: (query) => Math.max(1, Buffer.byteLength(query)),
    ttl: options.ttlS * 1000,
  });
  return {
    get: (hash) => cache.get(hash),
    set: (hash, query) => {
      // lru-cache refuses (and does not store) an entry larger than maxSize on its own.
      if (Buffer.byteLength(query) <= options.maxBytes) cache.set(hash, query);
    },
  };
}

/** Longest wait for one Redis APQ lookup or registration (ms); a lookup then misses. */
export const REDIS_APQ_TIMEOUT_MS = 2_000;

/**
 * Keys of the Redis APQ store (one hash tag, so a Redis Cluster keeps them on one shard for the
 * scripts): the documents by hash, their registration times (ms since the epoch) and the running
 * total of their bytes.
 */
export const REDIS_APQ_KEYS = {
  documents: 'cardgraph:{apq}:documents',
  registered: 'cardgraph:{apq}:registered',
  bytes: 'cardgraph:{apq}:bytes',
} as const;

/**
 * Stores one registration and trims the store, atomically (a script runs alone): the hash's earlier
 * registration and every entry older than the TTL are dropped, then the oldest entries until the new
 * one fits both caps. KEYS: documents, registered, bytes. ARGV: hash, document, now (ms), TTL (ms),
 * max entries, max bytes. Returns 1 when stored, 0 when the document alone exceeds max bytes.
 */
const APQ_SET_SCRIPT = `
local documents, registered, total = KEYS[1], KEYS[2], KEYS[3]
local hash, query = ARGV[1], ARGV[2]
local now, ttl = tonumber(ARGV[3]), tonumber(ARGV[4])
local maxEntries, maxBytes = tonumber(ARGV[5]), tonumber(ARGV[6])
local size = string.len(query)
if size > maxBytes then return 0 end
local bytes = tonumber(redis.call('GET', total) or '0')
local function drop(member)
  bytes = bytes - redis.call('HSTRLEN', documents, member)
  redis.call('HDEL', documents, member)
  redis.call('ZREM', registered, member)
end
if redis.call('ZSCORE', registered, hash) then drop(hash) end
for _, member in ipairs(redis.call('ZRANGEBYSCORE', registered, '-inf', now - ttl)) do drop(member) end
local count = redis.call('ZCARD', registered)
while count > 0 and (count >= maxEntries or bytes + size > maxBytes) do
  drop(redis.call('ZRANGE', registered, 0, 0)[1])
  count = count - 1
end
if bytes < 0 then bytes = 0 end
redis.call('HSET', documents, hash, query)
redis.call('ZADD', registered, now, hash)
redis.call('SET', total, bytes + size)
return 1
`;

/**
 * Looks one hash up: its document when registered less than the TTL ago, else nil. Read-only (runs
 * on a Redis that refuses writes for lack of memory). KEYS: documents, registered. ARGV: hash, now
 * (ms), TTL (ms).
 */
const APQ_GET_SCRIPT = `#!lua flags=no-writes
local score = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not score or tonumber(score) <= tonumber(ARGV[2]) - tonumber(ARGV[3]) then return false end
return redis.call('HGET', KEYS[1], ARGV[1])
`;

/**
 * APQ store in Redis, shared by replicas, within {@link ApqStoreLimits} (issue 20 item 1): documents
 * in one hash, their registration times in a sorted set and their byte total in a counter
 * ({@link REDIS_APQ_KEYS}), trimmed atomically on every registration (oldest first), so the store
 * never holds more than `maxEntries` documents or `maxBytes` bytes of them (plus Redis's own
 * per-entry overhead, about 100 bytes). An entry expires `ttlS` after its (latest) registration.
 * Give it a Redis of its own with `REDIS_CACHE_URL` to keep caches and the event log apart. Redis
 * failures are logged and count as a miss (the client then sends the query), never as a failed
 * operation.
 */
export async function createRedisApqStore(
  options: ApqStoreLimits & { url: string; logger: Logger; now?: () => number },
): Promise<APQStore & { close(): Promise<void> }> {
  // node-redis (570 modules) loads only for a Redis deployment, never at a one-gateway start.
  const { createClient } = await import('redis');
  // Offline or silent, Redis costs an operation at most REDIS_APQ_TIMEOUT_MS (a miss, or an
  // unstored registration), never a wait in node-redis's queue for a reconnect.
  const client = createClient({
    url: options.url,
    disableOfflineQueue: true,
    commandOptions: { timeout: REDIS_APQ_TIMEOUT_MS },
  });
  client.on('error', (error: Error) => options.logger.error({ err: error.message }, 'redis APQ store error'));
  await client.connect();
  const now = options.now ?? Date.now;
  const ttlMs = String(options.ttlS * 1000);
  const keys = [REDIS_APQ_KEYS.documents, REDIS_APQ_KEYS.registered, REDIS_APQ_KEYS.bytes];
  return {
    async get(hash) {
      try {
        const found = await client.eval(APQ_GET_SCRIPT, {
          keys: keys.slice(0, 2),
          arguments: [hash, String(now()), ttlMs],
        });
        return typeof found === 'string' ? found : null;
      } catch (error) {
        options.logger.warn({ err: (error as Error).message }, 'APQ lookup failed');
        return null;
      }
    },
    async set(hash, query) {
      try {
        await client.eval(APQ_SET_SCRIPT, {
          keys,
          arguments: [
            hash,
            query,
            String(now()),
            ttlMs,
            String(options.maxEntries),
            String(options.maxBytes),
          ],
        });
      } catch (error) {
        options.logger.warn({ err: (error as Error).message }, 'APQ registration failed');
      }
    },
    async close() {
      if (client.isOpen) await client.close();
    },
  };
}

/**
 * The refusal of an APQ registration (hash + text) without a client token (issue 20 item 1):
 * nothing is stored and the operation does not run. HTTP 401, code
 * `persisted-query-registration-unauthenticated`.
 */
export const APQ_REGISTRATION_UNAUTHENTICATED = 'persisted-query-registration-unauthenticated';

/**
 * The persisted-operations plugin (see {@link PersistedOperationsPlugin} for the rules). Modes
 * `off`/`allow` run Apollo's APQ protocol here (the manifest consulted first in `allow`), mode
 * `require` runs `@graphql-yoga/plugin-persisted-operations`, after one step of ours that lets a
 * manifest id decide over any query text sent along.
 *
 * APQ registration (issue 20 item 1): only from a request with a valid client token
 * (`authenticate(Authorization)`; a request without one is refused with
 * {@link APQ_REGISTRATION_UNAUTHENTICATED}, a bad token with its own 401), and the document is
 * stored only once it has parsed and passed validation (the schema's rules and the operation
 * limits), at most {@link APQ_MAX_DOCUMENT_BYTES}. An operation without an HTTP request (graphql-ws,
 * whose connection was authenticated at `connection_init`) registers for its caller.
 */
export function usePersistedOperations(options: {
  mode: Config['persistedOperations']['mode'];
  trusted: TrustedDocuments;
  apqStore: APQStore;
  /**
   * The viewer of an `Authorization` header value (`ViewerAuth.fromHeader`): null when none is
   * sent; throws the token's GraphQLError (401) for a bad one.
   */
  authenticate: (authorization: string | null) => Promise<unknown>;
}): PersistedOperationsPlugin {
  const { mode, trusted, apqStore, authenticate } = options;
  const trustedDocument = (id: string) => {
    const hex = manifestKey(id);
    return hex === undefined ? undefined : trusted.get(hex);
  };

  // graphql-ws and graphql-sse clients must send a query string: `""` with a hash means "hash only".
  // A manifest id runs the manifest's document, so whatever text came with it is dropped here.
  const manifestDecides: Plugin = {
    onParams({ params, setParams }) {
      const hash = persistedQueryHash(params);
      if (hash === undefined) return;
      if (params.query === '' || (mode !== 'off' && trustedDocument(hash) !== undefined)) {
        const { query: _dropped, ...rest } = params;
        setParams(rest);
      }
    },
  };

  const refusal = (message: string, code: string) => ({
    message,
    extensions: { code, http: { status: 400 } },
  });
  // Registrations waiting for their document's validation, by the operation's final parameters
  // (Yoga and graphql-ws put that very object in the operation's context as `params`).
  const pendingRegistrations = new WeakMap<object, { hash: string; query: string }>();
  /** The APQ parameters of a request carrying a persisted-query hash: looked up, or checked and registered. */
  async function persisted(
    { params, setParams, request, fetchAPI }: Parameters<NonNullable<Plugin['onParams']>>[0],
    hash: string,
  ): Promise<void> {
    if (params.query == null) {
      const query = (mode === 'allow' ? trustedDocument(hash) : undefined) ?? (await apqStore.get(hash));
      if (query == null) {
        throw createGraphQLError('PersistedQueryNotFound', {
          extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', http: { status: 404 } },
        });
      }
      setParams({ ...params, query });
      return;
    }
    if ((await hashSHA256(params.query, fetchAPI)) !== hash) {
      throw createGraphQLError('PersistedQueryMismatch', {
        extensions: { code: 'PERSISTED_QUERY_MISMATCH', http: { status: 400 } },
      });
    }
    // `request` is undefined only for graphql-ws operations: their connection was authenticated.
    if (request !== undefined && (await authenticate(request.headers.get('authorization'))) == null) {
      throw createGraphQLError(
        'Registering an automatic persisted query needs a client token: send Authorization: Bearer <token>',
        { extensions: { code: APQ_REGISTRATION_UNAUTHENTICATED, http: { status: 401 } } },
      );
    }
    if (Buffer.byteLength(params.query) <= APQ_MAX_DOCUMENT_BYTES) {
      pendingRegistrations.set(params, { hash, query: params.query });
    }
  }
  const apq: Plugin = {
    // Synchronous for a request without a persisted-query hash: no promise per plain request.
    onParams(payload) {
      const hash = persistedQueryHash(payload.params);
      if (hash === undefined) return;
      return persisted(payload, hash);
    },
    onValidate({ context }) {
      const params = paramsOf(context);
      const registration = params === undefined ? undefined : pendingRegistrations.get(params);
      if (!registration) return;
      pendingRegistrations.delete(params!);
      return ({ valid }) => {
        // Stores log and swallow their own failures; a registration never fails the operation.
        if (valid) storing.set(params!, Promise.resolve(apqStore.set(registration.hash, registration.query)));
      };
    },
    // The operation runs once its registration is stored: a client registering faster than the
    // store takes them waits, instead of queueing documents in this process's memory.
    // Synchronous unless a registration is being stored: no promise per plain operation.
    onExecute({ args }) {
      return stored(args.contextValue);
    },
    onSubscribe({ args }) {
      return stored(args.contextValue);
    },
  };
  const storing = new WeakMap<object, Promise<unknown>>();
  const paramsOf = (context: unknown) => (context as { params?: object } | undefined)?.params;
  const stored = (context: unknown): Promise<void> | undefined => {
    const params = paramsOf(context);
    const pending = params === undefined ? undefined : storing.get(params);
    if (pending === undefined) return undefined;
    storing.delete(params!);
    return pending.then(() => undefined);
  };
  const resolver: Plugin =
    mode === 'require'
      ? useTrustedOperations({
          getPersistedOperation: (id) => trustedDocument(id) ?? null,
          allowArbitraryOperations: false,
          customErrors: {
            notFound: refusal(
              'This operation is not one of the gateway’s trusted documents',
              'persisted-operation-not-found',
            ),
            keyNotFound: refusal(
              'This gateway runs only its trusted documents: send extensions.persistedQuery.sha256Hash of one',
              'persisted-operation-required',
            ),
            persistedQueryOnly: refusal(
              'This gateway runs only its trusted documents: send extensions.persistedQuery.sha256Hash of one',
              'persisted-operation-required',
            ),
          },
        })
      : apq;

  const steps = [manifestDecides, resolver];
  return {
    onPluginInit({ addPlugin }) {
      for (const step of steps) addPlugin(step);
    },
  };
}
