import { InputValidationError } from '@pothos/plugin-validation';
import { z } from 'zod';
import { CARD_CHECK_NAME_MAX_LENGTH, isCardCheckNumber } from '../contracts/account-updater.ts';
import {
  cvc,
  expMonth,
  FORMAT_PRESERVING_ALIAS_PATTERN,
  TOK_ALIAS_PATTERN,
  twoDigitYear,
} from '../contracts/common.ts';
import {
  AccountUpdaterNotSupportedError,
  CardBrandNotSupportedError,
  MerchantNotFoundError,
} from '../errors.ts';
import { cardBrandOf, isPlainPan } from '../lib/pan.ts';
import type { InVault } from '../loaders/index.ts';
import type {
  AccountUpdaterCard,
  BillingAddress,
  CardCheckResult,
  Merchant,
} from '../upstream/account-updater/client.ts';
import { builder } from './builder.ts';
import { digitsOnly, isCardId, loadCard, loadCardNode, stripNulls } from './card.ts';
import { CardEventTypeEnum, knownEventType } from './card-event-type.ts';
import { cardQueryField } from './card-read.ts';
import { federatedEntity } from './entity.ts';
import { nullableStrings, optionalStrings } from './nullable-strings.ts';
import { inVault, vaultIdArg, vaultOf } from './vault.ts';

/**
 * Account updater, version 1 (spec "Card (account updater, version 1)", "Card check request and
 * result", "Merchant object"). Relay global ID: `AccountUpdaterCard:<vaultId>:<cardId>`.
 */

/** The members of a billing address (`billing_address` on the wire), output and input alike: name → description. */
const BILLING_ADDRESS_MEMBERS = {
  name: 'Name.',
  company: 'Company.',
  address1: 'Address line 1.',
  address2: 'Address line 2.',
  city: 'City.',
  region: 'Region or state.',
  country: 'Country.',
  postalCode: 'Postal code.',
  phone: 'Phone number.',
} as const;

export const BillingAddressType = builder.objectRef<BillingAddress>('BillingAddress').implement({
  description: 'Billing address of an enrolled card (`billing_address` on the wire).',
  fields: (t) => nullableStrings(t, BILLING_ADDRESS_MEMBERS),
});

const MerchantType = builder.objectRef<Merchant>('Merchant').implement({
  description: 'Merchant on whose behalf a card is enrolled.',
  fields: (t) => ({
    ...nullableStrings(t, {
      serviceMerchantId:
        'Merchant id registered for account updater in the vault (`vgs_merchant_id` in the provider documentation, `service_merchant_id` in the specification).',
      subMerchantName: 'Merchant name registered on the card.',
    }),
    subMerchantMid: t.string({
      nullable: true,
      description: 'Sub-merchant identifier.',
      resolve: (m) =>
        m.subMerchantMid === undefined || m.subMerchantMid === null ? null : String(m.subMerchantMid),
    }),
  }),
});

const AccountUpdaterCardStateEnum = builder.enumType('AccountUpdaterCardState', {
  description: 'State of a v1 card.',
  values: {
    ENROLLING: {
      value: 'enrolling',
      description: 'Enrolment is in progress; the card returns the submitted data.',
    },
    ENROLLED: { value: 'enrolled', description: 'Enrolled with the network; data is definitive.' },
  } as const,
});

export const AccountUpdaterCardRef = builder.objectRef<InVault<AccountUpdaterCard>>('AccountUpdaterCard');

