import { createHash } from 'node:crypto';
import { type CardBrand, luhnCheckDigit } from '../lib/pan.ts';

/**
 * Test cards of contract §5 as data, and the scenario lookups the handlers use. The final four digits
 * of a PAN name its scenario within the table of the operation (contract §5); a number whose last four
 * name no scenario of that table is a normal card.
 */

/** The §5 table a test card belongs to. */
export type TestCardTable =
  | 'enrolment-immediate'
  | 'enrolment-webhook'
  | 'card-check'
  | 'card-interface-fault'
  | 'network-token';

/** One row-cell of contract §5: a test PAN and what it simulates. */
export interface SandboxTestCard {
  /** Full test PAN (Luhn-valid). Tests use the list to check that no log line leaks one. */
  pan: string;
  brand: CardBrand;
  table: TestCardTable;
  /** The scenario number: the PAN's last four digits. */
  scenario: string;
  /** The expected outcome as written in the contract: an event, an error code or an answer. */
  outcome: string;
}

function cards(table: TestCardTable, rows: [string, string, string[]][]): SandboxTestCard[] {
  return rows.flatMap(([scenario, outcome, pans]) =>
    pans.map((pan) => ({ pan, brand: brandOfTestPan(pan), table, scenario, outcome })),
  );
}

function brandOfTestPan(pan: string): CardBrand {
  if (pan.startsWith('4')) return 'visa';
  if (pan.startsWith('5')) return 'mastercard';
  if (pan.startsWith('37')) return 'amex';
  return 'discover';
}

/** Every test card of contract §5.1 to §5.5. */
export const SANDBOX_TEST_CARDS: readonly SandboxTestCard[] = Object.freeze([
  ...cards('enrolment-immediate', [
    ['1001', 'au_card.updated', ['5100260000391001', '4000210000791001']],
    ['1002', 'au_card.updated', ['5100260000791002']],
    ['1003', 'au_card.enrolled', ['5100260000291003', '4000210000691003']],
    ['1004', 'au_card.closed', ['5100260000691004', '4000210000191004']],
    ['1005', 'au_card.expired', ['4000210000591005']],
    ['1006', 'au_card.contact_cardholder_advice', ['4000210000091006']],
    ['1007', 'au_card.non_participating', ['5100260000091007', '4000210000991007']],
    ['1008', 'au_card.unknown', ['5100260000991008']],
    ['1099', 'account-updater-not-supported', ['5100260000991099']],
  ]),
  ...cards('enrolment-webhook', [
    ['2001', 'au_card.enrolled', ['5100260000292001', '4000210000692001']],
    ['2002', 'au_card.updated', ['5100260000692002', '4000210000192002']],
    ['2003', 'au_card.expired', ['5100260000192003', '4000210000592003']],
    ['2004', 'au_card.closed', ['5100260000592004', '4000210000092004']],
    ['2005', 'au_card.non_participating', ['5100260000092005', '4000210000992005']],
    ['2006', 'au_card.unknown', ['5100260000992006', '4000210000492006']],
    ['2007', 'au_card.contact_cardholder_advice', ['4000210000892007']],
    ['2008', 'au_card.opt_out', ['4000210000392008']],
  ]),
  ...cards('card-check', [
    [
      '3001',
      'au_card.updated',
      ['5100260000193001', '4000210000593001', '378282000193001', '6011000000493001'],
    ],
    ['3002', 'au_card.updated', ['5100260000593002', '4000210000093002']],
    [
      '3003',
      'au_card.valid',
      ['5100260000093003', '4000210000993003', '378282000093003', '6011000000393003'],
    ],
    ['3004', 'au_card.closed', ['5100260000993004', '4000210000493004']],
    ['3005', 'au_card.expired', ['5100260000493005', '4000210000893005']],
    ['3006', 'au_card.contact_cardholder_advice', ['5100260000893006', '4000210000393006']],
    ['3007', 'au_card.non_participating', ['5100260000393007', '4000210000793007']],
  ]),
  ...cards('card-interface-fault', [
    ['4002', 'subscription failed', ['5100260000994002', '4000210000494002']],
    ['4401', '401', ['5100260000394401']],
    ['4403', '403', ['5100260000294403']],
    ['4500', '500', ['5100260000394500']],
    ['4502', '502', ['5100260000294502']],
    ['4503', '503', ['5100260000694503']],
    ['4504', '504', ['5100260000194504']],
    ['4998', 'hang', ['5100260000794998']],
  ]),
  ...cards('network-token', [
    ['5001', 'ACTIVE', ['5100260000895001', '4000210000395001']],
    ['5002', 'SUSPENDED', ['5100260000395002', '4000210000795002']],
    ['5404', 'declined', ['5100260000095404', '4000210000995404']],
    ['5422', 'card-not-allowed', ['5100260000495422', '4000210000895422']],
    ['5423', 'rejected', ['5100260000895423', '4000210000395423']],
  ]),
]);

