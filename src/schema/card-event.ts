import { CardNotFoundError } from '../errors.ts';
import type { CardEvent } from '../events/card-event.ts';
import { AccountUpdaterCardRef } from './account-updater-card.ts';
import { builder } from './builder.ts';
import { CardEventTypeEnum } from './card-event-type.ts';
import { UPSTREAM_ERRORS } from './errors.ts';
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

const CardEventRef = builder.objectRef<CardEvent>('CardEvent').implement({
  description: 'One accepted card lifecycle notification. Account numbers are masked to BIN and last four.',
  fields: (t) => ({
    id: t.exposeID('id', { description: 'Notification id (UUID); the same on every redelivery.' }),
    type: t.field({ type: CardEventTypeEnum, description: 'Event kind.', resolve: (e) => e.type }),
    tenant: t.exposeString('tenant', { description: 'Vault (tenant) the event belongs to.' }),
    cardId: t.exposeString('cardId', { description: 'Card id (`details.card_id`).' }),
    occurredAt: t.exposeString('occurredAt', {
      nullable: true,
      description: 'When the event occurred (ISO 8601).',
    }),
    timestamp: t.exposeString('timestamp', {
      description: 'When the network updated the card information (ISO 8601).',
    }),
    createdAt: t.exposeString('createdAt', {
      description: 'When the account update was created or processed.',
    }),
    oldAccountNumber: t.exposeString('oldAccountNumber', {
      description: 'Masked old account number (BIN and last four).',
    }),
    newAccountNumber: t.exposeString('newAccountNumber', {
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
      errors: { types: [...UPSTREAM_ERRORS, CardNotFoundError] },
      resolve: (event, _args, context) => context.eventCards.cardOf(event),
    }),
  }),
});

builder.subscriptionField('cardEvents', (t) =>
  t.field({
    type: CardEventRef,
    description:
      "Live card lifecycle events of the caller's vaults (or of `vaultId`), optionally of one card and of some kinds only.",
    authScopes: { scope: 'cards:read' },
    args: {
      cardId: t.arg.string({ required: false, description: 'Only events of this card.' }),
      types: t.arg({
        type: [CardEventTypeEnum],
        required: false,
        description: 'Only events of these kinds.',
      }),
      vaultId: t.arg.string(vaultIdArg),
    },
    subscribe: (_root, args, context) => {
      const tenants = args.vaultId ? [vaultOf(context, args.vaultId)] : [...(context.viewer?.vaults ?? [])];
      return context.events.subscribe({
        tenants,
        ...(args.cardId ? { cardId: args.cardId } : {}),
        ...(args.types?.length ? { types: args.types } : {}),
      });
    },
    resolve: (event) => event,
  }),
);
