import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InputValidationError } from '@pothos/plugin-validation';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AccountUpdaterNotSupportedError, NetworkTokenNotFoundError } from '../../src/errors.ts';
import { AccountUpdaterClient } from '../../src/upstream/account-updater/client.ts';
import { ACCOUNT_UPDATER_ERRORS } from '../../src/upstream/account-updater/error-table.ts';
import { InvalidArgumentError, UpstreamError } from '../../src/upstream/errors.ts';
import { withGatewayErrors } from '../../src/upstream/gateway-errors.ts';
import { createUpstreamHttp, type UpstreamHttp } from '../../src/upstream/http.ts';
import { NetworkTokensClient } from '../../src/upstream/network-tokens/client.ts';
import { NETWORK_TOKEN_ERRORS } from '../../src/upstream/network-tokens/error-table.ts';
import { AccessTokenProvider } from '../../src/upstream/oauth/access-token-provider.ts';
import { CREDENTIALS, captureLogger, panWith, rejectionOf } from '../support/fixtures.ts';

/**
 * The account updater v1 and network token clients against the answers the provider documents
 * (sandbox contract §8; the example bodies of `provider-docs/examples.json`, areas
 * `account-updater-v1` and `network-tokens`, copied here literally with their source pages) and
 * against the specification's readings of the same answers (issue 19: tolerant reader), served by a
 * real HTTP server that answers what each test sets and records what it received. The requests are
 * checked too: the documented form only, and nothing sent for a request the provider would refuse
 * (strict writer).
 */

const VAULT = 'tntsandbox1';

/** https://docs.verygoodsecurity.com/vault/account-updater/account-updater-api/api-reference (202). */
const ENROL_REQUEST = { name: 'John Doe', number: '5573495XTjZP21V7312', exp_month: 7, exp_year: 24 };
const ENROL_ANSWER = {
  data: {
    name: 'John Doe',
    number: '5573495XTjZP21V7312',
    exp_month: 7,
    exp_year: 24,
    billing_address: {
      name: 'John Doe',
      company: 'John Doe Company',
      address1: '555 Example St',
      address2: 'M13 9PL',
      city: 'New York',
      region: 'NY',
      country: 'US',
      postal_code: '12301',
      phone: '+14842634673',
    },
    capabilities: ['ACCOUNT_UPDATER'],
    id: 'CRDuVQCsenqj6dbHFQq9gen2E',
    created_at: '2019-05-15T12:30:45Z',
    updated_at: '2019-05-15T12:30:45Z',
    state: 'enrolled',
    event: 'au_card.enrolled',
  },
};

/** https://docs.verygoodsecurity.com/vault/account-updater/account-updater-api/get-card, second example. */
const GET_CARD_TOK_ANSWER = {
  data: {
    id: 'CRDuVQCsenqj6dbHFQq9gen2E',
    name: 'John Doe',
    number: 'tok_svzgzzX8SDJMRjk93GVKG6b',
    exp_month: 7,
    exp_year: 24,
    capabilities: ['ACCOUNT_UPDATER'],
    created_at: '2019-05-15T12:30:45Z',
    updated_at: '2019-05-15T12:30:45Z',
    state: 'enrolled',
    event: 'au_card.enrolled',
  },
};

/**
 * https://docs.verygoodsecurity.com/vault/account-updater/account-updater-api/card-check (202), as
 * its text: `number` and `cvv` are JSON numbers, the plain PAN and the CVV.
 */
const CARD_CHECK_ANSWER_TEXT = `{
  "data": {
    "name": "John Doe",
    "number": 5573491171027312,
    "exp_month": 7,
    "exp_year": 24,
    "cvv": 123,
    "merchant": {
      "vgs_merchant_id": "MCq7GWCbtVXaNt8b4k2xraTw",
      "sub_merchant_name": "John",
      "sub_merchant_mid": 345643355
    },
    "failure_code": "account-updater-not-supported",
    "event": "au_card.valid"
  }
}`;
const DOCUMENTED_PAN = '5573491171027312';

