import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSchema, createYoga } from 'graphql-yoga';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { yogaLoggerOf } from '../../src/lib/logger.ts';
import { useRequestId } from '../../src/plugins/request-id.ts';
import { captureLogger, digitsOf, leftover } from '../support/fixtures.ts';

/**
 * Issue 26, first low item: Yoga logs an unexpected error as the GraphQLError it caught, whose
 * `toString()` prints the document around the error with its literals (a CVC, a double-spaced PAN).
 * The gateway's Yoga logger writes the message, code, path, position and request id instead.
 */

const schema = createSchema({
  typeDefs: 'type Query { broken(number: String, cvc: String): String }',
  resolvers: {
    Query: {
      broken: () => {
        throw new Error('card store unavailable');
      },
    },
  },
});

describe("Yoga's error log lines", () => {
  it('carry no document text: message, code, path and position only', async () => {
    const { logger, lines } = captureLogger();
    const yoga = createYoga({ schema, logging: yogaLoggerOf(logger), plugins: [useRequestId()] });
    const server = leftover(createServer(yoga), (s) => new Promise((resolve) => s.close(resolve)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
    const query = '{ broken(number: "4000  0566 5566 5556", cvc: "7391") }';
    const response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    expect(response.statusCode).toBe(200);
    expect(await response.body.json()).toMatchObject({
      data: { broken: null },
      errors: [{ message: 'Unexpected error.', path: ['broken'] }],
    });
    const errors = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((e) => e.level === 50);
    expect(errors.map(({ msg, yoga: details }) => ({ msg, details }))).toEqual([
      { msg: 'GraphQLError: card store unavailable (path broken, at 1:3)', details: [] },
    ]);
    const text = lines.join('');
    expect(text).not.toContain('GraphQL request');
    expect(text).not.toContain('broken(');
    expect(text).not.toContain('7391');
    expect(digitsOf(text)).not.toContain('4000056655665556');
  });
});
