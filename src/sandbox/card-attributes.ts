import { readFileSync } from 'node:fs';
import { z } from 'zod';
import {
  CARD_ATTRIBUTE_BRANDS,
  CARD_CATEGORIES,
  CARD_COMMERCIAL_TYPES,
  CARD_TYPES,
  type cardAttributesResult,
  DOCUMENTED_BRAND_NAMES,
  DOCUMENTED_LOOKUP_ALIAS_PATTERN,
  DOCUMENTED_LOOKUP_DIGITS_PATTERN,
  LOOKUP_DIGITS_PATTERN,
  LUHN_FREE_MAX_DIGITS,
  PREPAID_TYPES,
  REGULATION_STATUSES,
} from '../contracts/card-attributes.ts';
import type { SandboxWire } from '../contracts/wire-reading.ts';
import { type CardBrand, cardBrandOf, isLuhnValid } from '../lib/pan.ts';
import { badRequest, httpError, JSON_MEDIA_TYPE, type Router, readJsonBody, sendJson } from './http.ts';
import type { TimerSet } from './timers.ts';
import type { AliasVault } from './vault.ts';

/**
 * Card attributes lookup (`{card_enrichment_url}` = `/card-attributes`, application/json): the card
 * product of a BIN, a PAN or a `tok_` alias, answered from the BIN table shipped with the sandbox
 * (`bin-table.json`). Spec "Card attributes" and "Card attributes result"; gap decisions "Card
 * attributes".
 */

/** Path prefix of the area in the sandbox (contract §1). */
export const CARD_ATTRIBUTES_PREFIX = '/card-attributes';

/** Brand names of the table, one per card family of `src/lib/pan.ts`. */
export const BRAND_NAMES: Readonly<Record<CardBrand, (typeof CARD_ATTRIBUTE_BRANDS)[number]>> = {
  visa: 'VISA',
  mastercard: 'MASTERCARD',
  amex: 'AMERICAN EXPRESS',
  discover: 'DISCOVER',
  diners: 'DINERS CLUB',
  jcb: 'JCB',
};

export { CARD_CATEGORIES, CARD_TYPES };

/** One row of `bin-table.json`, in wire names; `bin` is 6 or 8 digits as a string. */
const binEntrySchema = z.strictObject({
  bin: z.string().regex(/^[1-9]\d{5}(?:\d{2})?$/, 'must be 6 or 8 digits'),
  brand: z.enum(CARD_ATTRIBUTE_BRANDS),
  issuing_organization: z.string().min(1),
  card_type: z.enum(CARD_TYPES),
  card_category: z.enum(CARD_CATEGORIES),
  issuing_country_name: z.string().min(1),
  issuing_country_code: z.string().regex(/^[A-Z]{2}$/, 'must be ISO 3166-1 alpha-2'),
  maximum_pan_length: z.int().min(12).max(19),
  card_commercial_type: z.enum(CARD_COMMERCIAL_TYPES),
  regulation_status: z.enum(REGULATION_STATUSES),
  prepaid_type: z.enum(PREPAID_TYPES).optional(),
  cobadged_brands: z.string().min(1).optional(),
});

const binTableSchema = z.object({
  version: z.int().min(19_000_101).max(99_991_231),
  comment: z.string().optional(),
  entries: z.array(binEntrySchema).min(1),
});

/** A row of the BIN table (wire names of the spec's "Card attributes result", `bin` as digits). */
export type BinEntry = z.infer<typeof binEntrySchema>;

/** The "Card attributes result" as the sandbox answers it, typed by the contract. */
export type CardAttributesResult = z.input<typeof cardAttributesResult>;

/** A loaded BIN table: its data set `version` (`YYYYMMDD`) and its rows by prefix. */
export interface BinTable {
  version: number;
  entries: ReadonlyMap<string, BinEntry>;
}