/** https://docs.verygoodsecurity.com/vault/network-tokens/network-tokens-api/api-reference (200, bare). */
const PROVISION_REQUEST = { pan_alias: '5573495XKjDP28V7312', exp_month: 7, exp_year: 24 };
const PROVISION_ANSWER = {
  pan_alias: '9914040119524512000',
  network_token_last4: '2345',
  expires_at: '2023-12',
  state: 'ACTIVE',
  created_at: '2019-05-15T12:30:45Z',
  updated_at: '2019-05-15T12:30:45Z',
  card: {
    last4: '0010',
    bin: '489537',
    expires_at: '2023-12',
    holder_info: {
      name: 'Jane Doe',
      email: '[email protected]',
      number: '+1415-123-4567',
      billing_address: {
        name: 'John Doe',
        company: 'John Doe Company',
        address1: '555 Unblock Us St',
        address2: 'M13 9PL',
      },
    },
  },
};

/** https://docs.verygoodsecurity.com/vault/network-tokens/network-tokens-api/get-network-token (200, bare). */
const GET_TOKEN_ANSWER = {
  pan_alias: '9914040119524512000',
  network_token_last4: '2345',
  expires_at: '2023-12',
  created_at: '2019-05-15T12:30:45Z',
  updated_at: '2019-05-15T12:30:45Z',
  state: 'ACTIVE',
  card: {
    last4: '0010',
    bin: '489537',
    expires_at: '2023-12',
    holder_info: {
      name: 'Jane Doe',
      email: '[email protected]',
      number: '+1415-123-4567',
      billing_address: {
        name: 'John Doe',
        company: 'John Doe Company',
        address1: '555 Unblock Us St',
        address2: 'M13 9PL',
        city: 'New York',
        region: 'CA',
        country: 'US',
        postal_code: '12301',
        phone: '+14842634673',
      },
    },
  },
};

/** https://docs.verygoodsecurity.com/vault/network-tokens/network-tokens-api/delete-network-token (200, bare). */
const DELETE_TOKEN_ANSWER = {
  pan_alias: '9914040119524512000',
  created_at: '2019-05-15T12:30:45Z',
  updated_at: '2019-05-15T12:30:45Z',
  network_token_last4: '2345',
  state: 'DELETED',
  expires_at: '2027-01',
  card: { last4: '1234', bin: '123456', expires_at: '2027-01' },
};

/** The v1 card of {@link ENROL_ANSWER} as the client reads it. */
const DOCUMENTED_CARD = {
  id: 'CRDuVQCsenqj6dbHFQq9gen2E',
  name: 'John Doe',
  numberAlias: '5573495XTjZP21V7312',
  maskedNumber: '557349******7312',
  expMonth: 7,
  expYear: 24,
  billingAddress: {
    name: 'John Doe',
    company: 'John Doe Company',
    address1: '555 Example St',
    address2: 'M13 9PL',
    city: 'New York',
    region: 'NY',
    country: 'US',
    postalCode: '12301',
    phone: '+14842634673',
  },
  capabilities: ['ACCOUNT_UPDATER'],
  createdAt: '2019-05-15T12:30:45.000Z',
  updatedAt: '2019-05-15T12:30:45.000Z',
  state: 'enrolled',
  event: 'au_card.enrolled',
};

/** One request the stub provider received. */
interface Received {
  method: string;
  path: string;
  body: string;
}

/** What the stub provider answers to `METHOD path`: a status and the body text. */
type Answer = { status: number; body: string };

let server: Server;
let http: UpstreamHttp;
let accountUpdater: AccountUpdaterClient;
let networkTokens: NetworkTokensClient;
let logLines: string[];
const answers = new Map<string, Answer>();
const received: Received[] = [];

const json = (status: number, body: unknown): Answer => ({ status, body: JSON.stringify(body) });
/** Sets the stub's answer to `METHOD path` (below the area root `/account-updater`). */
const answer = (route: string, value: Answer) => answers.set(route, value);
/** Requests to the area (the token endpoint's are left out). */
const areaRequests = () => received.filter((request) => request.path.startsWith('/account-updater'));

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const body = await bodyOf(req);
    const path = req.url ?? '/';
    received.push({ method: req.method ?? '', path, body });
    const found =
      path === '/oauth/token'
        ? json(200, { access_token: 'documented-answers-token', token_type: 'Bearer', expires_in: 1200 })
        : answers.get(`${req.method} ${path.replace(/^\/account-updater/, '')}`);
    const { status, body: text } =
      found ?? json(404, { errors: [{ status: '404', code: 'not-found', detail: 'no stub' }] });
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const captured = captureLogger();
  logLines = captured.lines;
  http = createUpstreamHttp({ timeoutMs: 5000, logger: captured.logger });
  const tokens = new AccessTokenProvider({ tokenUrl: `${url}/oauth/token`, credentials: CREDENTIALS, http });
  accountUpdater = new AccountUpdaterClient({ baseUrl: `${url}/account-updater`, tokens, http });
  networkTokens = new NetworkTokensClient({ baseUrl: `${url}/account-updater`, tokens, http });
});

