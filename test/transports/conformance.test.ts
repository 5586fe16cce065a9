import { createHash } from 'node:crypto';
import { type ExecutionResult, print } from 'graphql';
import { createClient as createSseClient } from 'graphql-sse';
import { afterEach, describe, expect, it } from 'vitest';
import { AccountUpdaterCardByIdDocument } from '../../src/client/generated/index.ts';
import { postNotification, useStack, waitForSubscribers } from '../support/fixtures.ts';
import { notification } from '../support/notifications.ts';

/**
 * One conformance suite over the four transports (as graphql-ws tests every adapter with one suite):
 * plain JSON over HTTP (fetch), Yoga's SSE on `/graphql` and graphql-sse on `/graphql/stream` in both
 * of its modes (the graphql-sse client), and graphql-ws (the graphql-ws client). Every transport runs
 * an operation through Yoga's public `getResultForParams`, and a live subscription through the one
 * live-subscription hub (src/live/hub.ts), so the same operation must give the same data, the same
 * error codes, the same persisted-operation rules and the same metrics on each.
 */
const VAULT = 'tntsandbox1';
const LIVE = 'subscription { cardEvents { id type } }';
const CARD_QUERY = print(AccountUpdaterCardByIdDocument);
const MISSING_CARD = { cardId: 'CRD0000000000000000000000' };

/** What a transport answered: every result it delivered, or the error codes of its refusal. */
type Outcome = { results: ExecutionResult[] } | { refused: string[] };

/** A live subscription opened on a transport. */
interface Live {
  next(): Promise<ExecutionResult>;
  close(): void;
}

interface Transport {
  name: string;
  /**
   * Whether its client lets a refusal's code be read: graphql-sse's client in single-connection mode
   * reads a refused operation's answer itself and throws only its status.
   */
  readsRefusals: boolean;
  /** The `transport` label of `cardgraph_graphql_live_subscriptions` its live subscriptions count under. */
  gauge: 'sse' | 'graphql-ws' | undefined;
  run(token: string, body: Record<string, unknown>): Promise<Outcome>;
  live?(token: string, query: string): Live;
}

const codesOf = (errors: readonly { extensions?: Record<string, unknown> }[] | undefined) =>
  (errors ?? []).map((error) => String(error.extensions?.code));

