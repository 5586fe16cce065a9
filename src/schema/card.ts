import { InputValidationError } from '@pothos/plugin-validation';
import { z } from 'zod';
import type { GraphQLContext } from '../context.ts';
import { CVC_STATUSES, type TOKEN_TYPES, type WALLET_TYPES } from '../contracts/card-interface.ts';
import { cardId as cardIdContract, cvc, expMonth, tokAlias, twoDigitYear } from '../contracts/common.ts';
import { CardNotFoundError } from '../errors.ts';
import { isPlainPan } from '../lib/pan.ts';
import { redactCardData } from '../lib/redaction.ts';
import type { InVault } from '../loaders/index.ts';
import type { CardInterfaceCard } from '../upstream/card-interface/client.ts';
import { builder } from './builder.ts';
import { BRAND_DEPRECATION, CardBrandEnum, cardBrandCode } from './card-brand.ts';
import { cardQueryField } from './card-read.ts';
import { federatedEntity } from './entity.ts';
import { enumValuesOf } from './enum-values.ts';
import { nullableStrings, optionalStrings } from './nullable-strings.ts';
import { optionalRecordTimes } from './record-times.ts';
import { inVault, vaultIdArg } from './vault.ts';

/**
 * The card interface's card (spec "Card (card interface)"; record shape per docs/gap-decisions.md).
 * Relay global ID: `Card:<vaultId>:<cardId>`, so `node(id)` reads it with the right vault's
 * credentials after checking the caller may see that vault.
 */

export const TokenTypeEnum = builder.enumType('TokenType', {
  description: 'Kind of number the card record holds (`token_type` on the wire).',
  values: enumValuesOf<(typeof TOKEN_TYPES)[number]>({
    dpan: 'Device PAN (wallet token).',
    mpan: 'Merchant PAN (merchant token).',
    pan: 'Funding PAN.',
  }),
});

export const WalletTypeEnum = builder.enumType('WalletType', {
  description: 'Wallet a device PAN belongs to (`wallet_type` on the wire).',
  values: enumValuesOf<(typeof WALLET_TYPES)[number]>({ apple_pay: 'Apple Pay.', google_pay: 'Google Pay.' }),
});

type Cardholder = NonNullable<CardInterfaceCard['cardholder']>;
type CardholderAddress = NonNullable<Cardholder['address']>;

/** The numbered lines of a cardholder address (spec "Card": `address1`-`address4`). */
const ADDRESS_LINES = ['address1', 'address2', 'address3', 'address4'] as const;

/** A named address line; the further members the contract keeps as given are not exposed. */
const addressLine = (value: string | number | boolean | null | undefined) =>
  typeof value === 'string' ? value : null;

const CardholderAddressType = builder.objectRef<CardholderAddress>('CardholderAddress').implement({
  description: 'Cardholder address (`cardholder.address` on the wire).',
  fields: (t) => ({
    ...Object.fromEntries(
      ADDRESS_LINES.map((line, index) => [
        line,
        t.string({
          nullable: true,
          description: `Address line ${index + 1}.`,
          resolve: (a) => addressLine(a[line]),
        }),
      ]),
    ),
    city: t.string({ nullable: true, description: 'City.', resolve: (a) => addressLine(a.city) }),
  }),
});

const CardholderType = builder.objectRef<Cardholder>('Cardholder').implement({
  description: 'Cardholder of a card interface card (`cardholder` on the wire).',
  fields: (t) => ({
    ...nullableStrings(t, { name: 'Cardholder name.', company: 'Company name.' }),
    address: t.field({
      type: CardholderAddressType,
      nullable: true,
      description: 'Postal address.',
      resolve: (c) => c.address ?? null,
    }),
  }),
});

const CardUpdateSubscriptionInfo = builder
  .objectRef<NonNullable<CardInterfaceCard['accountUpdater']>>('CardAccountUpdaterInfo')
  .implement({
    description: "The account updater object of a subscribed card's metadata; absent after unsubscription.",
    fields: (t) => ({
      subscriptionId: t.exposeString('subscriptionId', { description: 'Subscription id (`CUS…`).' }),
      state: t.exposeString('state', { description: 'Subscription state, e.g. `enrolled`.' }),
    }),
  });