afterAll(async () => {
  await http.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  answers.clear();
  received.length = 0;
});

describe('account updater v1: the documented answers', () => {
  it('enrol: sends the documented request as it is and reads the 202 answer', async () => {
    answer('POST /cards', json(202, ENROL_ANSWER));
    const card = await accountUpdater.enrollCard(VAULT, {
      name: 'John Doe',
      number: '5573495XTjZP21V7312',
      expMonth: 7,
      expYear: 24,
    });
    expect(card).toEqual(DOCUMENTED_CARD);
    expect(areaRequests()).toEqual([
      { method: 'POST', path: '/account-updater/cards', body: JSON.stringify(ENROL_REQUEST) },
    ]);
  });

  it('enrol: sends the merchant id as vgs_merchant_id and nothing the documentation does not name', async () => {
    answer('POST /cards', json(202, ENROL_ANSWER));
    await accountUpdater.enrollCard(VAULT, {
      name: 'John Doe',
      number: '5573495XTjZP21V7312',
      expMonth: 7,
      expYear: 24,
      merchant: { serviceMerchantId: 'MCq7GWCbtVXaNt8b4k2xraTw', subMerchantName: 'John' },
    });
    expect(JSON.parse(areaRequests()[0]!.body)).toEqual({
      ...ENROL_REQUEST,
      merchant: { vgs_merchant_id: 'MCq7GWCbtVXaNt8b4k2xraTw', sub_merchant_name: 'John' },
    });
  });

  it('get card: reads both documented examples (format-preserving and tok_ number, no billing address)', async () => {
    answer('GET /cards/CRDuVQCsenqj6dbHFQq9gen2E', json(200, ENROL_ANSWER));
    expect(await accountUpdater.getCard(VAULT, 'CRDuVQCsenqj6dbHFQq9gen2E')).toEqual(DOCUMENTED_CARD);
    answer('GET /cards/CRDuVQCsenqj6dbHFQq9gen2E', json(200, GET_CARD_TOK_ANSWER));
    expect(await accountUpdater.getCard(VAULT, 'CRDuVQCsenqj6dbHFQq9gen2E')).toEqual({
      id: 'CRDuVQCsenqj6dbHFQq9gen2E',
      name: 'John Doe',
      numberAlias: 'tok_svzgzzX8SDJMRjk93GVKG6b',
      expMonth: 7,
      expYear: 24,
      capabilities: ['ACCOUNT_UPDATER'],
      createdAt: '2019-05-15T12:30:45.000Z',
      updatedAt: '2019-05-15T12:30:45.000Z',
      state: 'enrolled',
      event: 'au_card.enrolled',
    });
  });

  it('card check: reads the 202 answer, masks the plain PAN, drops the CVV, reads vgs_merchant_id', async () => {
    answer('POST /card-check', { status: 202, body: CARD_CHECK_ANSWER_TEXT });
    const result = await accountUpdater.checkCard(VAULT, {
      name: 'John Doe',
      number: '5573495XTjZP21V7312',
      expMonth: 7,
      expYear: 24,
    });
    expect(result).toEqual({
      name: 'John Doe',
      maskedNumber: '557349******7312',
      expMonth: 7,
      expYear: 24,
      merchant: {
        serviceMerchantId: 'MCq7GWCbtVXaNt8b4k2xraTw',
        subMerchantName: 'John',
        subMerchantMid: 345643355,
      },
      failureCode: 'account-updater-not-supported',
      event: 'au_card.valid',
    });
    expect(areaRequests()).toEqual([
      { method: 'POST', path: '/account-updater/card-check', body: JSON.stringify(ENROL_REQUEST) },
    ]);
    expect(JSON.stringify(result)).not.toContain(DOCUMENTED_PAN);
    expect(JSON.stringify(result)).not.toContain('123');
    expect(logLines.join('\n')).not.toContain(DOCUMENTED_PAN);
  });

  it('card check: a 19-digit PAN sent as a JSON number keeps its digits until masked', async () => {
    const pan = panWith('400021', '3001', 19);
    answer('POST /card-check', {
      status: 202,
      body: `{"data":{"number":${pan},"exp_month":7,"exp_year":24,"cvv":9876,"event":"au_card.updated"}}`,
    });
    const result = await accountUpdater.checkCard(VAULT, {
      number: pan,
      expMonth: 7,
      expYear: 24,
      cvv: '9876',
    });
    expect(result).toEqual({
      maskedNumber: `400021*********3001`,
      expMonth: 7,
      expYear: 24,
      event: 'au_card.updated',
    });
    expect(JSON.stringify(result)).not.toMatch(/9876|4000210/);
  });
});

