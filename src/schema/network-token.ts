import type { ArgBuilder } from '@pothos/core';
import { InputValidationError } from '@pothos/plugin-validation';
import { z } from 'zod';
import type { GraphQLContext } from '../context.ts';
import { expMonth, isPanAlias, twoDigitYear } from '../contracts/common.ts';
import {
  CardBrandNotSupportedError,
  NetworkTokenDeclinedError,
  NetworkTokenNotFoundError,
  NetworkTokenRejectedError,
} from '../errors.ts';
import type { LoggedNetworkTokenEvent } from '../events/event-log.ts';
import type { NetworkTokenEventFilter } from '../events/network-token-event-stream.ts';
import type { InVault } from '../loaders/index.ts';
import type { NetworkToken, NetworkTokenHolderInfo } from '../upstream/index.ts';
import { AccountUpdaterCardRef, BillingAddressType } from './account-updater-card.ts';
import { type BuilderTypes, builder } from './builder.ts';
import { attributesOfBin, CardAttributesRef } from './card-attributes.ts';
import { federatedEntity } from './entity.ts';
import { eventRootFields, loggedEventFields, NotificationSourceEnum } from './event-fields.ts';
import { brandedNode, registerNotificationNode } from './notification-node.ts';
import { nullableStrings, optionalStrings } from './nullable-strings.ts';
import { costExtension } from './paging.ts';
import { inVault, vaultIdArg, vaultOf } from './vault.ts';

/**
 * Network tokens (spec "Network token", its endpoints, states and errors; sandbox contract §5.5).
 * A token is identified by the PAN alias it was provisioned for. Network token notifications (gap
 * decisions "Network token notifications") stream live on `Subscription.networkTokenEvents`.
 */

const NetworkTokenStateEnum = builder.enumType('NetworkTokenState', {
  description: 'State of a network token. Only `ACTIVE` is usable.',
  values: {
    PENDING: { value: 'PENDING', description: 'Provisioning has not reported a final state yet.' },
    ACTIVE: { value: 'ACTIVE', description: 'Usable in transactions.' },
    SUSPENDED: { value: 'SUSPENDED', description: 'Suspended by the network; not usable.' },
    DELETED: { value: 'DELETED', description: 'Deleted; not usable.' },
    UNKNOWN: {
      value: 'UNKNOWN',
      description: 'A state the upstream sent that this schema does not know yet; not usable.',
    },
  } as const,
});

const KNOWN_STATES = new Set(['ACTIVE', 'SUSPENDED', 'DELETED']);

const HolderInfoType = builder.objectRef<NetworkTokenHolderInfo>('NetworkTokenHolderInfo').implement({
  description: 'Card holder information of a network token (`card.holder_info` on the wire).',
  fields: (t) => ({
    ...nullableStrings(t, {
      name: 'Holder name.',
      email: 'Holder email address.',
      phoneNumber: 'Holder phone number (`number` on the wire).',
    }),
    billingAddress: t.field({
      type: BillingAddressType,
      nullable: true,
      description: 'Billing address.',
      resolve: (h) => h.billingAddress ?? null,
    }),
  }),
});

