import DataLoader from 'dataloader';
import { CardAttributesNotFoundError, NetworkTokenNotFoundError } from '../errors.ts';
import type { CardEvent } from '../events/card-event.ts';
import type { NetworkTokenEvent } from '../events/network-token-event.ts';
import type { AccountUpdaterCard } from '../upstream/account-updater/client.ts';
import type { CardInterfaceCard } from '../upstream/card-interface/client.ts';
import type {
  CardAttributes,
  NetworkToken,
  OrganizationInvite,
  OrganizationMember,
  Page,
  Upstream,
} from '../upstream/index.ts';
import type { BinAttributesCache } from './bin-attributes-cache.ts';
import type { CardReadCache } from './card-read-cache.ts';

/** A value read from upstream with the vault (tenant) whose credentials read it. */
export type InVault<T> = T & { vaultId: string };

/** Key of a card in a vault; two fields ask for the same card only when both match. */
export interface VaultCardKey {
  vaultId: string;
  cardId: string;
}

const vaultCardKey = (key: VaultCardKey) => `${key.vaultId}\u0000${key.cardId}`;

/**
 * Runs one upstream read per distinct key (the specification has no batch read endpoint); a failure
 * (already a typed gateway error, src/upstream/gateway-errors.ts) rejects only that key.
 */
function perKey<V>(read: (key: VaultCardKey) => Promise<V>) {
  return (keys: readonly VaultCardKey[]) =>
    Promise.all(
      keys.map((key) =>
        read(key).then((value) => ({ ...value, vaultId: key.vaultId }) as InVault<V>, asKeyError),
      ),
    );
}

/** A failure as DataLoader's per-key rejection (an Error instance in the result array). */
const asKeyError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

/** Key of a network token: the PAN alias it was provisioned for, in a vault. */
export interface VaultAliasKey {
  vaultId: string;
  panAlias: string;
}

/** Key of one upstream page of an organization's members or invites. */
export interface OrganizationPageKey {
  vaultId: string;
  organizationId: string;
  pageNumber: number;
  pageSize: number;
}

/** A vault as a member's membership names it (spec "Organization member": vaults[]). */
export interface VaultSummary {
  id: string;
  name: string;
  envIdentifier: string;
}

/**
 * Per-request DataLoaders. Each key is read once per request however many fields ask for it.
 * - `cardInterfaceCard`: card interface `GET /cards/{card_id}` (gap decisions: added retrieval),
 *   through the app-wide {@link CardReadCache} (held until a card event or mutation of the card).
 * - `accountUpdaterCard`: account updater v1 `GET /cards/{card_id}`, through the same cache.
 * - `networkToken`: `GET /network-tokens/{pan_alias}`; null when the alias has no token.
 * - `binAttributes`: card attributes of a 6-digit BIN (null when the data set knows none), through the
 *   app-wide {@link BinAttributesCache} (attributes, and their absence, are static per data set
 *   version, so they are shared across requests; never per PAN).
 * - `organizationMembers`, `organizationInvites`: one upstream page each (JSON:API `page[number]`,
 *   `page[size]`).
 * - `vault`: vault summaries, primed from the memberships already read (no upstream call).
 */
