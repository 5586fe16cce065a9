import type { ArgBuilder } from '@pothos/core';
import type { GraphQLContext } from '../context.ts';
import { CardNotFoundError } from '../errors.ts';
import type { CardEvent } from '../events/card-event.ts';
import type { LoggedCardEvent } from '../events/event-log.ts';
import { AccountUpdaterCardRef } from './account-updater-card.ts';
import { type BuilderTypes, builder } from './builder.ts';
import { CardEventTypeEnum } from './card-event-type.ts';
import { eventRootFields, loggedEventFields } from './event-fields.ts';
import { costExtension } from './paging.ts';
import { vaultIdArg, vaultOf } from './vault.ts';

/**
 * Card lifecycle events (spec "Events", "Notification body fields"; contract §4), as accepted by the
 * webhook receiver and streamed over graphql-ws and SSE to subscribers of the event's tenant only.
 */

const CardExpiryType = builder.objectRef<CardEvent['newExpiry']>('CardExpiry').implement({
  description: 'An expiry date from a notification (MMYY on the wire).',
  fields: (t) => ({
    month: t.exposeInt('month', { description: 'Month, 1-12.' }),
    year: t.exposeInt('year', { description: 'Year, four digits.' }),
  }),
});

const CardEventRef = builder.objectRef<LoggedCardEvent>('CardEvent').implement({
  description: 'One accepted card lifecycle notification. Account numbers are masked to BIN and last four.',
  fields: (t) => ({
    ...loggedEventFields(t, {
      log: 'event log',
      outOfOrder:
        'True when a newer event of the same card (by `timestamp`) had already been accepted: delivery order is not guaranteed, so do not let this one overwrite newer card data.',
      timestamp: 'When the network updated the card information (ISO 8601).',
      occurredAt: 'When the event occurred (ISO 8601).',
      createdAt: 'When the account update was created or processed.',
    }),
    type: t.field({ type: CardEventTypeEnum, description: 'Event kind.', resolve: (e) => e.type }),
    cardId: t.exposeString('cardId', { description: 'Card id (`details.card_id`).' }),
    oldAccountNumber: t.expose('oldAccountNumber', {
      type: 'MaskedPan',
      description: 'Masked old account number (BIN and last four).',
    }),
    newAccountNumber: t.expose('newAccountNumber', {
      type: 'MaskedPan',
      description: 'Masked new account number (BIN and last four).',
    }),
    oldExpiry: t.field({
      type: CardExpiryType,
      description: 'Old expiration date.',
      resolve: (e) => e.oldExpiry,
    }),
    newExpiry: t.field({
      type: CardExpiryType,
      description: 'New expiration date.',
      resolve: (e) => e.newExpiry,
    }),
    card: t.field({
      type: AccountUpdaterCardRef,
      description:
        'The card, read once per event for all subscribers (v1 GET /cards/{card_id}); `CardNotFoundError` for sandbox mock cards, which are never saved.',
      authScopes: { scope: 'cards:read' },
      extensions: costExtension({ upstreamCalls: 1 }),
      errors: { types: [CardNotFoundError] },
      // A live event's card is read once for every subscriber (app-wide memo); a history page reads
      // through the request's loaders, so each card is read once per page and charged to the
      // operation's upstream budget.
      resolve: (event, _args, context, info) =>
        info.operation.operation === 'subscription'
          ? context.eventCards.cardOf(event)
          : context.loaders.accountUpdaterCard.load({ vaultId: event.tenant, cardId: event.cardId }),
    }),
  }),
});

eventRootFields({
  name: 'cardEvents',
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
