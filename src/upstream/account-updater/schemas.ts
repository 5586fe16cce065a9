import { z } from 'zod';
import { aliasOrMaskedPan, cardIdSchema, isoTimestamp, withoutUndefined } from '../wire.ts';
import type {
  AccountUpdaterCard,
  BillingAddress,
  CardCheckInput,
  CardCheckResult,
  EnrollCardInput,
  Merchant,
  MerchantInput,
} from './types.ts';

/**
 * zod schemas of the account updater v1 answers (`{"data": …}`, spec "Card (account updater, version
 * 1)", "Card check request and result", "Merchant object"), transforming them into domain types, and
 * the request-body builders of enrolment and card check.
 */

/**
 * The v1 `billing_address` object (spec "Card (account updater, version 1)") → {@link BillingAddress}.
 * Shared with network tokens, whose `holder_info.billing_address` has the same members (spec "Network
 * token").
 */
export const billingAddressWire = z
  .object({
    name: z.string().optional(),
    company: z.string().optional(),
    address1: z.string().optional(),
    address2: z.string().optional(),
    city: z.string().optional(),
    region: z.string().optional(),
    country: z.string().optional(),
    postal_code: z.string().optional(),
    phone: z.string().optional(),
  })
  .transform(
    ({ postal_code: postalCode, ...rest }): BillingAddress => withoutUndefined({ ...rest, postalCode }),
  );

const merchantWire = z
  .object({
    service_merchant_id: z.string().optional(),
    sub_merchant_name: z.string().optional(),
    sub_merchant_mid: z.number().optional(),
  })
  .transform(
    (wire): Merchant =>
      withoutUndefined({
        serviceMerchantId: wire.service_merchant_id,
        subMerchantName: wire.sub_merchant_name,
        subMerchantMid: wire.sub_merchant_mid,
      }),
  );

const expMonth = z.number().int().min(1).max(12);
const expYear = z.number().int().min(0);

/** `{"data":{id,name,number,exp_month,exp_year,billing_address,capabilities,…}}` → {@link AccountUpdaterCard}. */
export const cardEnvelopeSchema = z
  .object({
    data: z.object({
      id: cardIdSchema,
      name: z.string(),
      number: aliasOrMaskedPan,
      exp_month: expMonth,
      exp_year: expYear,
      billing_address: billingAddressWire.optional(),
      merchant: merchantWire.optional(),
      capabilities: z.array(z.string()).default([]),
      state: z
        .string()
        .min(1)
        .transform((state) => state.toLowerCase()),
      event: z.string().min(1).optional(),
      created_at: isoTimestamp,
      updated_at: isoTimestamp,
    }),
  })
  .transform(({ data }): AccountUpdaterCard => {
    const card: AccountUpdaterCard = {
      id: data.id,
      name: data.name,
      numberAlias: data.number,
      expMonth: data.exp_month,
      expYear: data.exp_year,
      capabilities: data.capabilities,
      state: data.state,
      createdAt: data.created_at,
      updatedAt: data.updated_at,
    };
    if (data.billing_address !== undefined) card.billingAddress = data.billing_address;
    if (data.merchant !== undefined) card.merchant = data.merchant;
    if (data.event !== undefined) card.event = data.event;
    return card;
  });

/** `{"data":{name,number,exp_month,exp_year,merchant,failure_code,event}}` → {@link CardCheckResult}; `cvv` dropped. */
export const cardCheckEnvelopeSchema = z
  .object({
    data: z.object({
      name: z.string().optional(),
      number: aliasOrMaskedPan,
      exp_month: expMonth,
      exp_year: expYear,
      merchant: merchantWire.optional(),
      failure_code: z.string().min(1).optional(),
      event: z.string().min(1),
    }),
  })
  .transform(({ data }): CardCheckResult => {
    const result: CardCheckResult = {
      numberAlias: data.number,
      expMonth: data.exp_month,
      expYear: data.exp_year,
      event: data.event,
    };
    if (data.name !== undefined) result.name = data.name;
    if (data.merchant !== undefined) result.merchant = data.merchant;
    if (data.failure_code !== undefined) result.failureCode = data.failure_code;
    return result;
  });

function merchantBody(merchant: MerchantInput | undefined) {
  return (
    merchant &&
    withoutUndefined({
      service_merchant_id: merchant.serviceMerchantId,
      sub_merchant_name: merchant.subMerchantName,
    })
  );
}

/**
 * Wire form of a {@link BillingAddress} (v1 `billing_address`, also network token
 * `holder_info.billing_address`); undefined members are omitted.
 */
export function billingAddressBody(address: BillingAddress): Record<string, string> {
  return withoutUndefined({
    name: address.name,
    company: address.company,
    address1: address.address1,
    address2: address.address2,
    city: address.city,
    region: address.region,
    country: address.country,
    postal_code: address.postalCode,
    phone: address.phone,
  }) as Record<string, string>;
}

/** Body of v1 `POST /cards` (spec "Endpoints, Account updater"); undefined members are omitted. */
export function enrollCardBody(input: EnrollCardInput): unknown {
  const address = input.billingAddress;
  return withoutUndefined({
    name: input.name,
    number: input.number,
    exp_month: input.expMonth,
    exp_year: input.expYear,
    billing_address: address && billingAddressBody(address),
    merchant: merchantBody(input.merchant),
  });
}

/** Body of v1 `POST /card-check` (spec "Card check request and result"); undefined members are omitted. */
export function cardCheckBody(input: CardCheckInput): unknown {
  return withoutUndefined({
    name: input.name,
    number: input.number,
    exp_month: input.expMonth,
    exp_year: input.expYear,
    cvv: input.cvv,
    merchant: merchantBody(input.merchant),
  });
}