export const NetworkTokenRef = builder.objectRef<InVault<NetworkToken>>('NetworkToken').implement({
  description: 'A network token provisioned with the card network for a vaulted card.',
  fields: (t) => ({
    panAlias: t.exposeString('panAlias', { description: 'Alias of the PAN the token belongs to.' }),
    vaultId: t.exposeString('vaultId', { description: 'Vault (tenant) holding the token.' }),
    state: t.field({
      type: NetworkTokenStateEnum,
      description: 'State; `PENDING` until provisioning reports its outcome.',
      resolve: (token) =>
        token.state === undefined
          ? 'PENDING'
          : KNOWN_STATES.has(token.state)
            ? (token.state as 'ACTIVE')
            : 'UNKNOWN',
    }),
    usable: t.boolean({
      description: 'True only for an `ACTIVE` token: only those can be used in a transaction.',
      resolve: (token) => token.state === 'ACTIVE',
    }),
    networkTokenLast4: t.exposeString('networkTokenLast4', {
      nullable: true,
      description: 'Last four digits of the network token.',
    }),
    expiresAt: t.expose('expiresAt', {
      type: 'YearMonth',
      nullable: true,
      description: 'Token expiry, `YYYY-MM`.',
    }),
    cardLast4: t.string({
      description: 'Last four digits of the card.',
      resolve: (token) => token.card.last4,
    }),
    cardBin: t.string({ description: 'BIN of the card.', resolve: (token) => token.card.bin }),
    cardExpiresAt: t.field({
      type: 'YearMonth',
      description: 'Card expiry, `YYYY-MM`.',
      resolve: (token) => token.card.expiresAt,
    }),
    holderInfo: t.field({
      type: HolderInfoType,
      nullable: true,
      description: 'Holder information (retrieve and provision answers only).',
      resolve: (token) => token.card.holderInfo ?? null,
    }),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      nullable: true,
      description: 'Creation time, ISO 8601 UTC.',
    }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'Last update time, ISO 8601 UTC.',
    }),
    attributes: t.field({
      type: CardAttributesRef,
      nullable: true,
      description:
        'Attributes of the card product by the card BIN (needs `card-attributes:basic`); cached per BIN.',
      authScopes: { scope: 'card-attributes:basic' },
      extensions: costExtension({ upstreamCalls: 1 }),
      resolve: (token, _args, context) => attributesOfBin(context, token.vaultId, token.card.bin),
    }),
  }),
});

// Federation (FEDERATION=on): `NetworkToken @key(fields: "panAlias")`, read like `Query.networkToken`
// (null where the root field answers `NetworkTokenNotFoundError`).
federatedEntity(NetworkTokenRef, 'panAlias', {
  scope: 'network-tokens:read',
  isKey: isPanAlias,
  read: (context, vaultId, panAlias) => context.loaders.networkToken.load({ vaultId, panAlias }),
});

/**
 * A PAN alias argument: any documented form (`tok_…`, format-preserving such as
 * `5573495XTjZP21V7312`, all digits such as `9914040119524512000` but never a PAN), at most 128
 * characters and safe as a URL path segment (`isPanAlias`, src/contracts/common.ts; sandbox
 * contract §6, §8).
 */
const panAliasSchema = z
  .string()
  .refine(
    isPanAlias,
    'must be an alias of a PAN (tok_, format-preserving or digits), at most 128 characters',
  );

const HolderInfoInput = builder.inputType('NetworkTokenHolderInfoInput', {
  description: 'Holder information sent with a provisioning request.',
  fields: (t) => ({
    ...optionalStrings(t, {
      name: 'Holder name.',
      email: 'Holder email address.',
      phoneNumber: 'Holder phone number (E.164 digits, up to 15).',
    }),
  }),
});

const ProvisionNetworkTokenInput = builder.inputType('ProvisionNetworkTokenInput', {
  description: 'A vaulted card to provision a network token for (POST /network-tokens).',
  fields: (t) => ({
    panAlias: t.string({ description: 'Alias of the vaulted PAN.' }),
    expMonth: t.int({ description: 'Card expiry month, 1-12.' }),
    expYear: t.int({ description: 'Card expiry year, two digits.' }),
    holderInfo: t.field({ type: HolderInfoInput, required: false, description: 'Holder information.' }),
  }),
  validate: z.looseObject({
    panAlias: panAliasSchema,
    expMonth,
    expYear: twoDigitYear,
    holderInfo: z
      .looseObject({
        name: z.string().max(200, 'must be at most 200 characters').nullish(),
        email: z.email('must be an email address').nullish(),
        phoneNumber: z
          .string()
          .regex(/^\+?\d{4,15}$/, 'must be a phone number of up to 15 digits')
          .nullish(),
      })
      .nullish(),
  }),
});

/** Errors of the fields naming a token by its alias, besides the defaults of every field. */
const NETWORK_TOKEN_ERRORS = [InputValidationError, NetworkTokenNotFoundError];

