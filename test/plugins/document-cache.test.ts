import { NoSchemaIntrospectionCustomRule, parse, type ValidationRule } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useIncrementalDelivery } from '../../src/plugins/incremental-delivery.ts';
import { APQ_MAX_DOCUMENT_BYTES } from '../../src/plugins/persisted-operations.ts';
import {
  createValidationResults,
  DOCUMENT_CACHE_ENTRIES,
  PARSE_ERROR_CACHE_ENTRIES,
  parserAndValidationCaches,
  useParseErrorCache,
  useValidationCache,
} from '../../src/runtime/document-cache.ts';

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

  it("never keeps a document longer than 64 KiB of text; Yoga's parse-failure cache keeps nothing (useParseErrorCache does)", () => {
    const { documentCache, errorCache } = parserAndValidationCaches();
    const long = `{ a ${' '.repeat(APQ_MAX_DOCUMENT_BYTES)}}`;
    documentCache.set(long, parse('{ a }'));
    errorCache.set(long, new Error('x'));
    expect(documentCache.get(long)).toBeUndefined();
    expect(errorCache.get(long)).toBeUndefined();
    errorCache.set('{ a', new Error('x'));
    expect(errorCache.get('{ a')).toBeUndefined();
    const limit = `{ a }${' '.repeat(APQ_MAX_DOCUMENT_BYTES - 5)}`;
    documentCache.set(limit, parse('{ a }'));
    expect(documentCache.get(limit)).toBeDefined();
  });
});

describe('validation cache (useValidationCache, issue 21 item 3)', () => {
  /** Yoga with the gateway's caches, a rule added per request (as graphql-armor and the introspection switch do). */
  function server() {
    const counts = { validations: 0, afterHooks: 0 };
    const schema = createSchema({
      typeDefs: 'type Query { card(id: ID!): String }',
      resolvers: { Query: { card: (_: unknown, { id }: { id: string }) => `card ${id}` } },
    });
    const rules: Plugin = {
      onValidate({ addValidationRule, validateFn, setValidationFn }) {
        addValidationRule(NoSchemaIntrospectionCustomRule);
        setValidationFn((...args) => {
          counts.validations++;
          return validateFn(...args);
        });
        return () => {
          counts.afterHooks++;
        };
      },
    };
    const yoga = createYoga({
      schema,
      logging: false,
      parserAndValidationCache: parserAndValidationCaches(),
      plugins: [rules, useValidationCache()],
    });
    const run = runner(yoga);
    return { run, counts };
  }

  it('validates a document once; later requests get the same answer and every after-hook still runs', async () => {
    const { run, counts } = server();
    const first = await run('{ card(id: "c1") }');
    const second = await run('{ card(id: "c1") }');
    expect(first).toEqual({ status: 200, body: '{"data":{"card":"card c1"}}' });
    expect(second).toEqual(first);
    expect(counts).toEqual({ validations: 1, afterHooks: 2 });
  });

  it('keeps failures too: an invalid document answers the same errors without being validated again', async () => {
    const { run, counts } = server();
    const first = await run('{ card }');
    const second = await run('{ card }');
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body).errors[0].message).toBe(
      'Field "card" argument "id" of type "ID!" is required, but it was not provided.',
    );
    expect(second).toEqual(first);
    // The rule added on each request holds on the cached path: introspection stays refused.
    const introspection = await run('{ __schema { queryType { name } } }');
    expect(JSON.parse(introspection.body).errors[0].message).toMatch(/introspection/i);
    expect(counts).toEqual({ validations: 2, afterHooks: 3 });
  });
});