export const CardRef = builder.objectRef<InVault<CardInterfaceCard>>('Card');

builder.node(CardRef, {
  description:
    'A card kept on file in the card interface. Never carries the PAN or CVC, only aliases and BIN/last four.',
  id: { resolve: (card) => `${card.vaultId}:${card.id}` },
  isTypeOf: (value) => typeof value === 'object' && value !== null && 'panAlias' in value,
  loadOne: (globalId, context) => loadCardNode(globalId, context, context.loaders.cardInterfaceCard),
  fields: (t) => ({
    cardId: t.exposeString('id', { description: 'Card id in the service (`CRD…`).' }),
    vaultId: t.exposeString('vaultId', { description: 'Vault (tenant) holding the card.' }),
    panAlias: t.exposeString('panAlias', { description: 'Alias of the PAN (`tok_…`).' }),
    cvcAlias: t.exposeString('cvcAlias', {
      nullable: true,
      description: 'Alias of the CVC, when one was stored.',
    }),
    bin: t.exposeString('bin', { description: 'First six digits of the PAN.' }),
    last4: t.exposeString('last4', { description: 'Last four digits of the PAN.' }),
    brand: t.exposeString('brand', {
      nullable: true,
      description:
        'Card brand (visa, mastercard, amex, discover, diners, jcb); derived from the BIN when the upstream answer omits it.',
      deprecationReason: BRAND_DEPRECATION,
    }),
    brandCode: t.field({
      type: CardBrandEnum,
      nullable: true,
      description:
        'Card brand, the same value `CardAttributes.brandCode` gives; derived from the BIN when the upstream answer omits it, null when neither names one.',
      resolve: (c) => cardBrandCode(c.brand),
    }),
    expMonth: t.exposeInt('expMonth', { description: 'Expiry month, 1-12.' }),
    expYear: t.exposeInt('expYear', { description: 'Two-digit expiry year.' }),
    cvcStatus: t.exposeString('cvcStatus', { nullable: true, description: 'CVC status, e.g. `active`.' }),
    tokenType: t.field({
      type: TokenTypeEnum,
      nullable: true,
      description: 'Kind of number.',
      resolve: (c) => c.tokenType ?? null,
    }),
    walletType: t.field({
      type: WalletTypeEnum,
      nullable: true,
      description: 'Wallet of a device PAN.',
      resolve: (c) => c.walletType ?? null,
    }),
    cardholder: t.field({
      type: CardholderType,
      nullable: true,
      description: 'Cardholder.',
      resolve: (c) => c.cardholder ?? null,
    }),
    metadata: t.field({
      type: 'JSON',
      description:
        'User-defined metadata (`data.meta`). Card numbers in it are masked to BIN and last four, security code members are `[redacted]`.',
      // Metadata stored before masking existed (or written around the gateway) is masked on the way out.
      resolve: (c) => redactCardData(c.meta),
    }),
    updateSubscription: t.field({
      type: CardUpdateSubscriptionInfo,
      nullable: true,
      description:
        'Account updater subscription recorded in the card metadata (removed on unsubscription); null when not subscribed.',
      resolve: (c) => c.accountUpdater ?? null,
    }),
    ...optionalRecordTimes(t),
  }),
});

// Federation (FEDERATION=on): `Card @key(fields: "cardId")`, read like `Query.card` in the caller's vault.
federatedEntity(CardRef, 'cardId', {
  scope: 'cards:read',
  isKey: isCardId,
  read: (context, vaultId, cardId) => loadCard(context.loaders.cardInterfaceCard, { vaultId, cardId }),
});

/** Whether `value` is a card id (`CRD…`, src/contracts/common.ts), as the `cardId` arguments check. */
export function isCardId(value: string): boolean {
  return cardIdContract.safeParse(value).success;
}

