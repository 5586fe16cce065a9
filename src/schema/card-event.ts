import type { ArgBuilder } from '@pothos/core';
import DataLoader from 'dataloader';
import type { GraphQLContext } from '../context.ts';
import { CardNotFoundError } from '../errors.ts';
import type { CardExpiry } from '../events/card-event.ts';
import type { LoggedCardEvent } from '../events/event-log.ts';
import { readNotificationId } from '../events/notification-envelope.ts';
import type { Loaders } from '../loaders/index.ts';
import { AccountUpdaterCardRef } from './account-updater-card.ts';
import { type BuilderTypes, builder } from './builder.ts';
import { CardRef } from './card.ts';
import { CardEventTypeEnum } from './card-event-type.ts';
import { federatedEntity } from './entity.ts';
import { eventRootFields, loggedEventFields, NotificationSourceEnum } from './event-fields.ts';
import { brandedNode, registerNotificationNode } from './notification-node.ts';
import { costExtension } from './paging.ts';
import { vaultIdArg, vaultOf } from './vault.ts';

/**
 * Card lifecycle events (spec "Events", "Notification body fields"; contract §4 and §8), as accepted
 * by the webhook receiver and streamed over graphql-ws and SSE to subscribers of the event's tenant
 * only. The documented notifications carry per-event subsets of the details members (issue 19 item
 * 3), so every details field is nullable.
 */

const CardExpiryType = builder.objectRef<CardExpiry>('CardExpiry').implement({
  description: 'An expiry date from a notification (MMYY on the wire).',
  fields: (t) => ({
    month: t.exposeInt('month', { description: 'Month, 1-12.' }),
    year: t.exposeInt('year', { description: 'Year, four digits.' }),
  }),
});

const CardEventRef = builder.objectRef<LoggedCardEvent>('CardEvent').implement({
  // Refetchable with `node(id:)` by its notification id (src/schema/notification-node.ts).
  interfaces: [builder.nodeInterfaceRef()],
  description:
    'One accepted card lifecycle notification (account updater `au_card.*`, card interface `cmp_au_card.*`, or a kind not known yet). Account numbers are masked to BIN and last four. Details members the notification did not carry are null.',
  fields: (t) => ({
    ...loggedEventFields(t, {
      log: 'event log',
      outOfOrder:
        'True when a newer event of the same card (by `timestamp`) had already been accepted: delivery order is not guaranteed, so do not let this one overwrite newer card data.',
      timestamp: 'When the network updated the card information (ISO 8601).',
      occurredAt: 'When the event occurred (ISO 8601).',
      createdAt: 'When the account update was created or processed; null when not sent.',
    }),
    type: t.field({
      type: CardEventTypeEnum,
      description:
        'Event kind; `cmp_au_card.<kind>` has the same kind as `au_card.<kind>` (see `source`), `OTHER` a kind not known yet (see `event`).',
      resolve: (e) => e.type,
    }),
    event: t.string({
      nullable: true,
      description:
        'The notification `event` as sent (e.g. `cmp_au_card.enrolled`, or a kind not known yet), at most 128 characters; null when it sent none.',
      resolve: (e) => e.event,
    }),
    source: t.field({
      type: NotificationSourceEnum,
      description: 'Which area sent the notification (`au_card.*` or `cmp_au_card.*`).',
      resolve: (e) => e.source,
    }),
    cardId: t.string({
      nullable: true,
      description:
        'Card id (`details.card_id`: `CRD` and 1-64 letters or digits); null when not sent or when it holds a card number (never kept, masked or not).',
      resolve: (e) => e.cardId,
    }),
    failureReason: t.string({
      nullable: true,
      description:
        'Reason code of a failed enrolment (`ENROLLMENT_FAILED`): `card-brand-not-supported`, `declined`, `internal-server-error`, `validation-failed`, or another code as sent; null when it holds a card number.',
      resolve: (e) => e.failureReason,
    }),
    oldAccountNumber: t.expose('oldAccountNumber', {
      type: 'MaskedPan',
      nullable: true,
      description: 'Masked old account number (BIN and last four); null when not sent.',
    }),
    newAccountNumber: t.expose('newAccountNumber', {
      type: 'MaskedPan',
      nullable: true,
      description: 'Masked new account number (BIN and last four); null when not sent.',
    }),
    oldExpiry: t.field({
      type: CardExpiryType,
      nullable: true,
      description: 'Old expiration date; null when not sent.',
      resolve: (e) => e.oldExpiry,
    }),
    newExpiry: t.field({
      type: CardExpiryType,
      nullable: true,
      description: 'New expiration date; null when not sent.',
      resolve: (e) => e.newExpiry,
    }),
    card: t.field({
      type: AccountUpdaterCardRef,
      nullable: true,
      description:
        'The account updater card, read once per event for all subscribers (v1 GET /cards/{card_id}); `CardNotFoundError` for sandbox mock cards, which are never saved; null when the notification names no card or comes from the card interface (`source` `CARD_MANAGEMENT`: see `cardInterfaceCard`).',
      authScopes: { scope: 'cards:read' },
      extensions: costExtension({ upstreamCalls: 1 }),
      errors: { types: [CardNotFoundError] },
      // A live event's card is read once for every subscriber (app-wide memo); a history page reads
      // through the request's loaders, so each card is read once per page and charged to the
      // operation's upstream budget.
      resolve: (event, _args, context, info) => {
        const { cardId } = event;
        // A card management card id names a card interface card, which v1 does not hold.
        if (cardId === undefined || event.source === 'card_management') return null;
        return info.operation.operation === 'subscription'
          ? context.eventCards.cardOf(event)
          : context.loaders.accountUpdaterCard.load({ vaultId: event.tenant, cardId });
      },
    }),
    cardInterfaceCard: t.field({
      type: CardRef,
      nullable: true,
      description:
        'The card interface card of a card management event (`source` `CARD_MANAGEMENT`, `cmp_au_card.*`), read once per event for all subscribers (card interface GET /cards/{card_id}); null for other sources or when the notification names no card.',
      authScopes: { scope: 'cards:read' },
      extensions: costExtension({ upstreamCalls: 1 }),
      errors: { types: [CardNotFoundError] },
      // Same reads as `card`: once per live event for every subscriber; a history page through the
      // request's loaders (one read per distinct card, through the card read cache).
      resolve: (event, _args, context, info) => {
        const { cardId } = event;
        if (cardId === undefined || event.source !== 'card_management') return null;
        return info.operation.operation === 'subscription'
          ? context.eventCards.interfaceCardOf(event)
          : context.loaders.cardInterfaceCard.load({ vaultId: event.tenant, cardId });
      },
    }),
  }),
});