describe('validation cache and the @defer/@stream rules (useIncrementalDelivery)', () => {
  it('adds the @defer/@stream rules only when a document is validated; a cached answer is the same', async () => {
    const results = createValidationResults();
    // Whether the rule list each validation was handed held the @stream rule (read after it was added).
    const streamRuleAdded: boolean[] = [];
    const seeRules: Plugin = {
      onValidate({ params }) {
        streamRuleAdded.push(
          params.rules?.some((rule: ValidationRule) => rule.name === 'StreamDirectiveOnListFieldRule') ??
            false,
        );
      },
    };
    const yoga = createYoga({
      schema: createSchema({
        typeDefs: 'type Query { card: String, cards: [String!]! }',
        resolvers: { Query: { card: () => 'c1', cards: () => ['c1', 'c2'] } },
      }),
      logging: false,
      parserAndValidationCache: parserAndValidationCaches(),
      plugins: [
        useIncrementalDelivery(
          { maskError: (error) => error, message: 'Unexpected error.' },
          { validated: results.has },
        ),
        seeRules,
        useValidationCache(results),
      ],
    });
    const run = async (query: string) => {
      const response = await yoga.fetch('http://localhost/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query }),
      });
      return { status: response.status, body: await response.text() };
    };
    const refused = '{ card @stream(initialCount: 1) }';
    const first = await run(refused);
    expect(JSON.parse(first.body).errors[0].message).toBe(
      'Stream directive cannot be used on non-list field "card" on type "Query".',
    );
    expect(await run(refused)).toEqual(first);
    const streamed = '{ cards @stream(initialCount: 1) }';
    const merged = { status: 200, body: '{"data":{"cards":["c1","c2"]}}' };
    expect(await run(streamed)).toEqual(merged);
    expect(await run(streamed)).toEqual(merged);
    expect(streamRuleAdded).toEqual([true, false, true, false]);
  });
});

describe('parse-failure cache (useParseErrorCache)', () => {
  /** Yoga with the gateway's caches and a plugin counting parses and parse after-hooks (as metrics do). */
  function server() {
    const counts = { parses: 0, failuresSeen: 0 };
    const counting: Plugin = {
      onParse({ parseFn, setParseFn }) {
        setParseFn((...args) => {
          counts.parses++;
          return parseFn(...args);
        });
        return ({ result }) => {
          if (result instanceof Error) counts.failuresSeen++;
        };
      },
    };
    const yoga = createYoga({
      schema: createSchema({ typeDefs: 'type Query { a: String }' }),
      logging: false,
      parserAndValidationCache: parserAndValidationCaches(),
      plugins: [counting, useParseErrorCache()],
    });
    const run = runner(yoga);
    return { run, counts };
  }

  it('parses a broken document once; every repetition gets the same answer through every after-hook', async () => {
    const { run, counts } = server();
    const first = await run('{ a');
    const answers = [await run('{ a'), await run('{ a')];
    expect(first).toEqual({
      status: 200,
      body: '{"errors":[{"message":"Syntax Error: Expected Name, found <EOF>.","locations":[{"line":1,"column":4}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}',
    });
    expect(answers).toEqual([first, first]);
    // Yoga's own cache threw a repeated failure before any plugin's parse hook: seen once, not three times.
    expect(counts).toEqual({ parses: 1, failuresSeen: 3 });
  });

  it('keeps at most PARSE_ERROR_CACHE_ENTRIES failures, none of more than 64 KiB of text', async () => {
    const { run, counts } = server();
    const long = `{ a ${' '.repeat(APQ_MAX_DOCUMENT_BYTES)}`;
    await run(long);
    await run(long);
    expect(counts).toEqual({ parses: 2, failuresSeen: 2 });
    for (let i = 0; i <= PARSE_ERROR_CACHE_ENTRIES; i++) await run(`{ a${i}`);
    expect(counts.parses).toBe(2 + PARSE_ERROR_CACHE_ENTRIES + 1);
    // The first short failure was dropped for room; the last is still kept.
    await run('{ a0');
    await run(`{ a${PARSE_ERROR_CACHE_ENTRIES}`);
    expect(counts.parses).toBe(2 + PARSE_ERROR_CACHE_ENTRIES + 2);
  });
});

/** POSTs `query` to `yoga` as JSON: the answer's status and body text. */
function runner(yoga: { fetch: (url: string, init: RequestInit) => Response | Promise<Response> }) {
  return async (query: string) => {
    const response = await yoga.fetch('http://localhost/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    return { status: response.status, body: await response.text() };
  };
}