/**
 * One card by its loader (so through the card read cache); null for a card the vault does not hold.
 * @throws the loader's other failures (UpstreamServiceError, …).
 */
export async function loadCard<T>(
  loader: { load(key: { vaultId: string; cardId: string }): Promise<T> },
  key: { vaultId: string; cardId: string },
): Promise<T | null> {
  try {
    return await loader.load(key);
  } catch (error) {
    if (error instanceof CardNotFoundError) return null;
    throw error;
  }
}

/**
 * `node(id)` of a card: null unless the caller's token names the card's vault and grants
 * `cards:read`, and null for a card that does not exist (the Relay contract), never an error.
 */
export async function loadCardNode<T>(
  globalId: string,
  context: GraphQLContext,
  loader: { load(key: { vaultId: string; cardId: string }): Promise<T> },
): Promise<T | null> {
  const [vaultId, cardId] = splitVaultId(globalId);
  if (!context.viewer?.vaults.includes(vaultId) || !context.viewer.scopes.has('cards:read')) return null;
  return loadCard(loader, { vaultId, cardId });
}

/** Splits `<vaultId>:<cardId>` of a Card or AccountUpdaterCard global ID. */
export function splitVaultId(id: string): [string, string] {
  const at = id.indexOf(':');
  return at < 0 ? ['', id] : [id.slice(0, at), id.slice(at + 1)];
}

const panSchema = z
  .string()
  .transform((v) => digitsOnly(v))
  .refine(isPlainPan, 'must be a card number of 13 to 19 digits that passes the Luhn check');

const text = (max: number) => z.string().max(max, `must be at most ${max} characters`);

const CardholderAddressInput = builder.inputType('CardholderAddressInput', {
  description: 'Cardholder address lines.',
  fields: (t) =>
    optionalStrings(t, {
      address1: 'Address line 1 (at most 200 characters).',
      address2: 'Address line 2 (at most 200 characters).',
      address3: 'Address line 3 (at most 200 characters).',
      address4: 'Address line 4 (at most 200 characters).',
      city: 'City (at most 100 characters).',
    }),
});

const CardholderInput = builder.inputType('CardholderInput', {
  description: 'Cardholder of a new card.',
  fields: (t) => ({
    ...optionalStrings(t, {
      name: 'Cardholder name (at most 200 characters).',
      company: 'Company (at most 200 characters).',
    }),
    address: t.field({ type: CardholderAddressInput, required: false, description: 'Address.' }),
  }),
});

const cardholderSchema = z.looseObject({
  name: text(200).nullish(),
  company: text(200).nullish(),
  address: z
    .looseObject({
      address1: text(200).nullish(),
      address2: text(200).nullish(),
      address3: text(200).nullish(),
      address4: text(200).nullish(),
      city: text(100).nullish(),
    })
    .nullish(),
});

/**
 * The whole CreateCardInput in one schema, so every bad field is reported at once (field-level
 * validators stop at the first failure of an input object).
 */
const createCardInputSchema = z
  .looseObject({
    pan: panSchema.nullish(),
    panAlias: tokAlias.nullish(),
    cvc: cvc.nullish(),
    cvcAlias: tokAlias.nullish(),
    cvcStatus: z.enum(CVC_STATUSES, 'must be active').nullish(),
    expMonth,
    expYear: twoDigitYear,
    cardholder: cardholderSchema.nullish(),
    metadata: z.record(z.string(), z.unknown(), 'must be a JSON object').nullish(),
  })
  .refine((v) => (v.pan == null) !== (v.panAlias == null), {
    message: 'give exactly one of pan and panAlias',
    path: ['pan'],
  });

