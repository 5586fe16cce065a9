import type { ObjectRef } from '@pothos/core';
import { InputValidationError } from '@pothos/plugin-validation';
import type { GraphQLContext } from '../context.ts';
import {
  AccountUpdaterNotSupportedError,
  CardBrandNotSupportedError,
  CardNotFoundError,
  type GatewayErrorClass,
} from '../errors.ts';
import type { VaultCardKey } from '../loaders/index.ts';
import type { CardUpdateSubscription, CardUpdates } from '../upstream/card-interface/client.ts';
import { type BuilderTypes, builder } from './builder.ts';
import { CardRef } from './card.ts';
import { cardArgs, cardKey } from './card-read.ts';
import { recordTimes } from './record-times.ts';

/**
 * Account updater subscriptions and on-demand checks of card interface cards (spec "Card update
 * subscription", "Card updates", Endpoints: card interface).
 */

const CardUpdateSubscriptionType = builder
  .objectRef<CardUpdateSubscription>('CardUpdateSubscription')
  .implement({
    description: 'Account updater subscription of a card.',
    fields: (t) => ({
      subscriptionId: t.exposeString('id', { description: 'Subscription id (`CUS…`).' }),
      state: t.exposeString('state', { description: '`enrolled`, or `failed` when the network refused it.' }),
      ...recordTimes(t),
    }),
  });

type UpdatedValue = CardUpdates['updatedValues'][number];

/** The upstream client names fields in camelCase; the schema answers with the specification's names. */
const WIRE_FIELD_NAMES: Record<string, string> = { pan: 'pan', expMonth: 'exp_month', expYear: 'exp_year' };

const CardUpdatedValueType = builder.objectRef<UpdatedValue>('CardUpdatedValue').implement({
  description: 'One changed field of a card (`updated_values[]` on the wire).',
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
  description: 'Result of an on-demand check. Stateless: nothing is stored.',
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

/**
 * Runs `change` upstream on one card, then drops the card's app-wide cached read on every replica
 * (answered once the other replicas were told, issue 20 item 2): a change (or a check bringing newer
 * data into the card record) makes it stale.
 */
async function changeCard<T>(
  context: GraphQLContext,
  key: VaultCardKey,
  change: () => Promise<T>,
): Promise<T> {
  const result = await change();
  await context.cardReads.changed(key.vaultId, key.cardId);
  return result;
}

/**
 * A mutation on one card interface card in the caller's vault (`cards:write`; `CardNotFoundError`,
 * `InputValidationError` and `errors` besides the defaults), answered by `answer`.
 */
function cardMutationField<T>(
  name: string,
  type: ObjectRef<BuilderTypes, T>,
  description: string,
  errors: readonly GatewayErrorClass[],
  answer: (context: GraphQLContext, key: VaultCardKey) => Promise<T>,
): void {
  builder.mutationField(name, (t) =>
    t.field({
      type: type as ObjectRef<BuilderTypes, unknown>,
      description,
      authScopes: { scope: 'cards:write' },
      errors: { types: [CardNotFoundError, ...errors, InputValidationError] },
      args: cardArgs(t),
      resolve: (_root, args, context) => answer(context, cardKey(context, args)),
    }),
  );
}

cardMutationField(
  'subscribeCardUpdates',
  CardUpdateSubscriptionType,
  'Subscribes a card to the account updater. Subscribing an already subscribed card is skipped and returns the existing subscription.',
  [CardBrandNotSupportedError],
  (context, key) =>
    changeCard(context, key, () => context.upstream.cardInterface.subscribe(key.vaultId, key.cardId)),
);

cardMutationField(
  'unsubscribeCardUpdates',
  CardRef,
  'Unsubscribes a card from the account updater; returns the card, whose metadata no longer holds the account updater object.',
  [],
  async (context, key) => {
    await changeCard(context, key, () => context.upstream.cardInterface.unsubscribe(key.vaultId, key.cardId));
    return context.loaders.cardInterfaceCard.load(key);
  },
);

cardMutationField(
  'checkCardUpdates',
  CardUpdatesType,
  'On-demand check of the latest card data (card interface POST /cards/{card_id}/check): Visa and Mastercard without enrolment, American Express and Discover only when subscribed.',
  [AccountUpdaterNotSupportedError],
  (context, key) =>
    changeCard(context, key, () => context.upstream.cardInterface.check(key.vaultId, key.cardId)),
);
