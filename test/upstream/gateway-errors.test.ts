import { InputValidationError } from '@pothos/plugin-validation';
import { describe, expect, it } from 'vitest';
import {
  CardNotFoundError,
  NetworkTokenCardNotAllowedError,
  NetworkTokenDeclinedError,
  NetworkTokenNotFoundError,
  NetworkTokenRejectedError,
  UpstreamServiceError,
} from '../../src/errors.ts';
import { CARD_INTERFACE_ERRORS } from '../../src/upstream/card-interface/error-table.ts';
import { InvalidArgumentError, UpstreamError } from '../../src/upstream/errors.ts';
import { toGatewayError, withGatewayErrors } from '../../src/upstream/gateway-errors.ts';
import { NETWORK_TOKEN_ERRORS } from '../../src/upstream/network-tokens/error-table.ts';

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

  it('wraps a client: the subject of the call names the missing card, a malformed id is not found', async () => {
    const client = {
      marker: 'kept',
      async getCard(_vault: string, _cardId: string): Promise<never> {
        throw new UpstreamError({ area: 'card-interface', status: 404, code: 'card-not-found' });
      },
      async check(_vault: string, _cardId: string): Promise<never> {
        throw new InvalidArgumentError('cardId', 'expected CRD followed by letters and digits');
      },
    };
    const wrapped = withGatewayErrors(client, CARD_INTERFACE_ERRORS);
    expect(wrapped.marker).toBe('kept');
    const missing = await wrapped.getCard('tntsandbox1', 'CRDabc').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(CardNotFoundError);
    expect(missing).toMatchObject({ code: 'card-not-found', cardId: 'CRDabc' });
    const malformed = await wrapped.check('tntsandbox1', 'nope').catch((error: unknown) => error);
    expect(malformed).toMatchObject({ code: 'card-not-found', cardId: 'nope' });
  });
});
