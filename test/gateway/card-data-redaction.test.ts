import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createLogger } from '../../src/lib/logger.ts';
import { createUpstream } from '../../src/upstream/index.ts';
import { notification, postNotification, type Stack, startStack } from '../support/fixtures.ts';
import { openSse, readEvents } from '../support/sse.ts';

/**
 * Issue 10, class 1 (card data in errors), over HTTP, SSE and graphql-ws: a PAN glued to letters,
 * digits or an underscore, a CVC in a coercion error, card data in a malformed JSON body's parser
 * message, in a graphql-ws close reason, in webhook free text and in card metadata never comes back,
 * never reaches the log and is never stored.
 */

/** PANs of this file; none may appear in any answer or log line. */
const GLUED_PANS = ['5105105105105100', '4242424242424242', '378282246310005', '4111111111111111'];
const CVC = '7319';

const CREATE_CARD = /* GraphQL */ `
  mutation RedactionCreateCard($input: CreateCardInput!) {
    createCard(input: $input) {
      __typename
      ... on MutationCreateCardSuccess { data { cardId metadata } }
      ... on Error { code message }
    }
  }
`;

function expectNoCardData(text: string): void {
  for (const pan of GLUED_PANS) expect(text).not.toContain(pan);
  expect(text).not.toContain(CVC);
}

async function postGraphql(stack: Stack, body: string, token: string, contentType = 'application/json') {
  const response = await request(`${stack.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': contentType,
      accept: 'application/graphql-response+json',
      authorization: `Bearer ${token}`,
    },
    body,
  });
  return { status: response.statusCode, text: await response.body.text() };
}

/** Opens a raw graphql-ws socket, acknowledged; `messages` collects every message received. */
async function rawGraphqlWs(stack: Stack, token: string) {
  const socket = new WebSocket(`${stack.url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
  const messages: Record<string, unknown>[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  socket.on('message', (data) => messages.push(JSON.parse(data.toString()) as Record<string, unknown>));
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } }));
  await expect.poll(() => messages.some((m) => m.type === 'connection_ack')).toBe(true);
  return { socket, messages, closed };
}