const CreateCardInput = builder.inputType('CreateCardInput', {
  description: 'A card to keep on file (card interface POST /cards). Exactly one of `pan` and `panAlias`.',
  fields: (t) => ({
    pan: t.string({
      required: false,
      description: 'Card number (13-19 digits, Luhn-valid); spaces and hyphens are ignored.',
    }),
    panAlias: t.string({ required: false, description: 'Alias (`tok_…`) of a PAN already in the vault.' }),
    cvc: t.string({ required: false, description: 'Card security code, 3 or 4 digits.' }),
    cvcAlias: t.string({ required: false, description: 'Alias (`tok_…`) of a CVC already in the vault.' }),
    cvcStatus: t.string({ required: false, description: 'CVC status; `active` is the only value given.' }),
    expMonth: t.int({ description: 'Expiry month, 1-12.' }),
    expYear: t.int({ description: 'Two-digit expiry year, 0-99.' }),
    cardholder: t.field({ type: CardholderInput, required: false, description: 'Cardholder.' }),
    tokenType: t.field({ type: TokenTypeEnum, required: false, description: 'Kind of number.' }),
    walletType: t.field({ type: WalletTypeEnum, required: false, description: 'Wallet of a device PAN.' }),
    metadata: t.field({
      type: 'JSON',
      required: false,
      description: 'User-defined metadata object (`data.meta`).',
    }),
  }),
  validate: createCardInputSchema,
});

cardQueryField(
  'card',
  CardRef,
  'cardInterfaceCard',
  "A card of the card interface, by its id, in the caller's vault.",
);

builder.mutationField('createCard', (t) =>
  t.field({
    type: CardRef,
    description:
      'Keeps a card on file (card interface POST /cards). The PAN and CVC go to the vault and come back as aliases. With Duplicate Card Check on the vault, a PAN already on file answers the existing card with `duplicate: true`.',
    authScopes: { scope: 'cards:write' },
    errors: {
      types: [InputValidationError],
      result: {
        fields: (result) => ({
          duplicate: result.boolean({
            description:
              "True when the vault's Duplicate Card Check found the PAN already on file: the upstream answered 303 and `data` is the existing card, not a new one.",
            resolve: (card) => isDuplicate(card),
          }),
        }),
      },
    },
    args: {
      input: t.arg({ type: CreateCardInput, description: 'The card to keep on file.' }),
      vaultId: t.arg.string(vaultIdArg),
    },
    resolve: (_root, { input, vaultId }, context) =>
      inVault(context, vaultId, (vault) =>
        context.upstream.cardInterface.createCard(vault, {
          ...(input.pan ? { pan: digitsOnly(input.pan) } : {}),
          ...(input.panAlias ? { panAlias: input.panAlias } : {}),
          ...(input.cvc ? { cvc: input.cvc } : {}),
          ...(input.cvcAlias ? { cvcAlias: input.cvcAlias } : {}),
          // validated above to be `active`, the only value the specification gives
          ...(input.cvcStatus ? { cvcStatus: 'active' as const } : {}),
          expMonth: input.expMonth,
          expYear: input.expYear,
          ...(input.cardholder ? { cardholder: stripNulls(input.cardholder) } : {}),
          ...(input.tokenType ? { tokenType: input.tokenType } : {}),
          ...(input.walletType ? { walletType: input.walletType } : {}),
          // Free text from the user: card data in it is masked before it is stored upstream.
          ...(input.metadata ? { meta: redactCardData(input.metadata as Record<string, unknown>) } : {}),
        }),
      ),
  }),
);

/** Whether the card a `createCard` resolved is an existing one (the upstream's 303), see `CreatedCard`. */
function isDuplicate(card: object): boolean {
  return 'duplicate' in card && card.duplicate === true;
}

/** A card number without the whitespace and hyphens a client may type between digits. */
export function digitsOnly(value: string): string {
  return value.replace(/[\s-]/g, '');
}

/** `T` with `null` removed from every member, recursively. */
type WithoutNulls<T> = T extends object ? { [K in keyof T]: WithoutNulls<Exclude<T[K], null>> } : T;

/** Drops null members of GraphQL input objects, recursively (absent and null mean the same upstream). */
export function stripNulls<T extends object>(value: T): WithoutNulls<T> {
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (member === null || member === undefined) continue;
    out[key] = typeof member === 'object' && !Array.isArray(member) ? stripNulls(member) : member;
  }
  return out as WithoutNulls<T>;
}