describe('account updater v1: the specification readings of the same answers', () => {
  it('enrol 201 and card check 200, with or without the data envelope; service_merchant_id read as the merchant id', async () => {
    answer('POST /cards', json(201, ENROL_ANSWER.data));
    expect(
      await accountUpdater.enrollCard(VAULT, {
        name: 'John Doe',
        number: '5573495XTjZP21V7312',
        expMonth: 7,
        expYear: 24,
      }),
    ).toEqual(DOCUMENTED_CARD);
    answer(
      'POST /card-check',
      json(200, {
        data: {
          name: 'John Doe',
          number: '557349Ab3x9Kq7312',
          exp_month: 7,
          exp_year: 24,
          merchant: {
            service_merchant_id: 'SMsandbox1merchant00001',
            sub_merchant_name: 'John',
            sub_merchant_mid: 100001,
          },
          event: 'au_card.updated',
        },
      }),
    );
    expect(
      await accountUpdater.checkCard(VAULT, {
        name: 'John Doe',
        number: '5573495XTjZP21V7312',
        expMonth: 7,
        expYear: 24,
      }),
    ).toEqual({
      name: 'John Doe',
      numberAlias: '557349Ab3x9Kq7312',
      maskedNumber: '557349******7312',
      expMonth: 7,
      expYear: 24,
      merchant: {
        serviceMerchantId: 'SMsandbox1merchant00001',
        subMerchantName: 'John',
        subMerchantMid: 100001,
      },
      event: 'au_card.updated',
    });
  });

  it('ignores unknown members, takes null for an absent member, keeps an event and a state it does not know', async () => {
    answer(
      'GET /cards/CRDuVQCsenqj6dbHFQq9gen2E',
      json(200, {
        data: {
          ...GET_CARD_TOK_ANSWER.data,
          name: null,
          merchant: null,
          state: 'SUSPENDED',
          event: 'au_card.renamed',
          network: 'visa',
        },
      }),
    );
    const card = await accountUpdater.getCard(VAULT, 'CRDuVQCsenqj6dbHFQq9gen2E');
    expect(card).toMatchObject({ state: 'suspended', event: 'au_card.renamed' });
    expect(card).not.toHaveProperty('name');
    expect(card).not.toHaveProperty('merchant');
    expect(card).not.toHaveProperty('network');
  });

  it('reads a billing address whose lines are null as those lines absent', async () => {
    answer(
      'GET /cards/CRDuVQCsenqj6dbHFQq9gen2E',
      json(200, {
        data: {
          ...ENROL_ANSWER.data,
          billing_address: {
            ...ENROL_ANSWER.data.billing_address,
            company: null,
            address2: null,
            phone: null,
          },
        },
      }),
    );
    const card = await accountUpdater.getCard(VAULT, 'CRDuVQCsenqj6dbHFQq9gen2E');
    expect(card.billingAddress).toEqual({
      name: 'John Doe',
      address1: '555 Example St',
      city: 'New York',
      region: 'NY',
      country: 'US',
      postalCode: '12301',
    });
  });
});