builder.node(AccountUpdaterCardRef, {
  description: 'A card enrolled in the account updater (version 1). `number` is an alias, never the PAN.',
  id: { resolve: (card) => `${card.vaultId}:${card.id}` },
  isTypeOf: (value) => typeof value === 'object' && value !== null && 'capabilities' in value,
  loadOne: (globalId, context) => loadCardNode(globalId, context, context.loaders.accountUpdaterCard),
  fields: (t) => ({
    cardId: t.exposeString('id', { description: 'Card id in the service (`CRD…`, 25 characters).' }),
    vaultId: t.exposeString('vaultId', { description: 'Vault (tenant) holding the card.' }),
    name: t.exposeString('name', { nullable: true, description: 'Cardholder name.' }),
    number: t.exposeString('numberAlias', { description: 'Alias representing the PAN.' }),
    maskedNumber: t.expose('maskedNumber', {
      type: 'MaskedPan',
      nullable: true,
      description:
        'The card number masked to its BIN and last four (`557349******7312`), when the alias shows them (format-preserving alias); null for a `tok_` alias.',
    }),
    expMonth: t.exposeInt('expMonth', { description: 'Expiry month, 1-12.' }),
    expYear: t.exposeInt('expYear', { description: 'Expiry year as the service returns it (two digits).' }),
    billingAddress: t.field({
      type: BillingAddressType,
      nullable: true,
      description: 'Billing address.',
      resolve: (c) => c.billingAddress ?? null,
    }),
    merchant: t.field({
      type: MerchantType,
      nullable: true,
      description: 'Merchant of the enrolment.',
      resolve: (c) => c.merchant ?? null,
    }),
    capabilities: t.exposeStringList('capabilities', {
      description: 'Contains `ACCOUNT_UPDATER` once enrolled.',
    }),
    state: t.field({
      type: AccountUpdaterCardStateEnum,
      nullable: true,
      description: 'Current state; null for a state this schema does not know yet.',
      resolve: (c) => (c.state === 'enrolling' || c.state === 'enrolled' ? c.state : null),
    }),
    event: t.field({
      type: CardEventTypeEnum,
      nullable: true,
      description: 'Latest event from the network, e.g. `UPDATED`; null while enrolling.',
      resolve: (c) => knownEventType(c.event),
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'Enrolment time, ISO 8601 UTC.' }),
    updatedAt: t.expose('updatedAt', {
      type: 'DateTime',
      description: 'Last update from the network, ISO 8601 UTC.',
    }),
  }),
});

// Federation (FEDERATION=on): `AccountUpdaterCard @key(fields: "cardId")`, read like `Query.accountUpdaterCard`.
federatedEntity(AccountUpdaterCardRef, 'cardId', {
  scope: 'cards:read',
  isKey: isCardId,
  read: (context, vaultId, cardId) => loadCard(context.loaders.accountUpdaterCard, { vaultId, cardId }),
});

const PAN_FAMILIES = new Set(['visa', 'mastercard', 'amex', 'discover', 'diners', 'jcb']);

/**
 * v1 `number` (spec "Card check request"): a format-preserving alias (six leading digits, up to nine
 * characters with a letter, four trailing digits), a `tok_` alias, or a plain PAN of the Visa,
 * Mastercard, American Express, Diners Club, Discover or JCB families (spaces and hyphens ignored).
 */
export const v1NumberSchema = z
  .string()
  .transform((v) => (/^[\d -]+$/.test(v) ? v.replace(/[ -]/g, '') : v))
  .refine(
    (v) =>
      TOK_ALIAS_PATTERN.test(v) ||
      FORMAT_PRESERVING_ALIAS_PATTERN.test(v) ||
      (isPlainPan(v) && PAN_FAMILIES.has(cardBrandOf(v) ?? '')),
    'must be a Luhn-valid card number of a supported brand, or a card alias',
  );

/** A plain PAN loses its separators; an alias is sent as given. */
const v1Number = (value: string) => (/^[\d -]+$/.test(value) ? digitsOnly(value) : value);

/**
 * Card check `number` (documented card-check request, sandbox contract §8): 13 to 19 characters, a
 * plain PAN of the six families (spaces and hyphens ignored) or a format-preserving alias; the card
 * check does not take a `tok_` alias.
 */
export const cardCheckNumberSchema = z
  .string()
  .transform((v) => (/^[\d -]+$/.test(v) ? v.replace(/[ -]/g, '') : v))
  .refine(
    (v) =>
      isCardCheckNumber(v) &&
      (FORMAT_PRESERVING_ALIAS_PATTERN.test(v) || (isPlainPan(v) && PAN_FAMILIES.has(cardBrandOf(v) ?? ''))),
    'must be a Luhn-valid card number of a supported brand or a format-preserving alias, 13 to 19 characters (the card check takes no tok_ alias)',
  );

/**
 * What enrol and card check send alike (v1 POST /cards and POST /card-check): the cardholder name,
 * the number (digits only when it was typed with spaces or hyphens; an alias as given), the expiry
 * (month 1-12, two-digit year) and, when given, the merchant without its null members.
 */