export function createLoaders(upstream: Upstream, binCache: BinAttributesCache, cardReads: CardReadCache) {
  const pageKey = (key: OrganizationPageKey) =>
    `${key.vaultId}\u0000${key.organizationId}\u0000${key.pageNumber}\u0000${key.pageSize}`;
  return {
    networkToken: new DataLoader<VaultAliasKey, InVault<NetworkToken> | null, string>(
      (keys) =>
        Promise.all(
          keys.map((key) =>
            upstream.networkTokens.get(key.vaultId, key.panAlias).then(
              (token) => ({ ...token, vaultId: key.vaultId }),
              (error: unknown) => (error instanceof NetworkTokenNotFoundError ? null : asKeyError(error)),
            ),
          ),
        ),
      { cacheKeyFn: (key) => `${key.vaultId}\u0000${key.panAlias}` },
    ),
    binAttributes: new DataLoader<{ vaultId: string; bin: string }, CardAttributes | null, string>(
      (keys) =>
        Promise.all(
          keys.map((key) =>
            binCache
              .get(key.bin, () =>
                // No attributes for the BIN (404) is an answer, cached like the others.
                upstream.cardAttributes.lookup(key.vaultId, key.bin).catch((error: unknown) => {
                  if (error instanceof CardAttributesNotFoundError) return null;
                  throw error;
                }),
              )
              .catch(asKeyError),
          ),
        ),
      { cacheKeyFn: (key) => key.bin },
    ),
    organizationMembers: new DataLoader<OrganizationPageKey, Page<OrganizationMember>, string>(
      (keys) =>
        Promise.all(
          keys.map((key) =>
            upstream.accounts
              .listMembers(key.vaultId, key.organizationId, { number: key.pageNumber, size: key.pageSize })
              .catch(asKeyError),
          ),
        ),
      { cacheKeyFn: pageKey },
    ),
    organizationInvites: new DataLoader<OrganizationPageKey, Page<OrganizationInvite>, string>(
      (keys) =>
        Promise.all(
          keys.map((key) =>
            upstream.accounts
              .listInvites(key.vaultId, key.organizationId, { number: key.pageNumber, size: key.pageSize })
              .catch(asKeyError),
          ),
        ),
      { cacheKeyFn: pageKey },
    ),
    vault: new DataLoader<string, VaultSummary>(async (ids) =>
      ids.map((id) => new Error(`vault ${id} was not primed from a membership`)),
    ),
    cardInterfaceCard: new DataLoader<VaultCardKey, InVault<CardInterfaceCard>, string>(
      perKey((key) =>
        cardReads.get('card-interface', key.vaultId, key.cardId, () =>
          upstream.cardInterface.getCard(key.vaultId, key.cardId),
        ),
      ),
      { cacheKeyFn: vaultCardKey },
    ),
    accountUpdaterCard: new DataLoader<VaultCardKey, InVault<AccountUpdaterCard>, string>(
      perKey((key) =>
        cardReads.get('account-updater', key.vaultId, key.cardId, () =>
          upstream.accountUpdater.getCard(key.vaultId, key.cardId),
        ),
      ),
      { cacheKeyFn: vaultCardKey },
    ),
  };
}

/** The per-request loaders, see {@link createLoaders}. */
export type Loaders = ReturnType<typeof createLoaders>;

/**
 * App-wide memo of the card behind each published event: the first subscriber resolving
 * `CardEvent.card` triggers one upstream read with the vault's credentials; every other subscriber
 * of that event awaits the same promise. Keyed by the event object (the bus hands the same instance
 * to all subscribers), so entries go away with the event.
 */
export class EventCardCache {
  readonly #cards = new WeakMap<CardEvent, Promise<InVault<AccountUpdaterCard>>>();
  readonly #upstream: Upstream;

  constructor(upstream: Upstream) {
    this.#upstream = upstream;
  }

  /**
   * The v1 card named by `details.card_id` of the notification, read in the event's tenant.
   * @throws the typed gateway error of the read (e.g. CardNotFoundError for mock cards).
   */
  cardOf(event: CardEvent): Promise<InVault<AccountUpdaterCard>> {
    let card = this.#cards.get(event);
    if (!card) {
      card = this.#upstream.accountUpdater
        .getCard(event.tenant, event.cardId)
        .then((value) => ({ ...value, vaultId: event.tenant }));
      this.#cards.set(event, card);
    }
    return card;
  }
}

/**
 * App-wide memo of the network token behind each published network token event: the first
 * subscriber resolving `NetworkTokenEvent.token` triggers one `GET /network-tokens/{pan_alias}` with
 * the credentials of the event's tenant; every other subscriber of that event awaits the same
 * promise. Keyed by the event object (the event stream hands the same instance to all subscribers), so
 * entries go away with the event.
 */
export class EventNetworkTokenCache {
  readonly #tokens = new WeakMap<NetworkTokenEvent, Promise<InVault<NetworkToken>>>();
  readonly #upstream: Upstream;

  constructor(upstream: Upstream) {
    this.#upstream = upstream;
  }

  /**
   * The network token named by `details.pan_alias` of the notification, read in the event's tenant.
   * @throws the typed gateway error of the read: NetworkTokenNotFoundError when the vault holds no
   *   token for the alias, UpstreamServiceError, or InvalidArgumentError.
   */
  tokenOf(event: NetworkTokenEvent): Promise<InVault<NetworkToken>> {
    let token = this.#tokens.get(event);
    if (!token) {
      token = this.#upstream.networkTokens
        .get(event.tenant, event.panAlias)
        .then((value) => ({ ...value, vaultId: event.tenant }));
      this.#tokens.set(event, token);
    }
    return token;
  }
}
