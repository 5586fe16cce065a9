import DataLoader from 'dataloader';
import { BinNotDiscernedError, CardAttributesNotFoundError, NetworkTokenNotFoundError } from '../errors.ts';
import type { CardEvent } from '../events/card-event.ts';
import type { NetworkTokenEvent } from '../events/network-token-event.ts';
import type { AccountUpdaterCard } from '../upstream/account-updater/client.ts';
import type { OrganizationInvite, OrganizationMember } from '../upstream/accounts/schemas.ts';
import type { CardInterfaceCard } from '../upstream/card-interface/client.ts';
import type { CardAttributes, NetworkToken, Page, Upstream } from '../upstream/index.ts';
import type { BinAttributesCache } from './bin-attributes-cache.ts';
import type { CardReadArea, CardReadCache } from './card-read-cache.ts';

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

/** One upstream page of an organization list per key (`listMembers`, `listInvites` of the accounts client). */
function organizationPages<T>(
  list: (vault: string, organizationId: string, page: { number: number; size: number }) => Promise<Page<T>>,
) {
  return new DataLoader<OrganizationPageKey, Page<T>, string>(
    (keys) =>
      Promise.all(
        keys.map((key) =>
          list(key.vaultId, key.organizationId, { number: key.pageNumber, size: key.pageSize }).catch(
            asKeyError,
          ),
        ),
      ),
    {
      cacheKeyFn: (key) =>
        `${key.vaultId}\u0000${key.organizationId}\u0000${key.pageNumber}\u0000${key.pageSize}`,
    },
  );
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
 *
 * Each DataLoader is made on its first use: most operations read one or two kinds, a subscription
 * that never reads a card holds none (fan-out memory), and the object itself is cheap to create and
 * to copy into the context (getters on the prototype are not copied by the `Object.assign` of
 * envelop's `extendContext`).
 */
export class RequestLoaders {
  readonly #upstream: Upstream;
  readonly #binCache: BinAttributesCache;
  readonly #cardReads: CardReadCache;
  #networkToken?: DataLoader<VaultAliasKey, InVault<NetworkToken> | null, string>;
  #binAttributes?: DataLoader<{ vaultId: string; bin: string }, CardAttributes | null, string>;
  #organizationMembers?: DataLoader<OrganizationPageKey, Page<OrganizationMember>, string>;
  #organizationInvites?: DataLoader<OrganizationPageKey, Page<OrganizationInvite>, string>;
  #vault?: DataLoader<string, VaultSummary>;
  #cardInterfaceCard?: DataLoader<VaultCardKey, InVault<CardInterfaceCard>, string>;
  #accountUpdaterCard?: DataLoader<VaultCardKey, InVault<AccountUpdaterCard>, string>;

  constructor(upstream: Upstream, binCache: BinAttributesCache, cardReads: CardReadCache) {
    this.#upstream = upstream;
    this.#binCache = binCache;
    this.#cardReads = cardReads;
  }

  get networkToken(): DataLoader<VaultAliasKey, InVault<NetworkToken> | null, string> {
    const upstream = this.#upstream;
    this.#networkToken ??= new DataLoader(
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
    );
    return this.#networkToken;
  }

  get binAttributes(): DataLoader<{ vaultId: string; bin: string }, CardAttributes | null, string> {
    const upstream = this.#upstream;
    const binCache = this.#binCache;
    this.#binAttributes ??= new DataLoader(
      (keys) =>
        Promise.all(
          keys.map((key) =>
            binCache
              .get(key.bin, () =>
                // No attributes for the BIN is an answer, cached like the others: the specification's
                // 404, or the documented 422 ("could not discern a bin"), which for a raw 6-digit BIN
                // says the same (sandbox contract §8).
                upstream.cardAttributes.lookup(key.vaultId, key.bin).catch((error: unknown) => {
                  if (error instanceof CardAttributesNotFoundError || error instanceof BinNotDiscernedError)
                    return null;
                  throw error;
                }),
              )
              .catch(asKeyError),
          ),
        ),
      { cacheKeyFn: (key) => key.bin },
    );
    return this.#binAttributes;
  }

  get organizationMembers(): DataLoader<OrganizationPageKey, Page<OrganizationMember>, string> {
    const upstream = this.#upstream;
    this.#organizationMembers ??= organizationPages((vault, organization, page) =>
      upstream.accounts.listMembers(vault, organization, page),
    );
    return this.#organizationMembers;
  }

  get organizationInvites(): DataLoader<OrganizationPageKey, Page<OrganizationInvite>, string> {
    const upstream = this.#upstream;
    this.#organizationInvites ??= organizationPages((vault, organization, page) =>
      upstream.accounts.listInvites(vault, organization, page),
    );
    return this.#organizationInvites;
  }

  get vault(): DataLoader<string, VaultSummary> {
    this.#vault ??= new DataLoader<string, VaultSummary>(async (ids) =>
      ids.map((id) => new Error(`vault ${id} was not primed from a membership`)),
    );
    return this.#vault;
  }

  get cardInterfaceCard(): DataLoader<VaultCardKey, InVault<CardInterfaceCard>, string> {
    // The client is taken at read time: a read served from the card read cache builds none.
    const upstream = this.#upstream;
    this.#cardInterfaceCard ??= this.#cardReader('card-interface', (key) =>
      upstream.cardInterface.getCard(key.vaultId, key.cardId),
    );
    return this.#cardInterfaceCard;
  }

  get accountUpdaterCard(): DataLoader<VaultCardKey, InVault<AccountUpdaterCard>, string> {
    const upstream = this.#upstream;
    this.#accountUpdaterCard ??= this.#cardReader('account-updater', (key) =>
      upstream.accountUpdater.getCard(key.vaultId, key.cardId),
    );
    return this.#accountUpdaterCard;
  }

  /** One card read per key of `area`, through the app-wide {@link CardReadCache}. */
  #cardReader<V>(area: CardReadArea, read: (key: VaultCardKey) => Promise<V>) {
    const cardReads = this.#cardReads;
    return new DataLoader<VaultCardKey, InVault<V>, string>(
      perKey((key) => cardReads.get(area, key.vaultId, key.cardId, () => read(key))),
      { cacheKeyFn: vaultCardKey },
    );
  }
}