/** v1 enrolment outcome of a PAN (contract §5.1, §5.2; gap decisions, account updater v1). */
export type EnrolmentScenario =
  /** State `enrolled` at once with `event`; `update` says what changes in the answer. */
  | { kind: 'immediate'; scenario: string; event: string; update?: 'number' | 'expiry' }
  /** 1099: 422 `account-updater-not-supported`. */
  | { kind: 'error'; scenario: string; code: 'account-updater-not-supported' }
  /** State `enrolling`, then a notification with `event`; 2002 also replaces the number. */
  | { kind: 'webhook'; scenario: string; event: string; update?: 'number' }
  /** A normal card: enrolling, then `au_card.enrolled`, saved. */
  | { kind: 'normal' };

const IMMEDIATE: Record<string, { event: string; update?: 'number' | 'expiry' }> = {
  '1001': { event: 'au_card.updated', update: 'number' },
  '1002': { event: 'au_card.updated', update: 'expiry' },
  '1003': { event: 'au_card.enrolled' },
  '1004': { event: 'au_card.closed' },
  '1005': { event: 'au_card.expired' },
  '1006': { event: 'au_card.contact_cardholder_advice' },
  '1007': { event: 'au_card.non_participating' },
  '1008': { event: 'au_card.unknown' },
};

const WEBHOOK: Record<string, { event: string; update?: 'number' }> = {
  '2001': { event: 'au_card.enrolled' },
  '2002': { event: 'au_card.updated', update: 'number' },
  '2003': { event: 'au_card.expired' },
  '2004': { event: 'au_card.closed' },
  '2005': { event: 'au_card.non_participating' },
  '2006': { event: 'au_card.unknown' },
  '2007': { event: 'au_card.contact_cardholder_advice' },
  '2008': { event: 'au_card.opt_out' },
};

/** Enrolment scenario of a PAN by its last four digits. */
export function enrolmentScenario(pan: string): EnrolmentScenario {
  const last4 = pan.slice(-4);
  if (last4 === '1099') return { kind: 'error', scenario: last4, code: 'account-updater-not-supported' };
  const immediate = IMMEDIATE[last4];
  if (immediate) return { kind: 'immediate', scenario: last4, ...immediate };
  const webhook = WEBHOOK[last4];
  if (webhook) return { kind: 'webhook', scenario: last4, ...webhook };
  return { kind: 'normal' };
}

/**
 * Card check outcome (contract §5.3): `event` is the v1 event name; the card interface uses the same
 * name without the `au_card.` prefix. Cards of no scenario are valid with no change.
 */
export interface CheckScenario {
  scenario?: string;
  event:
    | 'au_card.updated'
    | 'au_card.valid'
    | 'au_card.closed'
    | 'au_card.expired'
    | 'au_card.contact_cardholder_advice'
    | 'au_card.non_participating';
  update?: 'number' | 'expiry';
}

const CHECKS: Record<string, CheckScenario> = {
  '3001': { scenario: '3001', event: 'au_card.updated', update: 'number' },
  '3002': { scenario: '3002', event: 'au_card.updated', update: 'expiry' },
  '3003': { scenario: '3003', event: 'au_card.valid' },
  '3004': { scenario: '3004', event: 'au_card.closed' },
  '3005': { scenario: '3005', event: 'au_card.expired' },
  '3006': { scenario: '3006', event: 'au_card.contact_cardholder_advice' },
  '3007': { scenario: '3007', event: 'au_card.non_participating' },
};

/** Card check scenario of a PAN by its last four digits. */
export function checkScenario(pan: string): CheckScenario {
  return CHECKS[pan.slice(-4)] ?? { event: 'au_card.valid' };
}

/** Card interface behaviour of a PAN (contract §5.4; gap decisions, card interface). */
export type CardInterfaceScenario =
  | { kind: 'fault'; status: number; code: string }
  | { kind: 'hang' }
  | { kind: 'subscription-fails' }
  | { kind: 'normal' };

const FAULTS: Record<string, CardInterfaceScenario> = {
  '4002': { kind: 'subscription-fails' },
  '4401': { kind: 'fault', status: 401, code: 'unauthorized' },
  '4403': { kind: 'fault', status: 403, code: 'forbidden' },
  '4500': { kind: 'fault', status: 500, code: 'server-error' },
  '4502': { kind: 'fault', status: 502, code: 'bad-gateway' },
  '4503': { kind: 'fault', status: 503, code: 'service-unavailable' },
  '4504': { kind: 'fault', status: 504, code: 'gateway-timeout' },
  '4998': { kind: 'hang' },
};