describe('account updater v1: what the provider refuses is not sent (strict writer)', () => {
  it.each([
    ['a four-digit exp_year', { expYear: 2030 }, 'input.expYear'],
    ['a tok_ number', { number: 'tok_svzgzzX8SDJMRjk93GVKG6b' }, 'input.number'],
    ['a 12-character number', { number: '557349XT7312' }, 'input.number'],
    ['a 2-digit cvv', { cvv: '12' }, 'input.cvv'],
    ['a name of 256 characters', { name: 'N'.repeat(256) }, 'input.name'],
  ])('card check refuses %s with InvalidArgumentError naming the member', async (_case, change, argument) => {
    const error = await rejectionOf(
      accountUpdater.checkCard(VAULT, {
        name: 'John Doe',
        number: '5573495XTjZP21V7312',
        expMonth: 7,
        expYear: 24,
        ...change,
      }),
    );
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as InvalidArgumentError).argument).toBe(argument);
    expect(areaRequests()).toEqual([]);
  });

  it('the gateway boundary turns such a refusal into an input error on the field', async () => {
    const client = withGatewayErrors(accountUpdater, ACCOUNT_UPDATER_ERRORS);
    const error = await rejectionOf(
      client.checkCard(VAULT, { number: '5573495XTjZP21V7312', expMonth: 7, expYear: 2030 }),
    );
    expect(error).toBeInstanceOf(InputValidationError);
    expect((error as InputValidationError).issues).toEqual([
      { message: 'is not accepted by the provider', path: ['input', 'expYear'] },
    ]);
    expect(areaRequests()).toEqual([]);
  });
});

describe('account updater v1: the provider refusing a member', () => {
  it('a 422 with source.pointer reaches the client as an input error on that field, vgs_merchant_id as serviceMerchantId', async () => {
    const client = withGatewayErrors(accountUpdater, ACCOUNT_UPDATER_ERRORS);
    for (const [pointer, path] of [
      ['/exp_year', ['input', 'expYear']],
      ['/merchant/vgs_merchant_id', ['input', 'merchant', 'serviceMerchantId']],
    ] as const) {
      answer(
        'POST /card-check',
        json(422, {
          errors: [{ status: '422', code: 'invalid-format', detail: 'is invalid', source: { pointer } }],
        }),
      );
      const error = await rejectionOf(
        client.checkCard(VAULT, { number: '5573495XTjZP21V7312', expMonth: 7, expYear: 24 }),
      );
      expect(error).toBeInstanceOf(InputValidationError);
      expect((error as InputValidationError).issues).toEqual([{ message: 'is invalid', path: [...path] }]);
    }
  });

  it('a 422 of a documented code stays its typed error, pointer or not', async () => {
    const client = withGatewayErrors(accountUpdater, ACCOUNT_UPDATER_ERRORS);
    answer(
      'POST /card-check',
      json(422, {
        errors: [
          {
            status: '422',
            code: 'account-updater-not-supported',
            detail: 'no',
            source: { pointer: '/number' },
          },
        ],
      }),
    );
    expect(
      await rejectionOf(client.checkCard(VAULT, { number: '5573495XTjZP21V7312', expMonth: 7, expYear: 24 })),
    ).toBeInstanceOf(AccountUpdaterNotSupportedError);
  });
});