// Federation (FEDERATION=on): `CardEvent @key(fields: "id")`, the notification id, read from the
// durable event log of the caller's vault (retained events only), as `cardEvents` history reads it.
federatedEntity(CardEventRef, 'id', {
  scope: 'cards:read',
  isKey: (id) => readNotificationId(id) === id,
  read: (context, vaultId, id) => cardEventsById(context).load({ vaultId, id }),
});

registerNotificationNode(async (context, id) => {
  if (!context.viewer?.scopes.has('cards:read')) return null;
  const found = await Promise.all(
    context.viewer.vaults.map((vaultId) => cardEventsById(context).load({ vaultId, id })),
  );
  const event = found.find((candidate) => candidate !== null);
  return event ? brandedNode({ ...event }, CardEventRef) : null;
});

/** The per-request loader of card events by (vault, notification id), keyed by the request's loaders. */
const eventLoaders = new WeakMap<Loaders, DataLoader<VaultEventKey, LoggedCardEvent | null, string>>();

/** A card event's notification id in a vault (ids are unique per tenant, src/events/event-log.ts). */
interface VaultEventKey {
  vaultId: string;
  id: string;
}

/**
 * Card events by notification id for this request: the ids of one vault asked in one tick are one
 * log read (`byIds`); an id the vault's log does not hold (another vault's, unknown, or past
 * retention) is null.
 */
function cardEventsById(context: GraphQLContext): DataLoader<VaultEventKey, LoggedCardEvent | null, string> {
  let loader = eventLoaders.get(context.loaders);
  if (!loader) {
    loader = new DataLoader(
      async (keys) => {
        const byVault = Map.groupBy(keys, (key) => key.vaultId);
        const found = new Map<string, LoggedCardEvent>();
        await Promise.all(
          [...byVault].map(async ([vaultId, vaultKeys]) => {
            const events = await context.events.byIds(
              vaultId,
              vaultKeys.map((key) => key.id),
            );
            for (const event of events) found.set(`${event.tenant}\u0000${event.id}`, event);
          }),
        );
        return keys.map((key) => found.get(`${key.vaultId}\u0000${key.id}`) ?? null);
      },
      { cacheKeyFn: (key) => `${key.vaultId}\u0000${key.id}` },
    );
    eventLoaders.set(context.loaders, loader);
  }
  return loader;
}

eventRootFields({
  name: 'cardEvents',
  historyName: 'cardEventHistory',
  typeName: 'CardEvent',
  type: CardEventRef,
  what: 'card event',
  scope: 'cards:read',
  descriptions: {
    live: "Live card lifecycle events of the caller's vaults (or of `vaultId`), optionally of one card and of some kinds only. With `after` (a `CardEvent.cursor`), every retained event after it is replayed first, then live events follow with no gap and no duplicate.",
    history:
      "History of accepted card events of the caller's vaults (or of `vaultId`), oldest first by event `timestamp` (then acceptance order), within the retention period. Forward pagination only (`first`, `after`).",
  },
  filterArgs: eventFilterArgs,
  filter: eventFilter,
  stream: (context) => context.events,
});

/** Arguments that select events: vault, card and kinds (subscription and history alike). */
function eventFilterArgs(t: { arg: ArgBuilder<BuilderTypes> }) {
  return {
    cardId: t.arg.string({ required: false, description: 'Only events of this card.' }),
    types: t.arg({ type: [CardEventTypeEnum], required: false, description: 'Only events of these kinds.' }),
    vaultId: t.arg.string(vaultIdArg),
  };
}

/** The event filter of the caller: its vaults (or `vaultId`), card and kinds. */
function eventFilter(
  context: GraphQLContext,
  args: { vaultId?: string | null; cardId?: string | null; types?: readonly string[] | null },
) {
  const tenants = args.vaultId ? [vaultOf(context, args.vaultId)] : [...(context.viewer?.vaults ?? [])];
  return {
    tenants,
    ...(args.cardId ? { cardId: args.cardId } : {}),
    ...(args.types?.length ? { types: args.types } : {}),
  };
}