function v1CardRequest(input: {
  name: string;
  number: string;
  expMonth: number;
  expYear: number;
  merchant?: { serviceMerchantId?: string | null; subMerchantName: string } | null;
}) {
  return {
    name: input.name,
    number: v1Number(input.number),
    expMonth: input.expMonth,
    expYear: input.expYear,
    // The documented request merchant has the id and the name only (sandbox contract §8).
    ...(input.merchant
      ? {
          merchant: stripNulls({
            serviceMerchantId: input.merchant.serviceMerchantId,
            subMerchantName: input.merchant.subMerchantName,
          }),
        }
      : {}),
  };
}

const yearSchema = z.number().int().min(0, 'must be 0 to 9999').max(9999, 'must be 0 to 9999');
const text = (max: number) => z.string().max(max, `must be at most ${max} characters`);

const BillingAddressInput = builder.inputType('BillingAddressInput', {
  description:
    'Billing address of a card to enrol (each member at most 200 characters; postal code 20, phone 40).',
  fields: (t) => optionalStrings(t, BILLING_ADDRESS_MEMBERS),
});

const MerchantInput = builder.inputType('MerchantInput', {
  description:
    'Merchant of an enrolment: required when enrolling on behalf of a merchant or when the vault has several merchants.',
  fields: (t) => ({
    serviceMerchantId: t.string({
      required: false,
      description:
        'Required when several merchants are registered in the vault. Sent to the provider as `vgs_merchant_id`.',
    }),
    subMerchantName: t.string({
      description: 'Merchant name; required when enrolling on behalf of a merchant.',
    }),
    subMerchantMid: t.string({
      required: false,
      description:
        'Ignored: the provider takes no sub-merchant identifier in requests; it appears in answers only.',
      deprecationReason:
        'The enrolment request of the provider has no `sub_merchant_mid` member; it is not sent. Read `Merchant.subMerchantMid` from the answer instead.',
    }),
  }),
});

const billingAddressSchema = z.looseObject({
  name: text(200).nullish(),
  company: text(200).nullish(),
  address1: text(200).nullish(),
  address2: text(200).nullish(),
  city: text(100).nullish(),
  region: text(100).nullish(),
  country: text(100).nullish(),
  postalCode: text(20).nullish(),
  phone: text(40).nullish(),
});

const merchantSchema = z.looseObject({
  serviceMerchantId: z
    .string()
    .min(1, 'must not be empty')
    .max(64, 'must be at most 64 characters')
    .nullish(),
  subMerchantName: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  subMerchantMid: z
    .string()
    .regex(/^\d{1,18}$/, 'must be digits')
    .nullish(),
});

/** Fields shared by enrolment and card check, validated in one schema so every bad field is reported. */
const v1CardFields = {
  name: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  number: v1NumberSchema,
  expMonth,
  expYear: yearSchema,
  merchant: merchantSchema.nullish(),
};

const EnrollAccountUpdaterCardInput = builder.inputType('EnrollAccountUpdaterCardInput', {
  description: 'A card to enrol in the account updater (v1 POST /cards).',
  fields: (t) => ({
    name: t.string({ description: 'Cardholder name.' }),
    number: t.string({ description: 'Card number (spaces and hyphens ignored) or alias.' }),
    expMonth: t.int({ description: 'Expiry month, 1-12.' }),
    expYear: t.int({ description: 'Expiry year as the card shows it (two digits, or four).' }),
    billingAddress: t.field({ type: BillingAddressInput, required: false, description: 'Billing address.' }),
    merchant: t.field({ type: MerchantInput, required: false, description: 'Merchant of the enrolment.' }),
  }),
  validate: z.looseObject({ ...v1CardFields, billingAddress: billingAddressSchema.nullish() }),
});

const CheckAccountUpdaterCardInput = builder.inputType('CheckAccountUpdaterCardInput', {
  description:
    'A card to check for updates without enrolment (v1 POST /card-check), within the limits the provider documents for a card check; a value outside them is an `invalid-input` error on its field and nothing is sent.',
  fields: (t) => ({
    name: t.string({ description: "Card owner's full name, at most 255 characters." }),
    number: t.string({
      description:
        'Card number (13-19 digits; spaces and hyphens ignored) or format-preserving alias; the card check takes no `tok_` alias.',
    }),
    expMonth: t.int({ description: 'Expiry month, 1-12.' }),
    expYear: t.int({ description: 'Expiry year, two digits (0-99).' }),
    cvv: t.string({
      required: false,
      description: 'Card security code, 3 or 4 digits. Sent upstream, never returned.',
    }),
    merchant: t.field({ type: MerchantInput, required: false, description: 'Merchant of the check.' }),
  }),
  validate: z.looseObject({
    ...v1CardFields,
    name: z
      .string()
      .min(1, 'must not be empty')
      .max(CARD_CHECK_NAME_MAX_LENGTH, `must be at most ${CARD_CHECK_NAME_MAX_LENGTH} characters`),
    number: cardCheckNumberSchema,
    expYear: twoDigitYear,
    cvv: cvc.nullish(),
  }),
});

