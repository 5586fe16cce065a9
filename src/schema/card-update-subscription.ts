import { InputValidationError } from '@pothos/plugin-validation';
import { AccountUpdaterNotSupportedError, CardBrandNotSupportedError, CardNotFoundError } from '../errors.ts';
import type { CardUpdateSubscription, CardUpdates } from '../upstream/card-interface/client.ts';
import { builder } from './builder.ts';
import { CardRef } from './card.ts';
import { cardIdSchema, vaultIdArg, vaultOf } from './vault.ts';

/**
 * Account updater subscriptions and on-demand checks of card interface cards (spec "Card update
 * subscription", "Card updates", Endpoints: card interface).
 */

const CardUpdateSubscriptionType = builder
  .objectRef<CardUpdateSubscription>('CardUpdateSubscription')
  .implement({
    description: 'Account updater subscription of a card (spec "Card update subscription").',
    fields: (t) => ({
      subscriptionId: t.exposeString('id', { description: 'Subscription id (`CUS…`).' }),
      state: t.exposeString('state', { description: '`enrolled`, or `failed` when the network refused it.' }),
      createdAt: t.expose('createdAt', {
        type: 'DateTime',
        description: 'Creation time, ISO 8601 UTC with milliseconds.',
      }),
      updatedAt: t.expose('updatedAt', {
        type: 'DateTime',
        description: 'Last update time, ISO 8601 UTC with milliseconds.',
      }),
    }),
  });

type UpdatedValue = CardUpdates['updatedValues'][number];

/** The upstream client names fields in camelCase; the schema answers with the specification's names. */
const WIRE_FIELD_NAMES: Record<string, string> = { pan: 'pan', expMonth: 'exp_month', expYear: 'exp_year' };

const CardUpdatedValueType = builder.objectRef<UpdatedValue>('CardUpdatedValue').implement({
  description: 'One changed field of a card (spec "Card updates": updated_values[]).',
  fields: (t) => ({
    fieldName: t.string({
      description: 'Field that changed, as the specification names it: `pan`, `exp_month` or `exp_year`.',
      resolve: (v) => WIRE_FIELD_NAMES[v.fieldName] ?? v.fieldName,
    }),
    oldValue: t.string({
      description: 'Previous value; for `pan` the masked number (BIN and last four).',
      resolve: (v) => String(v.oldValue),
    }),
    newValue: t.string({
      description: 'New value; for `pan` the masked number (BIN and last four).',
      resolve: (v) => String(v.newValue),
    }),
  }),
});

const CardUpdatesType = builder.objectRef<CardUpdates>('CardUpdates').implement({
  description: 'Result of an on-demand check (spec "Card updates"). Stateless: nothing is stored.',
  fields: (t) => ({
    event: t.exposeString('event', {
      description:
        '`updated`, or `valid`, `closed`, `expired`, `contact_cardholder_advice`, `non_participating`.',
    }),
    updatedValues: t.field({
      type: [CardUpdatedValueType],
      description: 'Changed fields; empty when nothing changed.',
      resolve: (u) => u.updatedValues,
    }),
  }),
});

const cardArgs = (t: Parameters<Parameters<typeof builder.mutationField>[1]>[0]) => ({
  cardId: t.arg.string({ description: 'Card id (`CRD…`).', validate: cardIdSchema }),
  vaultId: t.arg.string(vaultIdArg),
});

builder.mutationField('subscribeCardUpdates', (t) =>
  t.field({
    type: CardUpdateSubscriptionType,
    description:
      'Subscribes a card to the account updater. Subscribing an already subscribed card is skipped and returns the existing subscription.',
    authScopes: { scope: 'cards:write' },
    errors: { types: [CardNotFoundError, CardBrandNotSupportedError, InputValidationError] },
    args: cardArgs(t),
    resolve: async (_root, args, context) => {
      const vaultId = vaultOf(context, args.vaultId);
      const subscription = await context.upstream.cardInterface.subscribe(vaultId, args.cardId);
      context.cardReads.invalidate(vaultId, args.cardId);
      return subscription;
    },
  }),
);

builder.mutationField('unsubscribeCardUpdates', (t) =>
  t.field({
    type: CardRef,
    description:
      'Unsubscribes a card from the account updater; returns the card, whose metadata no longer holds the account updater object.',
    authScopes: { scope: 'cards:write' },
    errors: { types: [CardNotFoundError, InputValidationError] },
    args: cardArgs(t),
    resolve: async (_root, args, context) => {
      const vaultId = vaultOf(context, args.vaultId);
      await context.upstream.cardInterface.unsubscribe(vaultId, args.cardId);
      context.cardReads.invalidate(vaultId, args.cardId);
      return context.loaders.cardInterfaceCard.load({ vaultId, cardId: args.cardId });
    },
  }),
);

builder.mutationField('checkCardUpdates', (t) =>
  t.field({
    type: CardUpdatesType,
    description:
      'On-demand check of the latest card data (card interface POST /cards/{card_id}/check): Visa and Mastercard without enrolment, American Express and Discover only when subscribed.',
    authScopes: { scope: 'cards:write' },
    errors: { types: [CardNotFoundError, AccountUpdaterNotSupportedError, InputValidationError] },
    args: cardArgs(t),
    resolve: async (_root, args, context) => {
      const vaultId = vaultOf(context, args.vaultId);
      const updates = await context.upstream.cardInterface.check(vaultId, args.cardId);
      // A check may bring newer card data into the card record.
      context.cardReads.invalidate(vaultId, args.cardId);
      return updates;
    },
  }),
);
