import { describe, expect, it } from 'vitest';
import { maskPan } from '../../src/lib/pan.ts';
import { replacementPan } from '../../src/sandbox/test-cards.ts';
import { InvalidArgumentError, UpstreamError } from '../../src/upstream/errors.ts';
import {
  areaLogEntries,
  containsDigitRun,
  leftover,
  panWith,
  rejectionOf,
  startUpstream,
  useUpstream,
} from '../support/fixtures.ts';

/** Card interface client against the embedded sandbox (spec "Card interface"; contract §5). */

const VAULT = 'tntsandbox1';
/** The wire the fixture's sandbox answers in (`SANDBOX_WIRE`, documented by default). */
const WIRE = process.env.SANDBOX_WIRE === 'specification' ? 'specification' : 'documented';
const CARDS = '/card-interface/cards';
const PANS_USED: string[] = [];

/** Records the PAN so the final test can check it never reached a log line. */
function pan(value: string): string {
  PANS_USED.push(value);
  return value;
}

/** Creates a card of `number` (see {@link pan}) in {@link VAULT}, expiring `expMonth`/`expYear`. */
function createCard(number: string, expMonth: number, expYear: number) {
  return fixture.cardInterface.createCard(VAULT, { pan: pan(number), expMonth, expYear });
}

const fixture = useUpstream({ timeoutMs: 1_000, hangMs: 4_000 });

const CARDHOLDER = {
  name: 'Ada Lovelace',
  company: 'Analytical Engines',
  address: { address1: '1 Main St', city: 'London', postalCode: 'N1 9GU', country: 'GB' },
};