const CardCheckResultType = builder.objectRef<CardCheckResult>('CardCheckResult').implement({
  description:
    'Latest card data from a stateless check. Never echoes the CVV, nor the plain card number in the provider answer to a check.',
  fields: (t) => ({
    name: t.exposeString('name', { nullable: true, description: "Card owner's name." }),
    number: t.exposeString('numberAlias', {
      nullable: true,
      description:
        'Alias of the current number (of the new number when it changed), when the provider answers with an alias; null when it answers with the plain card number, which never leaves the gateway: see `maskedNumber`.',
    }),
    maskedNumber: t.expose('maskedNumber', {
      type: 'MaskedPan',
      nullable: true,
      description:
        'The current card number (the new one when it changed) masked to its BIN and last four, e.g. `557349******7312`; null when the provider answered a `tok_` alias.',
    }),
    expMonth: t.exposeInt('expMonth', { description: 'Current expiry month.' }),
    expYear: t.exposeInt('expYear', { description: 'Current expiry year.' }),
    merchant: t.field({
      type: MerchantType,
      nullable: true,
      description: 'Merchant of the check.',
      resolve: (r) => r.merchant ?? null,
    }),
    failureCode: t.exposeString('failureCode', {
      nullable: true,
      description: 'Why no update could be fetched, e.g. `account-updater-not-supported`.',
    }),
    event: t.field({
      type: CardEventTypeEnum,
      nullable: true,
      description: 'Outcome, e.g. `VALID` or `UPDATED`.',
      resolve: (r) => knownEventType(r.event),
    }),
  }),
});

/** Errors of enrolment and card check (spec "Errors"), besides the defaults of every field. */
const V1_ERRORS = [
  InputValidationError,
  CardBrandNotSupportedError,
  AccountUpdaterNotSupportedError,
  MerchantNotFoundError,
];

cardQueryField(
  'accountUpdaterCard',
  AccountUpdaterCardRef,
  'accountUpdaterCard',
  'A v1 card by id with the most current data from issuers (v1 GET /cards/{card_id}).',
);

builder.mutationField('enrollAccountUpdaterCard', (t) =>
  t.field({
    type: AccountUpdaterCardRef,
    description:
      'Enrols a card in the account updater (v1 POST /cards). Asynchronous: the card may come back `ENROLLING`; a `cardEvents` notification follows when enrolment completes.',
    authScopes: { scope: 'cards:write' },
    errors: { types: [...V1_ERRORS] },
    args: {
      input: t.arg({ type: EnrollAccountUpdaterCardInput, description: 'The card to enrol.' }),
      vaultId: t.arg.string(vaultIdArg),
    },
    resolve: (_root, { input, vaultId }, context) =>
      inVault(context, vaultId, async (vault) => {
        const card = await context.upstream.accountUpdater.enrollCard(vault, {
          ...v1CardRequest(input),
          ...(input.billingAddress ? { billingAddress: stripNulls(input.billingAddress) } : {}),
        });
        // An enrolment may answer an existing card (200): every replica drops its cached read.
        await context.cardReads.changed(vault, card.id);
        return card;
      }),
  }),
);

builder.mutationField('checkAccountUpdaterCard', (t) =>
  t.field({
    type: CardCheckResultType,
    description:
      'Stateless check of a card for updates (v1 POST /card-check); nothing is enrolled or stored.',
    authScopes: { scope: 'cards:write' },
    errors: { types: [...V1_ERRORS] },
    args: {
      input: t.arg({ type: CheckAccountUpdaterCardInput, description: 'The card to check.' }),
      vaultId: t.arg.string(vaultIdArg),
    },
    resolve: (_root, { input, vaultId }, context) =>
      context.upstream.accountUpdater.checkCard(vaultOf(context, vaultId), {
        ...v1CardRequest(input),
        ...(input.cvv ? { cvv: input.cvv } : {}),
      }),
  }),
);