describe('card data never leaves the gateway (class 1)', () => {
  let stack: Stack;
  let token: string;

  beforeAll(async () => {
    stack = await startStack();
    token = await stack.token({ vaults: ['tntsandbox1'] });
  });
  afterAll(async () => {
    await stack.stop();
    expectNoCardData(readFileSync(stack.logFile, 'utf8'));
  });

  it('HTTP: a malformed JSON body answers 400 without the PAN or CVC of the parser message', async () => {
    const body = `{"query":"mutation { x }","variables":{"input":{"pan":"${GLUED_PANS[3]}","cvc":"${CVC}"}}`;
    const { status, text } = await postGraphql(stack, body, token);
    expect(status).toBe(400);
    expectNoCardData(text);
    expect(JSON.parse(text)).toEqual({
      errors: [
        {
          message: 'POST body sent invalid JSON.',
          extensions: {
            code: 'BAD_REQUEST',
            originalError: { name: 'SyntaxError' },
            requestId: expect.any(String),
          },
        },
      ],
    });
  });

  it('HTTP: PANs glued to letters, digits and underscores are masked in error messages', async () => {
    const { status, text } = await postGraphql(
      stack,
      JSON.stringify({ query: '{ CRD5105105105105100 PAN4242424242424242 tok_378282246310005 }' }),
      token,
    );
    expect(status).toBe(400);
    expectNoCardData(text);
    expect(JSON.parse(text).errors.map((e: { message: string }) => e.message)).toEqual([
      'Cannot query field "CRD510510******5100" on type "Query".',
      'Cannot query field "PAN424242******4242" on type "Query".',
      'Cannot query field "tok_378282*****0005" on type "Query".',
    ]);
  });

  it('HTTP: a CVC of the wrong type is not echoed by the coercion error', async () => {
    const { status, text } = await postGraphql(
      stack,
      JSON.stringify({
        query: CREATE_CARD,
        variables: { input: { pan: GLUED_PANS[3], cvc: Number(CVC), expMonth: 12, expYear: 30 } },
      }),
      token,
    );
    expect(status).toBe(400);
    expectNoCardData(text);
    expect(JSON.parse(text).errors.map((e: { message: string }) => e.message)).toEqual([
      'Variable "$input" got invalid value at "input.cvc"; String cannot represent a non string value.',
    ]);
  });

  it('SSE: a glued PAN in a refused subscription is masked', async () => {
    const stream = await openSse(stack.url, { query: 'subscription { tok_4111111111111111 }' }, token);
    const events = await readEvents(stream);
    expectNoCardData(JSON.stringify(events));
    expect(stream.status).toBe(200);
    expect(events.map((e) => e.event)).toEqual(['next', 'complete']);
    expect(JSON.parse(events[0]!.data)).toEqual({
      errors: [
        {
          message: 'Cannot query field "tok_411111******1111" on type "Subscription".',
          locations: [{ line: 1, column: 16 }],
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED', requestId: expect.any(String) },
        },
      ],
    });
  });

  it('graphql-ws: glued PANs and CVCs are masked in error messages and in close reasons', async () => {
    const { socket, messages, closed } = await rawGraphqlWs(stack, token);
    socket.send(
      JSON.stringify({
        id: 'a',
        type: 'subscribe',
        payload: { query: 'subscription { PAN4242424242424242 }' },
      }),
    );
    socket.send(
      JSON.stringify({
        id: 'b',
        type: 'subscribe',
        payload: {
          query: CREATE_CARD,
          variables: { input: { pan: GLUED_PANS[0], cvc: Number(CVC), expMonth: 12, expYear: 30 } },
        },
      }),
    );
    await expect.poll(() => messages.filter((m) => m.type === 'error' || m.type === 'next').length).toBe(2);
    const byId = Object.fromEntries(
      messages.filter((m) => m.type === 'error' || m.type === 'next').map((m) => [m.id, m]),
    );
    expect(byId.a).toEqual({
      id: 'a',
      type: 'error',
      payload: [
        {
          message: 'Cannot query field "PAN424242******4242" on type "Subscription".',
          locations: [{ line: 1, column: 16 }],
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED', requestId: expect.any(String) },
        },
      ],
    });
    // A request error (no `data`: the variables did not coerce) is an `error` message on graphql-ws,
    // as every transport refuses it before execution.
    expect(byId.b).toMatchObject({ type: 'error' });
    expect((byId.b as { payload: { message: string }[] }).payload[0]!.message).toBe(
      'Variable "$input" got invalid value at "input.cvc"; String cannot represent a non string value.',
    );
    // A subscriber id chosen by the client is quoted in the 4409 close reason.
    const id = `PAN${GLUED_PANS[3]}`;
    const operation = { query: 'subscription { cardEvents { id } }' };
    socket.send(JSON.stringify({ id, type: 'subscribe', payload: operation }));
    socket.send(JSON.stringify({ id, type: 'subscribe', payload: operation }));
    expect(await closed).toEqual({ code: 4409, reason: 'Subscriber for PAN411111******1111 already exists' });
    expectNoCardData(JSON.stringify(messages));
  });

  it('webhook summary and description are masked before they are stored in the event log', async () => {
    const body = notification();
    body.summary = `Card tok_${GLUED_PANS[0]} updated`;
    body.description = `PAN ${GLUED_PANS[1]} changed...`;
    expect((body.description as string).length).toBe(31);
    expect((await postNotification(stack.url, body)).status).toBe(200);
    const [stored] = (await stack.app.events!.history({ tenants: ['tntsandbox1'] }, null, 500)).filter(
      (event) => event.id === body.id,
    );
    expect(stored).toMatchObject({
      summary: 'Card tok_510510******5100 updated',
      description: 'PAN 424242******4242 changed...',
    });
  });

  it('card metadata holding card data is masked before it is stored upstream and when returned', async () => {
    const metadata = {
      note: `customer gave PAN4242424242424242 by phone`,
      nested: { reference: 'tok_378282246310005', cvv: CVC },
      count: 3,
    };
    const { status, text } = await postGraphql(
      stack,
      JSON.stringify({
        query: CREATE_CARD,
        variables: { input: { pan: GLUED_PANS[0], expMonth: 12, expYear: 30, metadata } },
      }),
      token,
    );
    expect(status).toBe(200);
    expectNoCardData(text);
    const created = JSON.parse(text).data.createCard;
    const masked = {
      note: 'customer gave PAN424242******4242 by phone',
      nested: { reference: 'tok_378282*****0005', cvv: '[redacted]' },
      count: 3,
    };
    expect(created.data.metadata).toEqual(masked);
    // What the upstream stored, read around the gateway.
    const upstream = createUpstream(
      {
        ...stack.config.upstream,
        cardInterfaceUrl: `${stack.sandboxUrl}/card-interface`,
        accountUpdaterUrl: `${stack.sandboxUrl}/account-updater`,
        cardAttributesUrl: `${stack.sandboxUrl}/card-attributes`,
        accountsUrl: `${stack.sandboxUrl}/accounts`,
        tokenUrl: `${stack.sandboxUrl}/oauth/token`,
      },
      createLogger({ level: 'silent', name: 'test' }),
    );
    try {
      const stored = await upstream.cardInterface.getCard('tntsandbox1', created.data.cardId);
      expect(stored.meta).toEqual(masked);
    } finally {
      await upstream.close();
    }
  });
});