builder.queryField('networkToken', (t) =>
  t.field({
    type: NetworkTokenRef,
    description: 'The network token of a PAN alias (GET /network-tokens/{pan_alias}).',
    authScopes: { scope: 'network-tokens:read' },
    extensions: costExtension({ upstreamCalls: 1 }),
    errors: { types: [...NETWORK_TOKEN_ERRORS] },
    args: {
      panAlias: t.arg.string({ description: 'Alias of the PAN.', validate: panAliasSchema }),
      vaultId: t.arg.string(vaultIdArg),
    },
    resolve: async (_root, args, context) => {
      const token = await context.loaders.networkToken.load({
        vaultId: vaultOf(context, args.vaultId),
        panAlias: args.panAlias,
      });
      if (!token) throw new NetworkTokenNotFoundError();
      return token;
    },
  }),
);

builder.mutationField('provisionNetworkToken', (t) =>
  t.field({
    type: NetworkTokenRef,
    description:
      'Provisions a network token (POST /network-tokens). Asynchronous: the answer is `PENDING`; the final state arrives on `networkTokenEvents` or by reading the token.',
    authScopes: { scope: 'network-tokens:write' },
    errors: {
      types: [
        ...NETWORK_TOKEN_ERRORS,
        NetworkTokenDeclinedError,
        NetworkTokenRejectedError,
        CardBrandNotSupportedError,
      ],
    },
    args: {
      input: t.arg({ type: ProvisionNetworkTokenInput, description: 'The card to tokenize.' }),
      vaultId: t.arg.string(vaultIdArg),
    },
    resolve: (_root, { input, vaultId }, context) => {
      const holder = input.holderInfo;
      return inVault(context, vaultId, (vault) =>
        context.upstream.networkTokens.provision(vault, {
          panAlias: input.panAlias,
          expMonth: input.expMonth,
          expYear: input.expYear,
          ...(holder
            ? {
                holderInfo: {
                  ...(holder.name ? { name: holder.name } : {}),
                  ...(holder.email ? { email: holder.email } : {}),
                  ...(holder.phoneNumber ? { phoneNumber: holder.phoneNumber } : {}),
                },
              }
            : {}),
        }),
      );
    },
  }),
);

builder.mutationField('deleteNetworkToken', (t) =>
  t.field({
    type: NetworkTokenRef,
    description:
      'Deletes the network token of a PAN alias (DELETE /network-tokens/{pan_alias}); answers it with state `DELETED`.',
    authScopes: { scope: 'network-tokens:write' },
    errors: { types: [...NETWORK_TOKEN_ERRORS] },
    args: {
      panAlias: t.arg.string({ description: 'Alias of the PAN.', validate: panAliasSchema }),
      vaultId: t.arg.string(vaultIdArg),
    },
    resolve: (_root, args, context) =>
      inVault(context, args.vaultId, (vault) => context.upstream.networkTokens.delete(vault, args.panAlias)),
  }),
);

builder.objectField(AccountUpdaterCardRef, 'networkToken', (t) =>
  t.field({
    type: NetworkTokenRef,
    nullable: true,
    description:
      "The network token of this card's PAN alias, or null when none was provisioned (needs `network-tokens:read`).",
    authScopes: { scope: 'network-tokens:read' },
    extensions: costExtension({ upstreamCalls: 1 }),
    // A number that is no alias (the masked form of a PAN an answer carried) names no token.
    resolve: (card, _args, context) =>
      isPanAlias(card.numberAlias)
        ? context.loaders.networkToken.load({ vaultId: card.vaultId, panAlias: card.numberAlias })
        : null,
  }),
);

