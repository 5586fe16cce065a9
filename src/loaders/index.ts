import DataLoader from 'dataloader';
import { toGatewayError } from '../errors.ts';
import type { CardEvent } from '../events/card-event.ts';
import type { AccountUpdaterCard } from '../upstream/account-updater/client.ts';
import type { CardInterfaceCard } from '../upstream/card-interface/client.ts';
import type { Upstream } from '../upstream/index.ts';

/** A value read from upstream with the vault (tenant) whose credentials read it. */
export type InVault<T> = T & { vaultId: string };

/** Key of a card in a vault; two fields ask for the same card only when both match. */
export interface VaultCardKey {
  vaultId: string;
  cardId: string;
}

const vaultCardKey = (key: VaultCardKey) => `${key.vaultId}\u0000${key.cardId}`;

/**
 * Runs one upstream read per distinct key (the specification has no batch read endpoint) and maps
 * each failure to its typed gateway error, so DataLoader rejects only that key.
 */
function perKey<V>(read: (key: VaultCardKey) => Promise<V>) {
  return (keys: readonly VaultCardKey[]) =>
    Promise.all(
      keys.map((key) =>
        read(key).then(
          (value) => ({ ...value, vaultId: key.vaultId }) as InVault<V>,
          (error: unknown) => toGatewayError(error, { cardId: key.cardId }),
        ),
      ),
    );
}

/**
 * Per-request DataLoaders. Each key is read once per request however many fields ask for it.
 * - `cardInterfaceCard`: card interface `GET /cards/{card_id}` (gap decisions: added retrieval).
 * - `accountUpdaterCard`: account updater v1 `GET /cards/{card_id}`.
 */
export function createLoaders(upstream: Upstream) {
  return {
    cardInterfaceCard: new DataLoader<VaultCardKey, InVault<CardInterfaceCard>, string>(
      perKey((key) => upstream.cardInterface.getCard(key.vaultId, key.cardId)),
      { cacheKeyFn: vaultCardKey },
    ),
    accountUpdaterCard: new DataLoader<VaultCardKey, InVault<AccountUpdaterCard>, string>(
      perKey((key) => upstream.accountUpdater.getCard(key.vaultId, key.cardId)),
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
      card = this.#upstream.accountUpdater.getCard(event.tenant, event.cardId).then(
        (value) => ({ ...value, vaultId: event.tenant }),
        (error: unknown) => {
          throw toGatewayError(error, { cardId: event.cardId });
        },
      );
      this.#cards.set(event, card);
    }
    return card;
  }
}