/** Card interface scenario of a PAN by its last four digits. */
export function cardInterfaceScenario(pan: string): CardInterfaceScenario {
  return FAULTS[pan.slice(-4)] ?? { kind: 'normal' };
}

/**
 * Network token provisioning outcome (contract §5.5; gap decisions "Network tokens"): a final state
 * reached after the delay (with a notification), or an immediate error answer. Cards of no scenario
 * end `ACTIVE`.
 */
export type NetworkTokenScenario =
  | { kind: 'final'; scenario?: string; state: 'ACTIVE' | 'SUSPENDED' }
  | {
      kind: 'error';
      scenario: string;
      status: 404 | 422;
      code: 'declined' | 'card-not-allowed' | 'rejected';
    };

const NETWORK_TOKENS: Record<string, NetworkTokenScenario> = {
  '5001': { kind: 'final', scenario: '5001', state: 'ACTIVE' },
  '5002': { kind: 'final', scenario: '5002', state: 'SUSPENDED' },
  '5404': { kind: 'error', scenario: '5404', status: 404, code: 'declined' },
  '5422': { kind: 'error', scenario: '5422', status: 422, code: 'card-not-allowed' },
  '5423': { kind: 'error', scenario: '5423', status: 422, code: 'rejected' },
};

/** Network token scenario of a PAN by its last four digits. */
export function networkTokenScenario(pan: string): NetworkTokenScenario {
  return NETWORK_TOKENS[pan.slice(-4)] ?? { kind: 'final', state: 'ACTIVE' };
}

/**
 * The "new number" of update scenarios: a Luhn-valid PAN of the same length and BIN, derived from the
 * old PAN (so a stateless check answers the same every time) and never equal to it.
 * @param pan digits only, 13 to 19.
 */
export function replacementPan(pan: string): string {
  const middleLength = pan.length - 7;
  let seed = createHash('sha256').update(`replacement:${pan}`).digest();
  for (;;) {
    let middle = '';
    for (let i = 0; middle.length < middleLength; i++) middle += String(seed[i % seed.length]! % 10);
    const prefix = `${pan.slice(0, 6)}${middle}`;
    const candidate = `${prefix}${luhnCheckDigit(prefix)}`;
    if (candidate !== pan) return candidate;
    seed = createHash('sha256').update(seed).digest();
  }
}

/**
 * The card interface's documented notification test cards (sandbox contract §8; provider-docs
 * `examples.json`, card-interface WEBHOOK `test_card_ids`; the provider's "Account Updater Webhooks -
 * Mock Testing" page): PAN → the fixed 52-character card id a card created from it gets, and the
 * `cmp_au_card.*` notification its account updater enrolment (`POST /cards/{id}/card-update-subscriptions`)
 * sends. `update` says what the notification reports changed (`number`: a new number and expiry,
 * `expiry`: a new expiry).
 */
export interface CardManagementNotificationCard {
  cardId: string;
  event:
    | 'cmp_au_card.enrolled'
    | 'cmp_au_card.updated'
    | 'cmp_au_card.expired'
    | 'cmp_au_card.closed'
    | 'cmp_au_card.non_participating';
  update?: 'number' | 'expiry';
}

export const CARD_MANAGEMENT_NOTIFICATION_CARDS: Readonly<Record<string, CardManagementNotificationCard>> = {
  '5100260000079200': {
    cardId: 'CRDnKQt89XXFRQVBEzcRvkhvmhs5rpBvxkv3PbeAFPB52zFFqjCR',
    event: 'cmp_au_card.enrolled',
  },
  '5100260000069201': {
    cardId: 'CRDqKgQbzM9cUWNUAQR5EFu9BrZuSLP5tgqxadbJBJdqgc2iKQ5i',
    event: 'cmp_au_card.updated',
    update: 'number',
  },
  '5100260000059202': {
    cardId: 'CRDoy3ak2ipNi9Fac1tugukHQQi2JWkKdutozwHdd9MWZk9tj31J',
    event: 'cmp_au_card.expired',
    update: 'expiry',
  },
  '5100260000049203': {
    cardId: 'CRDnedYQWP8U4qLZ8dELJTPa3iC3A9ANryT53dAeL8Nmdg21YnZ0',
    event: 'cmp_au_card.closed',
  },
  '5100260000039204': {
    cardId: 'CRDnExWG9xEu5khrT6Xw3pqi6CEtVei3yeogHgD8GG7jR6fxK2af',
    event: 'cmp_au_card.non_participating',
  },
};
