import type { DocumentNode, GraphQLError, GraphQLSchema } from 'graphql';
import { createLRUCache, type Plugin } from 'graphql-yoga';
import { APQ_MAX_DOCUMENT_BYTES } from '../plugins/persisted-operations.ts';

/** Parsed documents Yoga keeps (least recently used dropped beyond it). */
export const DOCUMENT_CACHE_ENTRIES = 1_000;
/** Parse failures Yoga keeps, so a client repeating a broken document is not parsed again. */
export const PARSE_ERROR_CACHE_ENTRIES = 100;

/** Yoga's `documentCache`/`errorCache` shape: keyed by the document text. */
interface DocumentCache<V> {
  get(source: string): V | undefined;
  set(source: string, value: V): void;
}

/**
 * Yoga's parser and validation caches (`parserAndValidationCache`), sized for cardgraph's operation
 * set: the shipped operations and trusted documents are a few dozen, ad hoc clients add some, so
 * {@link DOCUMENT_CACHE_ENTRIES} documents, without Yoga's default one-hour TTL (an entry is dropped
 * for room, never for age: no clock read per lookup). A document longer than
 * {@link APQ_MAX_DOCUMENT_BYTES} characters is never kept, so the cache holds at most entries × 64 KiB
 * of text whatever clients send (the key is the whole text).
 * Yoga's parse-failure cache answers nothing (`errorCache`): Yoga throws a cached failure from its own
 * parse hook, before any plugin's parse hook runs, so a repeated broken document was missing from
 * metrics, access lines and traces (counted the first time only, on whichever transport sent it
 * first); {@link useParseErrorCache} keeps parse failures instead.
 * Yoga's validation cache is off (`validationCache: false`): {@link useValidationCache} keeps the
 * validation results instead.
 */
export function parserAndValidationCaches(): {
  documentCache: DocumentCache<DocumentNode>;
  errorCache: DocumentCache<Error>;
  validationCache: false;
} {
  return {
    documentCache: bounded(DOCUMENT_CACHE_ENTRIES),
    errorCache: { get: () => undefined, set: () => {} },
    validationCache: false,
  };
}

/**
 * Parse failures by document text ({@link PARSE_ERROR_CACHE_ENTRIES}, none longer than
 * {@link APQ_MAX_DOCUMENT_BYTES} characters), so a client repeating a broken document is not parsed
 * again: a hit is answered through envelop's parse hooks (`setParseFn` with a function throwing the
 * cached failure), so every plugin's after-hook (metrics, access line, tracing) sees it each time.
 * Registered after every plugin that replaces the parse function (graphql-armor's token limit).
 */
export function useParseErrorCache(): Plugin {
  const failures = bounded<Error>(PARSE_ERROR_CACHE_ENTRIES);
  return {
    onParse({ params, setParseFn }) {
      const source = typeof params.source === 'string' ? params.source : params.source.body;
      const cached = failures.get(source);
      if (cached) {
        setParseFn(() => {
          throw cached;
        });
        return undefined;
      }
      return ({ result }) => {
        if (result instanceof Error) failures.set(source, result);
      };
    },
  };
}

/**
 * The validation results of parsed documents, per schema and document object (WeakMaps: an entry
 * goes with its document, which {@link parserAndValidationCaches} keeps). Shared by
 * {@link useValidationCache}, which fills and answers it, and the plugins that add validation rules
 * per request (`@defer`/`@stream`'s, src/plugins/incremental-delivery.ts), which skip that work for a
 * document it holds: on a hit no rule runs.
 */
export interface ValidationResults {
  /** The errors of `document` validated against `schema` (empty when valid); undefined when not yet validated. */
  get(schema: GraphQLSchema, document: DocumentNode): readonly GraphQLError[] | undefined;
  /** Keeps the validation errors of `document` against `schema`. */
  set(schema: GraphQLSchema, document: DocumentNode, errors: readonly GraphQLError[]): void;
  /** Whether `document` was validated against `schema` already (its result is answered from here). */
  has(schema: GraphQLSchema, document: DocumentNode): boolean;
}

/** A new, empty {@link ValidationResults}. */
export function createValidationResults(): ValidationResults {
  const bySchema = new WeakMap<GraphQLSchema, WeakMap<DocumentNode, readonly GraphQLError[]>>();
  return {
    get: (schema, document) => bySchema.get(schema)?.get(document),
    set(schema, document, errors) {
      let byDocument = bySchema.get(schema);
      if (!byDocument) {
        byDocument = new WeakMap();
        bySchema.set(schema, byDocument);
      }
      byDocument.set(document, errors);
    },
    has: (schema, document) => bySchema.get(schema)?.has(document) === true,
  };
}

/**
 * The validation results of parsed documents ({@link ValidationResults}, `results`), as Yoga's own
 * validation cache keeps them but without its per-request key: Yoga names the rule set by joining the
 * names of the rules the plugins add on every request (graphql-armor's limits create new, unnamed rule
 * functions per request, so that key never told two rule sets apart), which cost a copy, a map and a
 * join per request (issue 21 item 3). The rules are fixed for the life of the process (the
 * introspection switch and the operation limits come from the configuration), so the document and
 * schema are the key.
 * Registered after every plugin that adds rules or rewrites validation errors, where Yoga's would be:
 * on a hit the others' after-hooks still see the result (access line, metrics, redaction).
 */
export function useValidationCache(results: ValidationResults = createValidationResults()): Plugin {
  return {
    onValidate({ params: { schema, documentAST }, setResult }) {
      if (schema == null) return undefined;
      const cached = results.get(schema, documentAST);
      if (cached) {
        setResult(cached);
        return undefined;
      }
      return ({ result }) => {
        if (result != null) results.set(schema, documentAST, result as readonly GraphQLError[]);
      };
    },
  };
}

function bounded<V extends object>(max: number): DocumentCache<V> {
  const cache = createLRUCache<V>({ max, ttl: 0 });
  return {
    get: (source) => (source.length > APQ_MAX_DOCUMENT_BYTES ? undefined : cache.get(source)),
    set: (source, value) => {
      if (source.length <= APQ_MAX_DOCUMENT_BYTES) cache.set(source, value);
    },
  };
}
