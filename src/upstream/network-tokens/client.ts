import { areaClient } from '../authorized-request.ts';
import {
  assertPanAlias,
  type NetworkToken,
  networkTokenEnvelopeSchema,
  type ProvisionNetworkTokenInput,
  provisionBody,
} from './schemas.ts';

export type {
  NetworkToken,
  NetworkTokenCard,
  NetworkTokenHolderInfo,
  NetworkTokenState,
  ProvisionNetworkTokenInput,
} from './schemas.ts';

/**
 * Client of the network tokens endpoints (spec "Network token", area `{account_updater_url}`,
 * `application/json`): provisioning, retrieval and deletion of the network token of a vaulted card,
 * named by the alias of its PAN. It reads the documented answers (200, the token without a `data`
 * envelope, provisioning possibly already in its final `state`) and the specification's (202 without
 * `state`, `{"data": …}`) alike (sandbox contract §8). Without a `state` the final one arrives by
 * notification or by {@link get}. Only an `ACTIVE` token is usable in a transaction.
 *
 * Errors: {@link InvalidArgumentError} (argument `panAlias`) for a value that is not a PAN alias
 * (nothing is sent); {@link UpstreamError} with area `network-tokens` (or `oauth`) otherwise:
 * provisioning 400 `bad-request` (with `pointer`), 404 `declined` (or `not-found` for an alias the
 * vault does not know), 422 `card-not-allowed`, `card-brand-not-supported`, `required-fields-missing`,
 * `invalid-format`, `rejected`; retrieval and deletion 404 `not-found`; 500 `server-error`.
 */
export class NetworkTokensClient extends areaClient('network-tokens', 'application/json') {
  /**
   * `POST /network-tokens` (spec): requests a network token for the card behind `panAlias`. The
   * documented answer is 200 with the token, its `state` included when already final; the
   * specification's is 202 without the final `state` (nor the token's last four and expiry), and 200
   * for a card that already has a token not `DELETED` (docs/gap-decisions.md "Network tokens"). Never
   * retried automatically except once after a 401.
   */
  async provision(vault: string, input: ProvisionNetworkTokenInput): Promise<NetworkToken> {
    assertPanAlias(input.panAlias);
    return this.send(vault, {
      method: 'POST',
      path: ['network-tokens'],
      body: JSON.stringify(provisionBody(input)),
      sentInput: true,
      expectStatus: [200, 201, 202],
      schema: networkTokenEnvelopeSchema,
    });
  }

  /** `GET /network-tokens/{pan_alias}` (spec): the token with its card and `holderInfo`; 404 `not-found`. */
  async get(vault: string, panAlias: string): Promise<NetworkToken> {
    return this.#byAlias('GET', vault, panAlias);
  }

  /**
   * `DELETE /network-tokens/{pan_alias}` (spec): the token with state `DELETED` and the card's `last4`,
   * `bin` and `expiresAt` only; 404 `not-found` for an unknown alias.
   */
  async delete(vault: string, panAlias: string): Promise<NetworkToken> {
    return this.#byAlias('DELETE', vault, panAlias);
  }

  /** `<method> /network-tokens/{pan_alias}`, answered 200 with the token envelope. */
  #byAlias(method: 'GET' | 'DELETE', vault: string, panAlias: string): Promise<NetworkToken> {
    assertPanAlias(panAlias);
    return this.send(vault, {
      method,
      path: ['network-tokens', panAlias],
      subject: panAlias,
      expectStatus: [200],
      schema: networkTokenEnvelopeSchema,
    });
  }
}
