import { print } from 'graphql';
import { type Client, createClient, type ExecutionResult } from 'graphql-sse';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AccountUpdaterCardByIdDocument,
  type AccountUpdaterCardByIdQuery,
  EnrolCardWithWebhookDocument,
  LiveCardEventsDocument,
  type LiveCardEventsSubscription,
} from '../../src/client/generated/index.ts';
import { member, type Stack, startStack, waitForSubscribers } from '../support/fixtures.ts';

/** graphql-sse client modes and the paths that serve them. */
const MODES = [
  { name: 'single connection at /graphql/stream', path: '/graphql/stream', singleConnection: true },
  { name: 'distinct connections at /graphql/stream', path: '/graphql/stream', singleConnection: false },
  { name: 'distinct connections at /graphql (Yoga SSE)', path: '/graphql', singleConnection: false },
] as const;

describe('graphql-sse client', () => {
  let stack: Stack;
  let token: string;
  const clients: Client[] = [];
  beforeAll(async () => {
    stack = await startStack();
    token = await stack.token();
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.dispose();
  });
  afterAll(() => stack.stop());

  function sseClient(path: string, singleConnection: boolean, bearer: string | null = token): Client {
    const client = createClient({
      url: `${stack.url}${path}`,
      singleConnection,
      retryAttempts: 0,
      headers: bearer ? { authorization: `Bearer ${bearer}` } : {},
    });
    clients.push(client);
    return client;
  }

  describe.each(MODES)('$name', ({ path, singleConnection }) => {
    it('receives code and message of a typed error', async () => {
      const client = sseClient(path, singleConnection);
      const results: ExecutionResult<AccountUpdaterCardByIdQuery, unknown>[] = [];
      for await (const result of client.iterate<AccountUpdaterCardByIdQuery>({
        query: print(AccountUpdaterCardByIdDocument),
        variables: { cardId: 'CRD0000000000000000000000' },
      })) {
        results.push(result);
      }
      expect(results).toHaveLength(1);
      expect(member(results[0]!.data?.accountUpdaterCard, 'CardNotFoundError')).toMatchObject({
        code: 'card-not-found',
        message: 'Card CRD0000000000000000000000 was not found in this vault',
      });
    });

    it('receives a live au_card.* event of an enrolment made meanwhile', async () => {
      const client = sseClient(path, singleConnection);
      const before = stack.app.events?.subscriberCount('tntsandbox1') ?? 0;
      const iterator = client.iterate<LiveCardEventsSubscription>({ query: print(LiveCardEventsDocument) });
      const first = iterator.next();
      await waitForSubscribers(stack.app, 'tntsandbox1', before + 1);
      const enrolled = await stack.execute(
        EnrolCardWithWebhookDocument,
        { number: '4000210000692001' },
        token,
      );
      const cardId = member(
        enrolled.data?.enrollAccountUpdaterCard,
        'MutationEnrollAccountUpdaterCardSuccess',
      ).data.cardId;
      const { value } = await first;
      expect(value?.data?.cardEvents).toMatchObject({ type: 'ENROLLED', cardId, tenant: 'tntsandbox1' });
      // Stopping on the client ends the gateway's subscription too (not at the token's expiry).
      await iterator.return?.();
      await waitForSubscribers(stack.app, 'tntsandbox1', before);
    });
  });

  it('refuses a stream without a valid token with 401 and the error code, before reserving it', async () => {
    for (const method of ['PUT', 'POST']) {
      const response = await fetch(`${stack.url}/graphql/stream`, {
        method,
        headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-jwt' },
        ...(method === 'POST' ? { body: JSON.stringify({ query: '{ viewer { subject } }' }) } : {}),
      });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ errors: [{ extensions: { code: 'invalid-token' } }] });
    }
    const reserve = await fetch(`${stack.url}/graphql/stream`, { method: 'PUT' });
    expect(reserve.status).toBe(401);
    expect(await reserve.json()).toMatchObject({ errors: [{ extensions: { code: 'unauthenticated' } }] });
  });

  it('a single-connection reservation answers 201 with a stream token (was 405)', async () => {
    const response = await fetch(`${stack.url}/graphql/stream`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.status).toBe(201);
    expect(await response.text()).toMatch(/^[0-9a-f-]{36}$/);
  });
});
