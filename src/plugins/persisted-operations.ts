import { existsSync, readFileSync } from 'node:fs';
import { type APQStore, createInMemoryAPQStore, useAPQ } from '@graphql-yoga/plugin-apq';
import { usePersistedOperations as useTrustedOperations } from '@graphql-yoga/plugin-persisted-operations';
import type { GraphQLParams, Plugin } from 'graphql-yoga';
import { createClient } from 'redis';
import type { Config } from '../config.ts';
import { ConfigError } from '../config.ts';
import type { Logger } from '../lib/logger.ts';

/**
 * Persisted operations on every transport: Automatic Persisted Queries (APQ, Apollo's protocol) and
 * trusted documents (the manifest codegen writes from src/client/operations.graphql), per
 * `PERSISTED_OPERATIONS`:
 *
 * | mode      | manifest id               | APQ hash only / hash + query           | query text alone |
 * |-----------|---------------------------|----------------------------------------|------------------|
 * | `off`     | APQ lookup (as any hash)  | stored document / verified and stored  | runs             |
 * | `allow`   | runs its manifest document| stored document / verified and stored  | runs             |
 * | `require` | runs its manifest document| `persisted-operation-not-found`        | `persisted-operation-required` |
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
export type PersistedOperationsPlugin = Plugin & {
  /**
   * Resolves one operation's parameters as the Yoga pipeline does (same plugins, same order), for
   * transports that do not pass through Yoga's request handling (graphql-ws).
   * @returns the parameters with `query` set to the document to run.
   * @throws GraphQLError with the codes of the table above.
   */
  resolveParams(params: GraphQLParams): Promise<GraphQLParams>;
};

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
 * In-memory APQ store: least recently used entries beyond `maxEntries` are dropped, each lives `ttlS`.
 * One gateway only; replicas use {@link createRedisApqStore}.
 */
export function createMemoryApqStore(options: { maxEntries: number; ttlS: number }): APQStore {
  return createInMemoryAPQStore({ max: options.maxEntries, ttl: options.ttlS * 1000 });
}

/**
 * APQ store in Redis, shared by replicas: key `cardgraph:apq:<sha256 hex>`, each entry expiring after
 * `ttlS` (refreshed when registered again). Redis failures are logged and count as a miss (the client
 * then sends the query), never as a failed operation.
 */
export async function createRedisApqStore(options: {
  url: string;
  ttlS: number;
  logger: Logger;
}): Promise<APQStore & { close(): Promise<void> }> {
  const client = createClient({ url: options.url });
  client.on('error', (error: Error) => options.logger.error({ err: error.message }, 'redis APQ store error'));
  await client.connect();
  const key = (hash: string) => `cardgraph:apq:${hash}`;
  return {
    async get(hash) {
      try {
        return await client.get(key(hash));
      } catch (error) {
        options.logger.warn({ err: (error as Error).message }, 'APQ lookup failed');
        return null;
      }
    },
    async set(hash, query) {
      try {
        await client.set(key(hash), query, { expiration: { type: 'EX', value: options.ttlS } });
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
 * The persisted-operations plugin (see {@link PersistedOperationsPlugin} for the rules). Built on
 * `@graphql-yoga/plugin-apq` (modes `off`/`allow`, its store backed by the manifest first) and
 * `@graphql-yoga/plugin-persisted-operations` (mode `require`), after one step of ours that lets a
 * manifest id decide over any query text sent along.
 */
export function usePersistedOperations(options: {
  mode: Config['persistedOperations']['mode'];
  trusted: TrustedDocuments;
  apqStore: APQStore;
}): PersistedOperationsPlugin {
  const { mode, trusted, apqStore } = options;
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
      : useAPQ({
          store: {
            get: (hash) => (mode === 'allow' ? trustedDocument(hash) : undefined) ?? apqStore.get(hash),
            set: (hash, query) =>
              Buffer.byteLength(query) <= APQ_MAX_DOCUMENT_BYTES ? apqStore.set(hash, query) : undefined,
          },
        });

  const steps = [manifestDecides, resolver];
  return {
    onPluginInit({ addPlugin }) {
      for (const step of steps) addPlugin(step);
    },
    async resolveParams(initial) {
      let params = initial;
      for (const step of steps) {
        await step.onParams?.({
          params,
          setParams: (next) => {
            params = next;
          },
          // Neither library reads these outside Yoga's HTTP handling; APQ hashes with fetchAPI.crypto.
          request: undefined as never,
          context: {} as never,
          fetchAPI: globalThis as never,
          paramsHandler: undefined as never,
          setParamsHandler: () => {},
          setResult: () => {},
        });
      }
      return params;
    },
  };
}
