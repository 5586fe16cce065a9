import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { PERSISTED_DOCUMENTS_FILE } from '../client/files.ts';
import { integer, onOff, optionalString, type SettingsSection } from './fields.ts';

/** What the GraphQL endpoint reveals about itself and how it runs operations. */
export const graphqlSettings = {
  title: 'GraphQL endpoint',
  about:
    'What the endpoint reveals (each on | off; default on in development, off in production) and how it runs operations (each on | off; default on everywhere, off is a fallback for operators).',
  shape: {
    GRAPHIQL: onOff.describe(
      'GraphiQL on GET /graphql, served with its assets by the gateway; needs INTROSPECTION=on for its schema documentation and completion.',
    ),
    INTROSPECTION: onOff.describe('Introspection (__schema, __type) over HTTP, SSE and graphql-ws.'),
    FIELD_SUGGESTIONS: onOff.describe('"Did you mean …?" suggestions in validation errors.'),
    GRAPHQL_JIT: onOff.describe(
      'Queries and mutations compiled by graphql-jit; off runs everything on graphql-js, e.g. to rule the compiler out when a result looks wrong.',
    ),
    GRAPHQL_LEAN_HTTP: onOff.describe(
      "Plain JSON GraphQL requests skip Yoga's Fetch API adapter; off lets Yoga's own handler answer every request.",
    ),
    FEDERATION: onOff.describe(
      "on | off, default off. On serves the schema as a Federation v2 subgraph for a router (Hive Gateway, Apollo Router, Cosmo): _service { sdl } with @link and @key, _entities for Card, AccountUpdaterCard (key cardId), NetworkToken (key panAlias) and CardEvent (key id), read in the client token's vault. Needs PERSISTED_OPERATIONS=allow or off.",
    ),
  },
} satisfies SettingsSection;

/** Trusted documents and Automatic Persisted Queries. */
export const persistedOperationsSettings = {
  title: 'Persisted operations',
  about: '',
  shape: {
    PERSISTED_OPERATIONS: z
      .enum(['off', 'allow', 'require'])
      .default('allow')
      .describe(
        'Trusted documents (the manifest `npm run codegen` writes from src/client/operations.graphql): off (not consulted) | allow (manifest ids run; any other operation too) | require (only manifest documents run, by id; Automatic Persisted Query registration refused).',
      ),
    PERSISTED_OPERATIONS_MANIFEST: optionalString.describe(
      'The manifest ({ "sha256:<hex>": "<document>" }); default src/client/generated/persisted-documents.json.',
    ),
    APQ_TTL_S: z.coerce
      .number()
      .int()
      .min(1)
      .max(30 * 86_400)
      .default(86_400)
      .describe(
        "Automatic Persisted Queries (Apollo protocol; in the caches' Redis when EVENTS_BACKEND=redis, shared by replicas, otherwise in memory; registered only by authenticated clients, only valid documents): entry lifetime (s).",
      ),
    APQ_MAX_ENTRIES: integer(1, 1_000_000, 1_000).describe('APQ entries kept (oldest dropped first).'),
    APQ_MAX_BYTES: integer(65_536, 1_073_741_824, 16_777_216).describe(
      'Bytes of APQ document text kept (oldest dropped first).',
    ),
  },
} satisfies SettingsSection;

type GraphqlEnv = z.output<z.ZodObject<typeof graphqlSettings.shape>>;
type PersistedOperationsEnv = z.output<z.ZodObject<typeof persistedOperationsSettings.shape>>;

/**
 * What the GraphQL endpoint reveals about itself (`GRAPHIQL`, `INTROSPECTION`, `FIELD_SUGGESTIONS`)
 * and how it runs operations (`GRAPHQL_JIT`, `GRAPHQL_LEAN_HTTP`).
 */