describe('four transports, one behaviour', () => {
  const t = useStack();
  const disposers: (() => void)[] = [];
  afterEach(() => {
    for (const dispose of disposers.splice(0)) dispose();
  });

  /** A graphql-sse client (distinct connections or single connection) on `path`. */
  function sseTransport(name: string, path: string, singleConnection: boolean): Transport {
    const client = (token: string) => {
      const created = createSseClient({
        url: `${t.stack.url}${path}`,
        singleConnection,
        retryAttempts: 0,
        headers: { authorization: `Bearer ${token}` },
      });
      disposers.push(() => created.dispose());
      return created;
    };
    return {
      name,
      readsRefusals: !singleConnection,
      gauge: 'sse',
      async run(token, body) {
        const results: ExecutionResult[] = [];
        try {
          for await (const result of client(token).iterate(body as never))
            results.push(result as ExecutionResult);
        } catch (error) {
          // graphql-sse's client throws a refusal (a 4xx/5xx answer) with its response.
          const response = (error as { response?: Response }).response;
          if (!response) throw error;
          const text = await response.text();
          // A JSON `errors` body (graphql-sse), or Yoga's SSE answer of the refusal (its `next` event).
          const json = text.startsWith('{') ? text : /^data: (.+)$/m.exec(text)?.[1];
          const refused = JSON.parse(json ?? '{}') as { errors?: { extensions?: Record<string, unknown> }[] };
          return { refused: codesOf(refused.errors) };
        }
        // Yoga's SSE answers a request error as a streamed result without `data`.
        const only = results.length === 1 ? results[0]! : undefined;
        if (only && !('data' in only) && only.errors?.length) return { refused: codesOf(only.errors) };
        return { results };
      },
      live(token, query) {
        const iterator = client(token).iterate({ query })[Symbol.asyncIterator]();
        return {
          next: async () => (await iterator.next()).value as ExecutionResult,
          close: () => void iterator.return?.(),
        };
      },
    };
  }

  const transports: Transport[] = [
    {
      name: 'plain JSON over HTTP',
      readsRefusals: true,
      gauge: undefined,
      async run(token, body) {
        const response = await fetch(`${t.stack.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify(body),
        });
        const result = (await response.json()) as ExecutionResult;
        if (!('data' in result) && result.errors?.length) return { refused: codesOf(result.errors) };
        return { results: [result] };
      },
    },
    sseTransport("Yoga's SSE on /graphql", '/graphql', false),
    sseTransport('graphql-sse distinct connections', '/graphql/stream', false),
    sseTransport('graphql-sse single connection', '/graphql/stream', true),
    {
      name: 'graphql-ws',
      readsRefusals: true,
      gauge: 'graphql-ws',
      async run(token, body) {
        const client = t.stack.wsClient(token);
        disposers.push(() => void client.dispose());
        const results: ExecutionResult[] = [];
        try {
          for await (const result of client.iterate(body as never)) results.push(result as ExecutionResult);
        } catch (error) {
          // An `error` message: the operation's GraphQL errors.
          if (!Array.isArray(error)) throw error;
          return { refused: codesOf(error) };
        }
        return { results };
      },
      live(token, query) {
        const client = t.stack.wsClient(token);
        disposers.push(() => void client.dispose());
        const iterator = client.iterate({ query })[Symbol.asyncIterator]();
        return {
          next: async () => (await iterator.next()).value as ExecutionResult,
          close: () => void iterator.return?.(),
        };
      },
    },
  ];

  async function liveGauge(transport: 'sse' | 'graphql-ws'): Promise<number> {
    const { values } = await t.stack.app.metrics.liveSubscriptions.get();
    return values.find((sample) => sample.labels.transport === transport)?.value ?? 0;
  }

  describe.each(transports)('$name', (transport) => {
    it('answers a query with the same data: the typed error of a missing card', async () => {
      const token = await t.stack.token({ vaults: [VAULT] });
      const outcome = await transport.run(token, { query: CARD_QUERY, variables: MISSING_CARD });
      expect(outcome).toEqual({
        results: [
          {
            data: {
              __typename: 'Query',
              accountUpdaterCard: {
                __typename: 'CardNotFoundError',
                code: 'card-not-found',
                message: 'Card CRD0000000000000000000000 was not found in this vault',
              },
            },
          },
        ],
      });
    });

    it.runIf(transport.readsRefusals)(
      'refuses an invalid operation with GRAPHQL_VALIDATION_FAILED',
      async () => {
        const token = await t.stack.token({ vaults: [VAULT] });
        expect(await transport.run(token, { query: '{ noSuchField }' })).toEqual({
          refused: ['GRAPHQL_VALIDATION_FAILED'],
        });
      },
    );

    it.runIf(transport.readsRefusals)(
      'applies the persisted-operation rules: an unknown hash alone is PERSISTED_QUERY_NOT_FOUND',
      async () => {
        const token = await t.stack.token({ vaults: [VAULT] });
        const sha256Hash = createHash('sha256').update(`{ __typename } # ${transport.name}`).digest('hex');
        expect(
          await transport.run(token, {
            query: '',
            extensions: { persistedQuery: { version: 1, sha256Hash } },
          }),
        ).toEqual({ refused: ['PERSISTED_QUERY_NOT_FOUND'] });
      },
    );

    it.runIf(transport.live !== undefined)(
      'delivers a live event through the hub and counts the subscription while it runs',
      async () => {
        const token = await t.stack.token({ vaults: [VAULT] });
        const gauge = transport.gauge!;
        const before = await liveGauge(gauge);
        const live = transport.live!(token, LIVE);
        const first = live.next();
        await waitForSubscribers(t.stack.app, VAULT, 1);
        await expect.poll(() => liveGauge(gauge)).toBe(before + 1);
        const event = notification();
        expect((await postNotification(t.stack.url, event)).status).toBe(200);
        expect(await first).toEqual({ data: { cardEvents: { id: event.id, type: 'UPDATED' } } });
        live.close();
        await waitForSubscribers(t.stack.app, VAULT, 0);
        await expect.poll(() => liveGauge(gauge)).toBe(before);
      },
    );
  });
});