const NetworkTokenEventTypeEnum = builder.enumType('NetworkTokenEventType', {
  description:
    'Kind of a network token notification; the wire value is `network_token.<kind in lower case>` or `cmp_network_token.<kind in lower case>`. `OTHER`: a kind this schema does not know yet (see `NetworkTokenEvent.event`).',
  values: {
    UPDATED: {
      value: 'network_token.updated',
      description:
        "The token's status changed (the provider's documented notification: Updated, Used, Suspended, Activated, Deleted; see `state`).",
    },
    ACTIVE: {
      value: 'network_token.active',
      description: 'Provisioning completed and the token is `ACTIVE` (usable; the specification reading).',
    },
    SUSPENDED: {
      value: 'network_token.suspended',
      description:
        'Provisioning completed and the network suspended the token (not usable; the specification reading).',
    },
    OTHER: {
      value: 'other',
      description: 'A kind this schema does not know (yet); its wire name is in `NetworkTokenEvent.event`.',
    },
  } as const,
});

const NetworkTokenEventRef = builder.objectRef<LoggedNetworkTokenEvent>('NetworkTokenEvent').implement({
  // Refetchable with `node(id:)` by its notification id (src/schema/notification-node.ts).
  interfaces: [builder.nodeInterfaceRef()],
  description:
    "One accepted network token notification: a token's status changed (`network_token.updated`, `cmp_network_token.updated`) or provisioning reached its final state. Kept in the durable event log: resumable by cursor and paged as history. Details members the notification did not carry are null.",
  fields: (t) => ({
    ...loggedEventFields(t, {
      log: 'network token event log',
      outOfOrder:
        'True when a newer event of the same PAN alias (by `timestamp`) had already been accepted: do not let this one overwrite newer token data.',
      timestamp: 'When the provider produced the notification (ISO 8601).',
      occurredAt: 'When the token reached its state (ISO 8601; the token `updatedAt`); null when not sent.',
      createdAt:
        'When the token was created or provisioning requested (ISO 8601; a zone-less time is read as UTC); null when not sent.',
    }),
    type: t.field({
      type: NetworkTokenEventTypeEnum,
      description: 'Event kind (`OTHER`: not known yet, see `event`).',
      resolve: (e) => e.type,
    }),
    event: t.string({
      nullable: true,
      description: 'The notification `event` as sent, at most 128 characters; null when it sent none.',
      resolve: (e) => e.event,
    }),
    source: t.field({
      type: NotificationSourceEnum,
      description: 'Which area sent the notification (`network_token.*` or `cmp_network_token.*`).',
      resolve: (e) => e.source,
    }),
    panAlias: t.string({
      nullable: true,
      description:
        'Alias of the PAN the token was provisioned with (`details.pan_alias`); null when not sent.',
      resolve: (e) => e.panAlias,
    }),
    state: t.field({
      type: NetworkTokenStateEnum,
      nullable: true,
      description:
        'The token state `details.state` names when it is a token state (`ACTIVE`, `SUSPENDED`, `DELETED`); else null (see `stateName`).',
      resolve: (e) =>
        e.state !== undefined && KNOWN_STATES.has(e.state)
          ? (e.state as 'ACTIVE' | 'SUSPENDED' | 'DELETED')
          : null,
    }),
    stateName: t.string({
      nullable: true,
      description:
        '`details.state` as sent (an open set, e.g. `ACTIVE`, `CARD_UPDATED`); null when not sent or when it holds a card number.',
      resolve: (e) => e.state,
    }),
    networkTokenId: t.string({
      nullable: true,
      description: 'Id of the network token (`details.network_token_id`); null when not sent.',
      resolve: (e) => e.networkTokenId,
    }),
    networkTokenLast4: t.string({
      nullable: true,
      description: 'Last four digits of the network token (not of the card); null when not sent.',
      resolve: (e) => e.networkTokenLast4,
    }),
    expiresAt: t.field({
      type: 'YearMonth',
      nullable: true,
      description:
        'Token expiry, `YYYY-MM` (`expires_at`, or `exp_year` and `exp_month`); null when not sent.',
      resolve: (e) => e.expiresAt,
    }),
    cardBin: t.string({
      nullable: true,
      description: 'BIN of the card behind the token (`details.card_bin`, 6-8 digits); null when not sent.',
      resolve: (e) => e.cardBin,
    }),
    cardLast4: t.string({
      nullable: true,
      description: 'Last four digits of the card (`details.card_last4`); null when not sent.',
      resolve: (e) => e.cardLast4,
    }),
    cardExpMonth: t.int({
      nullable: true,
      description: "The card's expiry month, 1-12 (`details.card_exp_month`); null when not sent.",
      resolve: (e) => e.cardExpMonth,
    }),
    cardExpYear: t.int({
      nullable: true,
      description: "The card's expiry year, four digits (`details.card_exp_year`); null when not sent.",
      resolve: (e) => e.cardExpYear,
    }),
    paymentAccountReference: t.string({
      nullable: true,
      description:
        'Payment account reference (`details.payment_account_reference`); null when not sent or empty.',
      resolve: (e) => e.paymentAccountReference,
    }),
    updatedAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'When the token was last updated (`details.updated_at`, ISO 8601); null when not sent.',
      resolve: (e) => e.updatedAt,
    }),
    token: t.field({
      type: NetworkTokenRef,
      nullable: true,
      description:
        "The network token, read once per event for all subscribers (GET /network-tokens/{pan_alias} in the event's vault); `NetworkTokenNotFoundError` when the vault no longer holds it; null when the notification names no PAN alias.",
      authScopes: { scope: 'network-tokens:read' },
      extensions: costExtension({ upstreamCalls: 1 }),
      errors: { types: [NetworkTokenNotFoundError] },
      // A live event's token is read once for every subscriber (app-wide memo); a history page
      // reads through the request's loader (each alias once, charged to the operation's budget).
      resolve: async (event, _args, context, info) => {
        const { panAlias } = event;
        if (panAlias === undefined) return null;
        if (info.operation.operation === 'subscription') return context.eventNetworkTokens.tokenOf(event);
        const token = await context.loaders.networkToken.load({ vaultId: event.tenant, panAlias });
        if (!token) throw new NetworkTokenNotFoundError();
        return token;
      },
    }),
  }),
});

