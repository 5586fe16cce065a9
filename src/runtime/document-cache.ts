import type { DocumentNode } from 'graphql';
import { createLRUCache } from 'graphql-yoga';
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
 * {@link DOCUMENT_CACHE_ENTRIES} documents and {@link PARSE_ERROR_CACHE_ENTRIES} parse failures,
 * without Yoga's default one-hour TTL (an entry is dropped for room, never for age: no clock read per
 * lookup). A document longer than {@link APQ_MAX_DOCUMENT_BYTES} characters is never kept, so the
 * caches hold at most entries × 64 KiB of text whatever clients send (the key is the whole text).
 * Validation results stay in Yoga's per-document WeakMap.
 */
export function parserAndValidationCaches(): {
  documentCache: DocumentCache<DocumentNode>;
  errorCache: DocumentCache<Error>;
} {
  return {
    documentCache: bounded(DOCUMENT_CACHE_ENTRIES),
    errorCache: bounded(PARSE_ERROR_CACHE_ENTRIES),
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