function isCalendarDate(yyyymmdd: number): boolean {
  const text = String(yyyymmdd);
  const date = new Date(`${text.slice(0, 4)}-${text.slice(4, 6)}-${text.slice(6, 8)}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10).replaceAll('-', '') === text;
}

/**
 * Validates a BIN table document (the shape of `bin-table.json`).
 * Rules beyond the field types: `version` is a calendar date `YYYYMMDD`; prefixes are unique; each
 * entry's `brand` is the family `cardBrandOf` gives its prefix; every 8-digit prefix has a 6-digit
 * parent of the same brand (so a raw 6-digit BIN always finds an answer); `prepaid_type` is present
 * exactly when `card_category` is `PREPAID`.
 * @throws Error naming the first broken rule and the prefix concerned (table data, never card data).
 */
export function parseBinTable(document: unknown): BinTable {
  const parsed = binTableSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`invalid BIN table at /${issue.path.join('/')}: ${issue.message}`);
  }
  const { version, entries: rows } = parsed.data;
  if (!isCalendarDate(version)) throw new Error('invalid BIN table: version must be a YYYYMMDD date');
  const entries = new Map<string, BinEntry>();
  for (const entry of rows) {
    if (entries.has(entry.bin)) throw new Error(`invalid BIN table: prefix ${entry.bin} is listed twice`);
    const family = cardBrandOf(entry.bin);
    if (!family || BRAND_NAMES[family] !== entry.brand) {
      throw new Error(`invalid BIN table: prefix ${entry.bin} is not in the ${entry.brand} range`);
    }
    if ((entry.card_category === 'PREPAID') !== (entry.prepaid_type !== undefined)) {
      throw new Error(`invalid BIN table: prefix ${entry.bin} needs prepaid_type exactly when PREPAID`);
    }
    entries.set(entry.bin, entry);
  }
  for (const entry of entries.values()) {
    if (entry.bin.length !== 8) continue;
    const parent = entries.get(entry.bin.slice(0, 6));
    if (!parent || parent.brand !== entry.brand) {
      throw new Error(`invalid BIN table: prefix ${entry.bin} has no 6-digit parent of its brand`);
    }
  }
  return { version, entries };
}

let shippedTable: BinTable | undefined;

/**
 * The BIN table shipped with the sandbox (`src/sandbox/bin-table.json`), read and validated once.
 * @throws Error when the file is missing or breaks a rule of {@link parseBinTable}.
 */
export function loadShippedBinTable(): BinTable {
  shippedTable ??= parseBinTable(
    JSON.parse(readFileSync(new URL('./bin-table.json', import.meta.url), 'utf8')) as unknown,
  );
  return shippedTable;
}

/**
 * Finds the table row of a card number: the 8-digit prefix first (when the number has 8 digits or
 * more), then the 6-digit one, so the longer prefix wins.
 * @param digits 6 to 19 digits, separators removed.
 * @returns the row, or undefined when neither prefix is in the table.
 */
export function lookupBin(table: BinTable, digits: string): BinEntry | undefined {
  return (
    (digits.length >= 8 ? table.entries.get(digits.slice(0, 8)) : undefined) ??
    table.entries.get(digits.slice(0, 6))
  );
}

/**
 * ISO 3166-1 alpha-3 codes of the table's countries: the documented answer writes
 * `issuing_country_code` in alpha-3 (`USA`, sandbox contract §8), the table in alpha-2.
 */
export const ALPHA3_COUNTRY_CODES: Readonly<Record<string, string>> = {
  AU: 'AUS',
  BE: 'BEL',
  BR: 'BRA',
  CA: 'CAN',
  CH: 'CHE',
  DE: 'DEU',
  DK: 'DNK',
  ES: 'ESP',
  FR: 'FRA',
  GB: 'GBR',
  IE: 'IRL',
  IN: 'IND',
  IT: 'ITA',
  JP: 'JPN',
  KR: 'KOR',
  MX: 'MEX',
  PL: 'POL',
  SE: 'SWE',
  SG: 'SGP',
  US: 'USA',
};

/**
 * The answer body of a table row: in the specification's reading as the table holds it; in the
 * documented one (sandbox contract §8) with `brand` in mixed case (`Visa`) and `issuing_country_code`
 * in alpha-3 (`USA`).
 */
export function cardAttributesOf(
  table: BinTable,
  entry: BinEntry,
  wire: SandboxWire = 'specification',
): CardAttributesResult {
  const { bin, prepaid_type, cobadged_brands, ...attributes } = entry;
  const documented =
    wire === 'documented'
      ? {
          brand: DOCUMENTED_BRAND_NAMES[entry.brand],
          issuing_country_code:
            ALPHA3_COUNTRY_CODES[entry.issuing_country_code] ?? entry.issuing_country_code,
        }
      : {};
  return {
    bin: Number(bin),
    ...attributes,
    ...documented,
    version: table.version,
    ...(prepaid_type !== undefined ? { prepaid_type } : {}),
    ...(cobadged_brands !== undefined ? { cobadged_brands } : {}),
  };
}

/** Dependencies of {@link registerCardAttributeRoutes}. */
export interface CardAttributeDeps {
  aliases: AliasVault;
  /** The table answering lookups; {@link loadShippedBinTable} by default. */
  binTable?: BinTable;
  /** The wire reading to answer in (`SandboxOptions.wire`); `documented` when absent. */
  wire?: SandboxWire;
  /**
   * Milliseconds each lookup waits before answering (`SandboxOptions.cardAttributesDelayMs`), on
   * `timers` so `stop()` cancels the wait; none when absent or 0.
   */
  delay?: { ms: number; timers: TimerSet };
}

/** Detail of the documented 422 (provider-docs `examples.json`, card attributes). */
export const BIN_NOT_DISCERNED_DETAIL = 'We could not discern a bin from the input provided';

/**
 * Registers `POST /card-attributes/attributes/attributes` (`card-attributes:basic`), body
 * `{"number": string}`:
 * - 200 {@link CardAttributesResult}, `application/json` (documented wire: mixed-case `brand`,
 *   alpha-3 `issuing_country_code`).
 * - 400 `bad-request` (pointer `/number`): `number` absent, not a string, not of the pattern (the
 *   documented `(^(\d[\s-]?){6,19}$|tok_.+)`, or the specification's single separators between
 *   digits), or a PAN of more than 11 digits failing Luhn; with the empty pointer when the body is
 *   not a JSON object.
 * - documented wire: 422 `bin-not-discerned` ({@link BIN_NOT_DISCERNED_DETAIL}) for a `tok_` alias the
 *   caller's vault does not hold or a number whose BIN the table does not know;
 *   specification: 404 `not-found` for both.
 * Details never carry the number.
 * @throws Error at registration when the shipped table is invalid (see {@link loadShippedBinTable}).
 */
export function registerCardAttributeRoutes(router: Router, deps: CardAttributeDeps): void {
  const table = deps.binTable ?? loadShippedBinTable();
  const wire = deps.wire ?? 'documented';
  const digitsPattern = wire === 'documented' ? DOCUMENTED_LOOKUP_DIGITS_PATTERN : LOOKUP_DIGITS_PATTERN;
  const unknown = (detail: string) =>
    wire === 'documented'
      ? httpError(422, 'bin-not-discerned', BIN_NOT_DISCERNED_DETAIL)
      : httpError(404, 'not-found', detail);
  router.add(
    'POST',
    `${CARD_ATTRIBUTES_PREFIX}/attributes/attributes`,
    'card-attributes:basic',
    async ({ req, res, auth }) => {
      const body = await readJsonBody(req, JSON_MEDIA_TYPE);
      if (typeof body !== 'object' || body === null || Array.isArray(body)) {
        throw badRequest('request body must be a JSON object', '');
      }
      const number = (body as Record<string, unknown>).number;
      if (number === undefined || number === null) throw badRequest('number: is required', '/number');
      if (typeof number !== 'string') throw badRequest('number: must be a string', '/number');

      let digits: string;
      if (
        number.startsWith('tok_') &&
        (wire === 'documented' ? DOCUMENTED_LOOKUP_ALIAS_PATTERN.test(number) : true)
      ) {
        const pan = deps.aliases.resolvePan(auth.vault, number);
        if (!pan) throw unknown('number: no card with this alias in the vault');
        digits = pan;
      } else if (digitsPattern.test(number)) {
        digits = number.replace(/[\s-]/g, '');
        if (digits.length > LUHN_FREE_MAX_DIGITS && !isLuhnValid(digits)) {
          throw badRequest(
            'number: a card number of more than 11 digits must pass the Luhn check',
            '/number',
          );
        }
      } else {
        throw badRequest(
          wire === 'documented'
            ? 'number: must be 6 to 19 digits (each optionally followed by a space or hyphen) or a tok_ alias'
            : 'number: must be 6 to 19 digits (single spaces or hyphens allowed between them) or a tok_ alias',
          '/number',
        );
      }

      const entry = lookupBin(table, digits);
      // A slow lookup (tests of incremental delivery): the answer waits, the checks above did not.
      const delay = deps.delay;
      if (delay && delay.ms > 0)
        await new Promise<void>((resolve) => delay.timers.schedule(delay.ms, resolve));
      if (!entry) throw unknown('no card attributes are known for this BIN');
      sendJson(res, 200, cardAttributesOf(table, entry, wire), JSON_MEDIA_TYPE);
    },
  );
}