registerNotificationNode(async (context, id) => {
  if (!context.viewer?.scopes.has('network-tokens:read')) return null;
  const found = await Promise.all(
    context.viewer.vaults.map((vaultId) => context.networkTokenEvents.byIds(vaultId, [id])),
  );
  const event = found.flat()[0];
  return event ? brandedNode({ ...event }, NetworkTokenEventRef) : null;
});

eventRootFields({
  name: 'networkTokenEvents',
  historyName: 'networkTokenEventHistory',
  typeName: 'NetworkTokenEvent',
  type: NetworkTokenEventRef,
  what: 'network token event',
  scope: 'network-tokens:read',
  descriptions: {
    live: "Live network token notifications of the caller's vaults (or of `vaultId`), optionally of one PAN alias: the final state of each provisioning. With `after` (a `NetworkTokenEvent.cursor`), every retained event after it is replayed first, then live events follow with no gap and no duplicate; every gateway replica delivers every event.",
    history:
      "History of accepted network token notifications of the caller's vaults (or of `vaultId`), oldest first by event `timestamp` (then acceptance order), within the retention period. Forward pagination only (`first`, `after`).",
  },
  filterArgs: networkTokenEventFilterArgs,
  filter: networkTokenEventFilter,
  stream: (context) => context.networkTokenEvents,
});

/** Arguments that select network token events: vault and PAN alias (subscription and history alike). */
function networkTokenEventFilterArgs(t: { arg: ArgBuilder<BuilderTypes> }) {
  return {
    panAlias: t.arg.string({
      required: false,
      description:
        'Only events naming this PAN alias, exactly as provisioning was requested with it (`tok_` or format-preserving).',
      validate: panAliasSchema,
    }),
    vaultId: t.arg.string(vaultIdArg),
  };
}

/** The network token event filter of the caller: its vaults (or `vaultId`) and the PAN alias. */
function networkTokenEventFilter(
  context: GraphQLContext,
  args: { vaultId?: string | null; panAlias?: string | null },
): NetworkTokenEventFilter {
  return {
    tenants: args.vaultId ? [vaultOf(context, args.vaultId)] : [...(context.viewer?.vaults ?? [])],
    ...(args.panAlias ? { panAlias: args.panAlias } : {}),
  };
}