describe('network tokens: the documented answers', () => {
  const documentedToken = {
    panAlias: '9914040119524512000',
    networkTokenLast4: '2345',
    expiresAt: '2023-12',
    state: 'ACTIVE',
    createdAt: '2019-05-15T12:30:45.000Z',
    updatedAt: '2019-05-15T12:30:45.000Z',
  };
  const holder = {
    name: 'Jane Doe',
    email: '[email protected]',
    phoneNumber: '+1415-123-4567',
  };

  it('provision: sends the documented request as it is and reads the bare 200 answer with its final state', async () => {
    answer('POST /network-tokens', json(200, PROVISION_ANSWER));
    expect(
      await networkTokens.provision(VAULT, { panAlias: '5573495XKjDP28V7312', expMonth: 7, expYear: 24 }),
    ).toEqual({
      ...documentedToken,
      card: {
        last4: '0010',
        bin: '489537',
        expiresAt: '2023-12',
        holderInfo: {
          ...holder,
          billingAddress: {
            name: 'John Doe',
            company: 'John Doe Company',
            address1: '555 Unblock Us St',
            address2: 'M13 9PL',
          },
        },
      },
    });
    expect(areaRequests()).toEqual([
      { method: 'POST', path: '/account-updater/network-tokens', body: JSON.stringify(PROVISION_REQUEST) },
    ]);
  });

  it('get and delete: the 19-digit alias in the path, the bare 200 answers', async () => {
    answer('GET /network-tokens/9914040119524512000', json(200, GET_TOKEN_ANSWER));
    answer('DELETE /network-tokens/9914040119524512000', json(200, DELETE_TOKEN_ANSWER));
    expect(await networkTokens.get(VAULT, '9914040119524512000')).toEqual({
      ...documentedToken,
      card: {
        last4: '0010',
        bin: '489537',
        expiresAt: '2023-12',
        holderInfo: {
          ...holder,
          billingAddress: {
            name: 'John Doe',
            company: 'John Doe Company',
            address1: '555 Unblock Us St',
            address2: 'M13 9PL',
            city: 'New York',
            region: 'CA',
            country: 'US',
            postalCode: '12301',
            phone: '+14842634673',
          },
        },
      },
    });
    expect(await networkTokens.delete(VAULT, '9914040119524512000')).toEqual({
      panAlias: '9914040119524512000',
      networkTokenLast4: '2345',
      expiresAt: '2027-01',
      state: 'DELETED',
      createdAt: '2019-05-15T12:30:45.000Z',
      updatedAt: '2019-05-15T12:30:45.000Z',
      card: { last4: '1234', bin: '123456', expiresAt: '2027-01' },
    });
    expect(areaRequests().map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /account-updater/network-tokens/9914040119524512000',
      'DELETE /account-updater/network-tokens/9914040119524512000',
    ]);
  });

  it('the specification reading: 202 in data without a state; an unknown state and members kept or ignored', async () => {
    answer(
      'POST /network-tokens',
      json(202, {
        data: {
          pan_alias: 'tok_sandbox_AAAAAAAAAAAAAAAAAAAAAA',
          created_at: '2026-11-21T05:01:02.123Z',
          updated_at: '2026-11-21T05:01:02.123Z',
          card: { last4: '5001', bin: '510026', expires_at: '2030-12', holder_info: {} },
        },
      }),
    );
    expect(
      await networkTokens.provision(VAULT, {
        panAlias: 'tok_sandbox_AAAAAAAAAAAAAAAAAAAAAA',
        expMonth: 12,
        expYear: 30,
      }),
    ).toEqual({
      panAlias: 'tok_sandbox_AAAAAAAAAAAAAAAAAAAAAA',
      createdAt: '2026-11-21T05:01:02.123Z',
      updatedAt: '2026-11-21T05:01:02.123Z',
      card: { last4: '5001', bin: '510026', expiresAt: '2030-12' },
    });
    answer(
      'GET /network-tokens/9914040119524512000',
      json(200, {
        ...DELETE_TOKEN_ANSWER,
        state: 'CARD_UPDATED',
        payment_account_reference: '',
        card: { ...DELETE_TOKEN_ANSWER.card, bin: 489537 },
      }),
    );
    expect(await networkTokens.get(VAULT, '9914040119524512000')).toMatchObject({
      state: 'CARD_UPDATED',
      card: { bin: '489537' },
    });
  });

  it('refuses an alias that is a PAN or not a safe path segment before any request', async () => {
    const client = withGatewayErrors(networkTokens, NETWORK_TOKEN_ERRORS);
    for (const bad of [
      '5573491171027312',
      '9914040119524512000/x',
      '..',
      'tok_%2F',
      '5573495XTj?P21V7312',
      '5573495XTj#P21V7312',
      `tok_${'a'.repeat(125)}`,
    ]) {
      const error = await rejectionOf(networkTokens.get(VAULT, bad));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as InvalidArgumentError).argument).toBe('panAlias');
      expect((error as Error).message).not.toContain(bad);
      expect(await rejectionOf(client.delete(VAULT, bad))).not.toBeInstanceOf(UpstreamError);
    }
    expect(areaRequests()).toEqual([]);
  });

  it('maps the provider 422 of a provisioning member to an input error, its 404 to not-found', async () => {
    const client = withGatewayErrors(networkTokens, NETWORK_TOKEN_ERRORS);
    answer(
      'POST /network-tokens',
      json(422, {
        errors: [
          {
            status: '422',
            code: 'invalid-format',
            detail: 'holder_info.number: bad',
            source: { pointer: '/holder_info/number' },
          },
        ],
      }),
    );
    const input = { panAlias: '5573495XKjDP28V7312', expMonth: 7, expYear: 24 };
    const invalid = await rejectionOf(client.provision(VAULT, input));
    expect(invalid).toBeInstanceOf(InputValidationError);
    expect((invalid as InputValidationError).issues).toEqual([
      { message: 'holder_info.number: bad', path: ['input', 'holderInfo', 'phoneNumber'] },
    ]);
    answer(
      'POST /network-tokens',
      json(404, { errors: [{ status: '404', code: 'not-found', detail: 'no card' }] }),
    );
    expect(await rejectionOf(client.provision(VAULT, input))).toBeInstanceOf(NetworkTokenNotFoundError);
  });
});