describe('CardInterfaceClient', () => {
  it('creates a card and returns aliases, BIN, last four and (specification wire) timestamps — never the PAN or CVC', async () => {
    const card = await fixture.cardInterface.createCard(VAULT, {
      pan: pan('5100260000093003'),
      cvc: '123',
      cvcStatus: 'active',
      expMonth: 12,
      expYear: 30,
      cardholder: CARDHOLDER,
      tokenType: 'pan',
      walletType: 'apple_pay',
      meta: { customer_id: 42 },
    });
    const timestamp = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const record = {
      // The documented wire's ids have the card interface test table's 52 characters.
      id: expect.stringMatching(WIRE === 'documented' ? /^CRD[A-Za-z0-9]{49}$/ : /^CRD[A-Za-z0-9]{22}$/),
      panAlias: expect.stringMatching(/^tok_sandbox_[A-Za-z0-9]{22}$/),
      cvcAlias: expect.stringMatching(/^tok_sandbox_[A-Za-z0-9]{22}$/),
      bin: '510026',
      last4: '3003',
      brand: 'mastercard',
      expMonth: 12,
      expYear: 30,
      cvcStatus: 'active',
      cardholder: CARDHOLDER,
      tokenType: 'pan',
      walletType: 'apple_pay',
      meta: { customer_id: 42 },
    };
    // The documented 201 has no timestamps (its brand is derived from the BIN); a read has them.
    expect(card).toEqual({
      ...record,
      ...(WIRE === 'documented' ? {} : { createdAt: timestamp, updatedAt: timestamp }),
      duplicate: false,
    });
    expect(JSON.stringify(card)).not.toMatch(/5100260000093003|"123"|"pan":|"cvc":|first8/);
    const read = await fixture.cardInterface.getCard(VAULT, card.id);
    expect(read).toEqual({ ...record, createdAt: timestamp, updatedAt: timestamp });
    expect(Math.abs(Date.parse(read.createdAt!) - Date.now())).toBeLessThan(10_000);
  });

  it('subscribes (idempotently), exposes accountUpdater in the card, and unsubscribes', async () => {
    const { id } = await createCard('4000210000993003', 1, 29);
    const subscription = await fixture.cardInterface.subscribe(VAULT, id);
    expect(subscription).toEqual({
      id: expect.stringMatching(/^CUS[A-Za-z0-9]{22}$/),
      cardId: id,
      state: 'enrolled',
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    });
    expect(await fixture.cardInterface.subscribe(VAULT, id)).toEqual(subscription);
    const subscribed = await fixture.cardInterface.getCard(VAULT, id);
    expect(subscribed.accountUpdater).toEqual({ subscriptionId: subscription.id, state: 'enrolled' });
    expect(subscribed.meta).toEqual({});

    await expect(fixture.cardInterface.unsubscribe(VAULT, id)).resolves.toBeUndefined();
    await expect(fixture.cardInterface.unsubscribe(VAULT, id)).resolves.toBeUndefined();
    expect((await fixture.cardInterface.getCard(VAULT, id)).accountUpdater).toBeUndefined();
  });

  it('reports a failed subscription for test cards ending 4002', async () => {
    const { id } = await createCard('5100260000994002', 5, 31);
    expect(await fixture.cardInterface.subscribe(VAULT, id)).toMatchObject({ cardId: id, state: 'failed' });
    expect((await fixture.cardInterface.getCard(VAULT, id)).accountUpdater).toBeUndefined();
  });

  it('masks full PANs of a 3001 check to BIN and last four, 19-digit PANs included', async () => {
    for (const full of [pan('5100260000193001'), pan(panWith('400021', '3001', 19))]) {
      PANS_USED.push(replacementPan(full));
      const { id } = await fixture.cardInterface.createCard(VAULT, { pan: full, expMonth: 12, expYear: 30 });
      const updates = await fixture.cardInterface.check(VAULT, id);
      expect(updates).toEqual({
        cardId: id,
        event: 'updated',
        updatedValues: [
          { fieldName: 'pan', oldValue: maskPan(full), newValue: maskPan(replacementPan(full)) },
        ],
      });
      expect(containsDigitRun(JSON.stringify(updates))).toBe(false);
    }
    expect(maskPan(panWith('400021', '3001', 19))).toBe('400021*********3001');
  });

  it('maps expiry updates and the other check events', async () => {
    const expiry = await createCard('5100260000593002', 12, 98);
    expect(await fixture.cardInterface.check(VAULT, expiry.id)).toEqual({
      cardId: expiry.id,
      event: 'updated',
      updatedValues: [{ fieldName: 'expYear', oldValue: 98, newValue: 1 }],
    });
    const closed = await createCard('4000210000493004', 12, 30);
    expect(await fixture.cardInterface.check(VAULT, closed.id)).toEqual({
      cardId: closed.id,
      event: 'closed',
      updatedValues: [],
    });
  });

  it('refuses a check of an unsubscribed Amex card with 422 account-updater-not-supported', async () => {
    const { id } = await createCard('378282000193001', 12, 30);
    const error = await rejectionOf(fixture.cardInterface.check(VAULT, id));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      area: 'card-interface',
      status: 422,
      code: 'account-updater-not-supported',
      retryable: false,
    });
    await fixture.cardInterface.subscribe(VAULT, id);
    expect(await fixture.cardInterface.check(VAULT, id)).toMatchObject({
      event: 'updated',
      updatedValues: [{ fieldName: 'pan', oldValue: '378282******3001' }],
    });
  });

  it('answers 404 card-not-found for an unknown card and for a card of another vault', async () => {
    await expect(fixture.cardInterface.getCard(VAULT, 'CRDnoSuchCardAbcdefghijkl')).rejects.toMatchObject({
      area: 'card-interface',
      status: 404,
      code: 'card-not-found',
      retryable: false,
    });
    const { id } = await createCard('4000210000993003', 2, 30);
    await expect(fixture.cardInterface.check('tntsandbox2', id)).rejects.toMatchObject({
      status: 404,
      code: 'card-not-found',
    });
  });

  it('carries source.pointer of a 400 and keeps the PAN out of the error', async () => {
    const error = (await rejectionOf(createCard('4000210000993003', 13, 30))) as UpstreamError;
    expect(error).toMatchObject({
      area: 'card-interface',
      status: 400,
      code: 'bad-request',
      pointer: '/data/attributes/exp_month',
      retryable: false,
    });
    const luhn = (await rejectionOf(createCard('4000210000993004', 1, 30))) as UpstreamError;
    expect(luhn).toMatchObject({ status: 400, code: 'bad-request', pointer: '/data/attributes/pan' });
    for (const e of [error, luhn])
      expect(containsDigitRun(`${e.message} ${e.detail} ${e.stack}`)).toBe(false);
  });

  it.each([
    ['5100260000394500', 500, 'server-error'],
    ['5100260000294502', 502, 'bad-gateway'],
    ['5100260000694503', 503, 'service-unavailable'],
    ['5100260000194504', 504, 'gateway-timeout'],
  ])(
    'maps fault card %s to a retryable %i %s, sent once (POST is never retried)',
    async (faultPan, status, code) => {
      const before = fixture.requestsTo('POST', CARDS);
      const error = (await rejectionOf(createCard(faultPan, 12, 30))) as UpstreamError;
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({ area: 'card-interface', status, code, retryable: true });
      expect(fixture.requestsTo('POST', CARDS)).toBe(before + 1);
      expect(`${error.message} ${error.detail} ${error.stack}`).not.toContain(faultPan);
      expect(containsDigitRun(error.message)).toBe(false);
    },
  );

  it('invalidates the token and retries once on 401 (card 4401), then reports unauthorized', async () => {
    const staleToken = await fixture.tokens.getToken(VAULT);
    const tokensBefore = fixture.requestsTo('POST', '/oauth/token');
    const cardsBefore = fixture.requestsTo('POST', CARDS);
    const error = await rejectionOf(createCard('5100260000394401', 12, 30));
    expect(error).toMatchObject({
      area: 'card-interface',
      status: 401,
      code: 'unauthorized',
      retryable: false,
    });
    expect(fixture.requestsTo('POST', CARDS)).toBe(cardsBefore + 2);
    expect(fixture.requestsTo('POST', '/oauth/token')).toBe(tokensBefore + 1);
    const freshToken = await fixture.tokens.getToken(VAULT);
    expect(freshToken).not.toBe(staleToken);
    expect(fixture.requestsTo('POST', '/oauth/token')).toBe(tokensBefore + 1);

    await expect(createCard('5100260000294403', 12, 30)).rejects.toMatchObject({
      status: 403,
      code: 'forbidden',
      retryable: false,
    });
  });

  it('recovers from a token the upstream no longer knows (sandbox restarted on the same port)', async () => {
    const restarted = leftover(await startUpstream(), (upstream) => upstream.http.close());
    const port = new URL(restarted.url).port;
    const token = await restarted.tokens.getToken(VAULT);
    await restarted.sandbox.stop();
    const { createSandbox } = await import('../../src/sandbox/sandbox.ts');
    const { createLogger } = await import('../../src/lib/logger.ts');
    const second = createSandbox({
      port: Number(port),
      logger: createLogger({ level: 'silent', name: 'sandbox' }),
      webhookDelayMs: 50,
    });
    leftover(second, (sandbox) => sandbox.stop());
    await second.start();
    const card = await restarted.cardInterface.createCard(VAULT, {
      pan: pan('4000210000993003'),
      expMonth: 3,
      expYear: 30,
    });
    expect(card.last4).toBe('3003');
    expect(second.requests().map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      `POST ${CARDS} 401`,
      'POST /oauth/token 200',
      `POST ${CARDS} 201`,
    ]);
    expect(await restarted.tokens.getToken(VAULT)).not.toBe(token);
  });

  it('times out on the hanging card 4998 with code upstream-timeout and no status', async () => {
    const started = Date.now();
    const error = await rejectionOf(createCard('5100260000794998', 12, 30));
    expect(Date.now() - started).toBeLessThan(2500);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      area: 'card-interface',
      code: 'upstream-timeout',
      status: undefined,
      retryable: true,
    });
    expect((error as Error).message).toBe(
      'upstream card-interface POST /card-interface/cards failed: upstream-timeout',
    );
  });

  it('rejects a malformed card id with InvalidArgumentError before any request', async () => {
    const before = fixture.sandbox.requests().length;
    for (const bad of ['', 'crd123', 'CRD/../x', 'CRD 1', 'CRD%2F', '5100260000193001']) {
      for (const call of [
        fixture.cardInterface.getCard(VAULT, bad),
        fixture.cardInterface.subscribe(VAULT, bad),
        fixture.cardInterface.unsubscribe(VAULT, bad),
        fixture.cardInterface.check(VAULT, bad),
      ]) {
        const error = (await rejectionOf(call)) as InvalidArgumentError;
        expect(error).toBeInstanceOf(InvalidArgumentError);
        expect(error.argument).toBe('cardId');
        expect(error.message).not.toContain('5100260000193001');
      }
    }
    expect(fixture.sandbox.requests().length).toBe(before);
  });

  it('logged every call at debug with area, method, path and status, and never a PAN', () => {
    const calls = areaLogEntries(fixture.logLines, 'card-interface');
    expect(calls.length).toBeGreaterThan(20);
    expect(calls).toContainEqual(
      expect.objectContaining({ level: 20, method: 'POST', path: CARDS, status: 201, msg: 'upstream call' }),
    );
    const all = fixture.logLines.join('\n');
    for (const used of PANS_USED) expect(all).not.toContain(used);
    // pino's `time` (epoch ms, 13 digits) is the only long digit run allowed.
    const withoutTime = fixture.logLines.map((line) => JSON.stringify({ ...JSON.parse(line), time: 0 }));
    expect(containsDigitRun(withoutTime.join('\n'))).toBe(false);
  });
});
