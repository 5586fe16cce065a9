import { createServer, type Server } from 'node:http';
import { GraphQLError } from 'graphql';
import { createSchema, createYoga, type Plugin } from 'graphql-yoga';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/lib/metrics.ts';
import { createRequestRecord } from '../../src/lib/request-record.ts';
import { useCardDataRedaction } from '../../src/plugins/card-data-redaction.ts';
import { useErrorMasking } from '../../src/plugins/error-masking.ts';
import { useRequestId } from '../../src/plugins/request-id.ts';
import { createGraphqlHttpHandler } from '../../src/server/graphql-http.ts';
import { closeNow, listen } from '../../src/server/listen.ts';
import { captureLogger } from '../support/fixtures.ts';

/**
 * The internal error over HTTP (src/lib/transport-errors.ts): a failure that is not the client's
 * is `Unexpected error.` with code `internal-error` on the lean path and on Yoga's handler alike:
 * 500 when the request has no data (thrown before execution, here by an `onParams` hook), 200 with
 * partial data when one field failed. What failed is logged, never sent.
 */

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

/** Throws a plain Error in `onParams` for an operation named `Explode`. */
const explodeInParams: Plugin = {
  onParams({ params }) {
    if (params.operationName === 'Explode') throw new Error('params hook exploded: hunter2');
  },
};

/** Refuses an operation named `Refuse` with a GraphQLError (a client's mistake, kept as is). */
const refuseInParams: Plugin = {
  onParams({ params }) {
    if (params.operationName === 'Refuse') {
      throw new GraphQLError('Refused here', { extensions: { code: 'refused-here', http: { status: 403 } } });
    }
  },
};

const servers: Server[] = [];
const urls: Record<'lean' | 'yoga', string> = { lean: '', yoga: '' };
const { logger, lines } = captureLogger();

beforeAll(async () => {
  for (const lean of [true, false]) {
    const yoga = createYoga({
      schema,
      plugins: [useCardDataRedaction(), useRequestId(), explodeInParams, refuseInParams],
      maskedErrors: useErrorMasking(),
      // As the gateway's Yoga logger (src/runtime/index.ts): what Yoga logs goes to the app's logger.
      logging: {
        debug: () => undefined,
        info: () => undefined,
        warn: () => undefined,
        error: (...args: unknown[]) => logger.error({ yoga: args.map(String) }, 'yoga error'),
      },
    });
    const handle = createGraphqlHttpHandler({ yoga: yoga as never, lean, metrics: createMetrics(), logger });
    const server = createServer((req, res) =>
      handle(req, res, createRequestRecord(req.headers['x-request-id'])),
    );
    servers.push(server);
    urls[lean ? 'lean' : 'yoga'] = await listen(server, 0, '127.0.0.1');
  }
});

afterAll(async () => {
  await Promise.all(servers.map((server) => closeNow(server)));
});

async function post(base: string, body: unknown) {
  const response = await request(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'errors-1' },
    body: JSON.stringify(body),
  });
  return {
    status: response.statusCode,
    contentType: response.headers['content-type'],
    body: (await response.body.json()) as Record<string, unknown>,
  };
}

describe('the internal error over HTTP, lean path and Yoga alike', () => {
  it('answers a failure before execution 500 internal-error, logged and not sent', async () => {
    const logged = () => lines.filter((line) => line.includes('params hook exploded: hunter2')).length;
    const explode = { query: 'query Explode { fine }', operationName: 'Explode' };
    const lean = await post(urls.lean, explode);
    expect(logged()).toBe(1);
    expect(lean).toEqual(await post(urls.yoga, explode));
    expect(logged()).toBeGreaterThan(1);
    expect(lean).toEqual({
      status: 500,
      contentType: 'application/json; charset=utf-8',
      body: {
        errors: [
          { message: 'Unexpected error.', extensions: { code: 'internal-error', requestId: 'errors-1' } },
        ],
      },
    });
  });

  it('answers a failed field 200 with partial data and internal-error on the field', async () => {
    const lean = await post(urls.lean, { query: '{ broken fine }' });
    expect(lean).toEqual(await post(urls.yoga, { query: '{ broken fine }' }));
    expect(lean).toEqual({
      status: 200,
      contentType: 'application/json; charset=utf-8',
      body: {
        data: { broken: null, fine: 'ok' },
        errors: [
          {
            message: 'Unexpected error.',
            locations: [{ line: 1, column: 3 }],
            path: ['broken'],
            extensions: { code: 'internal-error', requestId: 'errors-1' },
          },
        ],
      },
    });
    expect(JSON.stringify(lean)).not.toContain('hunter2');
  });

  it("keeps a refusal's own code and status", async () => {
    const lean = await post(urls.lean, { query: 'query Refuse { fine }', operationName: 'Refuse' });
    expect(lean).toEqual(await post(urls.yoga, { query: 'query Refuse { fine }', operationName: 'Refuse' }));
    expect(lean.status).toBe(403);
    expect(lean.body).toEqual({
      errors: [{ message: 'Refused here', extensions: { code: 'refused-here', requestId: 'errors-1' } }],
    });
  });
});
