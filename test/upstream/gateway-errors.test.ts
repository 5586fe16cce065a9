import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InputValidationError } from '@pothos/plugin-validation';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CardNotFoundError,
  NetworkTokenCardNotAllowedError,
  NetworkTokenDeclinedError,
  NetworkTokenNotFoundError,
  NetworkTokenRejectedError,
  UpstreamServiceError,
} from '../../src/errors.ts';
import { AccountUpdaterClient } from '../../src/upstream/account-updater/client.ts';
import { ACCOUNT_UPDATER_ERRORS } from '../../src/upstream/account-updater/error-table.ts';
import { CardInterfaceClient } from '../../src/upstream/card-interface/client.ts';
import { CARD_INTERFACE_ERRORS } from '../../src/upstream/card-interface/error-table.ts';
import { InvalidArgumentError, UpstreamError } from '../../src/upstream/errors.ts';
import { toGatewayError, withGatewayErrors } from '../../src/upstream/gateway-errors.ts';
import { NETWORK_TOKEN_ERRORS } from '../../src/upstream/network-tokens/error-table.ts';
import { useUpstream } from '../support/fixtures.ts';

const noFacts = { sentInput: false };

describe('the client boundary (upstream failure → typed gateway error)', () => {
  it('maps each network token row of the specification to its class and constant code', () => {
    const cases = [
      [404, 'declined', NetworkTokenDeclinedError, 'declined'],
      [422, 'card-not-allowed', NetworkTokenCardNotAllowedError, 'card-not-allowed'],
      [422, 'rejected', NetworkTokenRejectedError, 'rejected'],
      [404, 'not-found', NetworkTokenNotFoundError, 'not-found'],
    ] as const;
    for (const [status, code, cls, expected] of cases) {
      const mapped = toGatewayError(
        new UpstreamError({ area: 'network-tokens', status, code }),
        NETWORK_TOKEN_ERRORS,
        noFacts,
      );
      expect(mapped).toBeInstanceOf(cls);
      expect(mapped).toMatchObject({ code: expected });
    }
    expect(new NetworkTokenCardNotAllowedError()).toBeInstanceOf(NetworkTokenRejectedError);
  });

  it('applies a table to failures of its own area only (a 404 of the token endpoint is no missing token)', () => {
    const mapped = toGatewayError(
      new UpstreamError({ area: 'oauth', status: 404, code: 'not-found' }),
      NETWORK_TOKEN_ERRORS,
      noFacts,
    );
    expect(mapped).toBeInstanceOf(UpstreamServiceError);
    expect(mapped).toMatchObject({ code: 'not-found', status: 404, retryable: false });
  });

  it('turns an upstream 400 naming a member of sent input into an InputValidationError on that field', () => {
    const failure = new UpstreamError({
      area: 'card-interface',
      status: 400,
      code: 'bad-request',
      pointer: '/data/attributes/exp_month',
      detail: 'exp_month: must be 1 to 12',
    });
    const mapped = toGatewayError(failure, CARD_INTERFACE_ERRORS, { sentInput: true });
    expect(mapped).toBeInstanceOf(InputValidationError);
    expect((mapped as InputValidationError).issues).toEqual([
      { message: 'exp_month: must be 1 to 12', path: ['input', 'expMonth'] },
    ]);
    expect(toGatewayError(failure, CARD_INTERFACE_ERRORS, noFacts)).toBeInstanceOf(UpstreamServiceError);
  });

  it('wraps a client: the subject the failure carries names the missing card, a malformed id is not found', async () => {
    const client = {
      marker: 'kept',
      async getCard(_vault: string, cardId: string): Promise<never> {
        throw new UpstreamError({ area: 'card-interface', status: 404, code: 'card-not-found' }).about({
          subject: cardId,
        });
      },
      async check(_vault: string, _cardId: string): Promise<never> {
        // Arguments are not read: without facts on the failure there is no subject.
        throw new UpstreamError({ area: 'card-interface', status: 404, code: 'card-not-found' });
      },
      async subscribe(_vault: string, cardId: string): Promise<never> {
        throw new InvalidArgumentError('cardId', 'expected CRD followed by letters and digits', cardId);
      },
    };
    const wrapped = withGatewayErrors(client, CARD_INTERFACE_ERRORS);
    expect(wrapped.marker).toBe('kept');
    const missing = await wrapped.getCard('tntsandbox1', 'CRDabc').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(CardNotFoundError);
    expect(missing).toMatchObject({ code: 'card-not-found', cardId: 'CRDabc' });
    const unnamed = await wrapped.check('tntsandbox1', 'CRDabc').catch((error: unknown) => error);
    expect(unnamed).toMatchObject({ code: 'card-not-found', cardId: 'requested' });
    const malformed = await wrapped.subscribe('tntsandbox1', 'nope').catch((error: unknown) => error);
    expect(malformed).toMatchObject({ code: 'card-not-found', cardId: 'nope' });
  });
});

describe('a card read answered 404 without a JSON:API body', () => {
  const upstream = useUpstream();
  /** A card endpoint answering every request 404 with a plain-text body, as a proxy might. */
  let bare: { url: string; server: Server };
  beforeAll(async () => {
    const server = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    bare = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
  });
  afterAll(() => bare.server.close());

  it.each([
    ['card interface', CardInterfaceClient, CARD_INTERFACE_ERRORS],
    ['account updater', AccountUpdaterClient, ACCOUNT_UPDATER_ERRORS],
  ] as const)('is CardNotFoundError naming the card on the %s', async (_, Client, table) => {
    const client = withGatewayErrors(
      new Client({ baseUrl: bare.url, tokens: upstream.tokens, http: upstream.http }),
      table,
    );
    const error = await client.getCard('tntsandbox1', 'CRDnowhere1').catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(CardNotFoundError);
    expect(error).toMatchObject({ code: 'card-not-found', cardId: 'CRDnowhere1' });
  });

  it('stays an upstream error on a call that is no card read', async () => {
    const client = withGatewayErrors(
      new CardInterfaceClient({ baseUrl: bare.url, tokens: upstream.tokens, http: upstream.http }),
      CARD_INTERFACE_ERRORS,
    );
    const error = await client.check('tntsandbox1', 'CRDnowhere1').catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(UpstreamServiceError);
    expect(error).toMatchObject({ status: 404 });
  });
});
