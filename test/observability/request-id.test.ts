import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { redactPans } from '../../src/lib/pan.ts';
import { createRequestRecord } from '../../src/lib/request-record.ts';
import { useRequestId } from '../../src/plugins/request-id.ts';

const schema = createSchema({
  typeDefs: 'type Query { broken: String, fine: String }',
  resolvers: {
    Query: {
      broken: () => {
        throw new Error('database password is hunter2');
      },
      fine: () => 'ok',
    },
  },
});

describe('useRequestId', () => {
  it('puts the request id on masked unexpected errors and leaves error-free results alone', async () => {
    const yoga = createYoga({
      schema,
      plugins: [useRequestId()],
      logging: false,
    });
    const record = createRequestRecord('req-masked-1');
    /** POSTs `query` to the Yoga instance as one HTTP request carrying `record`. */
    const post = (query: string) =>
      yoga.fetch(
        'http://localhost/graphql',
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) },
        { requestRecord: record },
      );
    const response = await post('{ broken fine }');
    const body = (await response.json()) as {
      data: unknown;
      errors: { message: string; extensions: unknown }[];
    };
    expect(body.data).toEqual({ broken: null, fine: 'ok' });
    expect(body.errors).toEqual([
      {
        message: 'Unexpected error.',
        locations: [{ line: 1, column: 3 }],
        path: ['broken'],
        extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: 'req-masked-1' },
      },
    ]);
    const fine = await post('{ fine }');
    expect(await fine.json()).toEqual({ data: { fine: 'ok' } });
  });

  it('puts it on masked errors of operations run through the envelop, as graphql-ws runs them', async () => {
    const yoga = createYoga({ schema, plugins: [useRequestId()], logging: false });
    const requestRecord = createRequestRecord('req-ws-1', 'graphql-ws');
    const enveloped = yoga.getEnveloped({ requestRecord, params: { query: '{ broken }' } } as never);
    const document = enveloped.parse('{ broken }');
    const result = (await enveloped.execute({
      schema: enveloped.schema,
      document,
      contextValue: await enveloped.contextFactory(),
    })) as { errors?: { message: string; extensions: unknown }[] };
    expect(result.errors?.map((error) => [error.message, error.extensions])).toEqual([
      ['Unexpected error.', { code: 'INTERNAL_SERVER_ERROR', unexpected: true, requestId: 'req-ws-1' }],
    ]);
  });
});

describe('createRequestRecord', () => {
  it('generates UUIDs that the PAN masker leaves as they are (200,000 ids)', () => {
    // Without the redraw about 1,000 of these would be masked in a log line.
    const ids = Array.from({ length: 200_000 }, () => createRequestRecord(undefined).id);
    expect(ids.filter((id) => redactPans(id) !== id)).toEqual([]);
    expect(
      ids.filter((id) => !/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id)),
    ).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('still refuses a client id holding a card number, and keeps one that does not', () => {
    expect(createRequestRecord('4000-0566-5566-5556').id).not.toBe('4000-0566-5566-5556');
    expect(createRequestRecord('4000-0566-5566-5556').id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);
    expect(createRequestRecord('router-7f3a-000123').id).toBe('router-7f3a-000123');
  });
});