export interface GraphqlConfig {
  /** GraphiQL on `GET /graphql` (Accept: text/html), served from the gateway's own assets. */
  graphiql: boolean;
  /** Introspection queries (`__schema`, `__type`) over every transport. */
  introspection: boolean;
  /** "Did you mean …?" suggestions in validation errors. */
  fieldSuggestions: boolean;
  /**
   * Queries and mutations run compiled by graphql-jit (`GRAPHQL_JIT`, default on;
   * src/plugins/compiled-execution.ts); off runs everything on graphql-js, e.g. to rule the
   * compiler out when a result looks wrong.
   */
  compiledExecution: boolean;
  /**
   * Plain JSON GraphQL requests skip Yoga's Fetch API adapter (`GRAPHQL_LEAN_HTTP`, default on;
   * src/server/graphql-http.ts); off lets Yoga's own handler answer every request.
   */
  leanHttp: boolean;
}

/** Federation. */
export interface FederationConfig {
  /**
   * The schema is served as a Federation v2 subgraph (`FEDERATION`, default off):
   * `_service { sdl }` with `@link` and `@key`, `_entities` for `Card`, `AccountUpdaterCard`,
   * `NetworkToken` and `CardEvent` (src/schema/subgraph.ts). Off: the standalone schema of schema.graphql.
   */
  subgraph: boolean;
}

/** Trusted documents and APQ. */
export interface PersistedOperationsConfig {
  /**
   * Trusted documents (the codegen manifest of src/client/operations.graphql):
   * - `off`: not consulted; any operation runs, Automatic Persisted Queries (APQ) register any valid
   *   document sent with a client token;
   * - `allow`: a manifest id runs its document; anything else as with `off`;
   * - `require`: only manifest documents run (by id); APQ registration is refused.
   */
  mode: 'off' | 'allow' | 'require';
  /** The manifest (`{ "sha256:<hex>": "<document>" }`); codegen's by default. */
  manifestPath: string;
  /** APQ entries live this long (s), in Redis and in memory alike. */
  apqTtlS: number;
  /** APQ entries kept, in Redis and in memory alike (oldest dropped beyond it). */
  apqMaxEntries: number;
  /** Bytes of APQ document text kept, in Redis and in memory alike (oldest dropped beyond it). */
  apqMaxBytes: number;
}

/** A router sends operations it plans itself (`_entities`, subgraph fetches): no manifest holds them. */
export function refineGraphql(env: GraphqlEnv & PersistedOperationsEnv, ctx: z.RefinementCtx): void {
  if (env.FEDERATION === 'on' && env.PERSISTED_OPERATIONS === 'require') {
    ctx.addIssue({
      code: 'custom',
      path: ['PERSISTED_OPERATIONS'],
      message: 'must be allow or off with FEDERATION=on: the router sends operations of its own',
    });
  }
}

/**
 * The endpoint's settings from the parsed variables. `production` turns GraphiQL, introspection and
 * field suggestions off unless they are set: development exposes everything a person exploring the
 * graph needs, production only what is asked.
 */
export function graphqlConfig(
  e: GraphqlEnv,
  production: boolean,
): { graphql: GraphqlConfig; federation: FederationConfig } {
  const exposed = (value: 'on' | 'off' | undefined) => (value ?? (production ? 'off' : 'on')) === 'on';
  return {
    graphql: {
      graphiql: exposed(e.GRAPHIQL),
      introspection: exposed(e.INTROSPECTION),
      fieldSuggestions: exposed(e.FIELD_SUGGESTIONS),
      compiledExecution: e.GRAPHQL_JIT !== 'off',
      leanHttp: e.GRAPHQL_LEAN_HTTP !== 'off',
    },
    federation: { subgraph: e.FEDERATION === 'on' },
  };
}

/** {@link PersistedOperationsConfig} from the parsed variables. */
export function persistedOperationsConfig(e: PersistedOperationsEnv): PersistedOperationsConfig {
  return {
    mode: e.PERSISTED_OPERATIONS,
    manifestPath: e.PERSISTED_OPERATIONS_MANIFEST ?? fileURLToPath(PERSISTED_DOCUMENTS_FILE),
    apqTtlS: e.APQ_TTL_S,
    apqMaxEntries: e.APQ_MAX_ENTRIES,
    apqMaxBytes: e.APQ_MAX_BYTES,
  };
}