/** The per-request loaders, see {@link RequestLoaders}. */
export type Loaders = RequestLoaders;

/**
 * App-wide memo of one upstream read per published event: the first subscriber resolving the event's
 * join triggers the read with the credentials of the event's tenant; every other subscriber of that
 * event awaits the same promise. Keyed by the event object (the bus and the event stream hand the same
 * instance to all subscribers), so entries go away with the event.
 */
class PerEventRead<E extends { tenant: string }, V> {
  readonly #reads = new WeakMap<E, Promise<InVault<V>>>();
  readonly #read: (event: E) => Promise<V>;

  constructor(read: (event: E) => Promise<V>) {
    this.#read = read;
  }

  /** The value read for `event` in its tenant, read on the first call only. */
  protected readOnce(event: E): Promise<InVault<V>> {
    let value = this.#reads.get(event);
    if (!value) {
      value = this.#read(event).then((read) => ({ ...read, vaultId: event.tenant }));
      this.#reads.set(event, value);
    }
    return value;
  }
}

/** App-wide memo of the card behind each published card event (`CardEvent.card`, see {@link PerEventRead}). */
export class EventCardCache extends PerEventRead<CardEvent, AccountUpdaterCard> {
  constructor(upstream: Upstream) {
    // `CardEvent.card` asks only for events that name a card (null otherwise).
    super((event) => upstream.accountUpdater.getCard(event.tenant, event.cardId ?? ''));
  }

  /**
   * The v1 card named by `details.card_id` of the notification, read in the event's tenant.
   * @throws the typed gateway error of the read (e.g. CardNotFoundError for mock cards).
   */
  cardOf(event: CardEvent): Promise<InVault<AccountUpdaterCard>> {
    return this.readOnce(event);
  }
}

/**
 * App-wide memo of the network token behind each published network token event
 * (`NetworkTokenEvent.token`: one `GET /network-tokens/{pan_alias}`, see {@link PerEventRead}).
 */
export class EventNetworkTokenCache extends PerEventRead<NetworkTokenEvent, NetworkToken> {
  constructor(upstream: Upstream) {
    // `NetworkTokenEvent.token` asks only for events that name an alias (null otherwise).
    super((event) => upstream.networkTokens.get(event.tenant, event.panAlias ?? ''));
  }

  /**
   * The network token named by `details.pan_alias` of the notification, read in the event's tenant.
   * @throws the typed gateway error of the read: NetworkTokenNotFoundError when the vault holds no
   *   token for the alias, UpstreamServiceError, or InvalidArgumentError.
   */
  tokenOf(event: NetworkTokenEvent): Promise<InVault<NetworkToken>> {
    return this.readOnce(event);
  }
}
