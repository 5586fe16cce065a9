import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { APQ_MAX_DOCUMENT_BYTES } from '../../src/plugins/persisted-operations.ts';
import { DOCUMENT_CACHE_ENTRIES, parserAndValidationCaches } from '../../src/runtime/document-cache.ts';

describe('parser caches (src/runtime/document-cache.ts)', () => {
  it('keeps a document by its text, least recently used dropped beyond the entry count', () => {
    const { documentCache } = parserAndValidationCaches();
    const first = parse('{ a0 }');
    documentCache.set('{ a0 }', first);
    for (let i = 1; i < DOCUMENT_CACHE_ENTRIES; i++) documentCache.set(`{ a${i} }`, parse(`{ a${i} }`));
    // Touch the first so the second is the least recently used.
    expect(documentCache.get('{ a0 }')).toBe(first);
    documentCache.set('{ b }', parse('{ b }'));
    expect(documentCache.get('{ a0 }')).toBe(first);
    expect(documentCache.get('{ a1 }')).toBeUndefined();
    expect(documentCache.get(`{ a${DOCUMENT_CACHE_ENTRIES - 1} }`)).toBeDefined();
  });

  it('never keeps a document or a parse failure longer than 64 KiB of text', () => {
    const { documentCache, errorCache } = parserAndValidationCaches();
    const long = `{ a ${' '.repeat(APQ_MAX_DOCUMENT_BYTES)}}`;
    documentCache.set(long, parse('{ a }'));
    errorCache.set(long, new Error('x'));
    expect(documentCache.get(long)).toBeUndefined();
    expect(errorCache.get(long)).toBeUndefined();
    const limit = `{ a }${' '.repeat(APQ_MAX_DOCUMENT_BYTES - 5)}`;
    documentCache.set(limit, parse('{ a }'));
    expect(documentCache.get(limit)).toBeDefined();
  });
});
