import { GraphQLError, Kind, type ValueNode } from 'graphql';
import { builder } from './builder.ts';

/** Free-form JSON (card metadata, spec "Card": `data.meta`). Input must be a JSON object. */
builder.scalarType('JSON', {
  description: 'Any JSON value; as input, card metadata must be an object.',
  serialize: (value) => value,
  parseValue: (value) => value,
});

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;

function stringLiteral(ast: ValueNode, scalar: string): string {
  if (ast.kind !== Kind.STRING) throw new GraphQLError(`${scalar} must be a string`);
  return ast.value;
}

/** ISO 8601 date-time with a zone (spec timestamps: `created_at`, `updated_at`, `timestamp`). */
builder.scalarType('DateTime', {
  description: 'An ISO 8601 date-time with a zone designator, e.g. `2026-11-21T05:00:00.000Z`.',
  serialize: (value) => {
    const text = value instanceof Date ? value.toISOString() : String(value);
    if (!ISO_DATE_TIME.test(text))
      throw new GraphQLError('DateTime cannot represent a value that is not an ISO 8601 date-time');
    return text;
  },
  parseValue: (value) => {
    if (typeof value !== 'string' || !ISO_DATE_TIME.test(value))
      throw new GraphQLError('DateTime must be an ISO 8601 date-time');
    return value;
  },
  parseLiteral: (ast) => {
    const value = stringLiteral(ast, 'DateTime');
    if (!ISO_DATE_TIME.test(value)) throw new GraphQLError('DateTime must be an ISO 8601 date-time');
    return value;
  },
});

const YEAR_MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/** Year and month, `YYYY-MM` (spec "Network token": `expires_at`). */
builder.scalarType('YearMonth', {
  description: 'A year and month, `YYYY-MM` (network token and card expiry).',
  serialize: (value) => {
    if (typeof value !== 'string' || !YEAR_MONTH.test(value))
      throw new GraphQLError('YearMonth must be YYYY-MM');
    return value;
  },
  parseValue: (value) => {
    if (typeof value !== 'string' || !YEAR_MONTH.test(value))
      throw new GraphQLError('YearMonth must be YYYY-MM');
    return value;
  },
  parseLiteral: (ast) => {
    const value = stringLiteral(ast, 'YearMonth');
    if (!YEAR_MONTH.test(value)) throw new GraphQLError('YearMonth must be YYYY-MM');
    return value;
  },
});

/**
 * A card number that can never carry more than its BIN and last four: whatever reaches this scalar
 * is re-masked on output (digits beyond the first six and last four become `*`), so a resolver bug
 * cannot leak a PAN through it. Not accepted as input.
 */
builder.scalarType('MaskedPan', {
  description:
    'A masked card number: at most the BIN (first six digits) and the last four are visible, e.g. `510026******1001`.',
  serialize: (value) => {
    const compact = String(value).replace(/[ -]/g, '');
    if (!/^[\d*Xx•]{12,19}$/.test(compact)) throw new GraphQLError('MaskedPan cannot represent this value');
    return `${compact.slice(0, 6)}${'*'.repeat(compact.length - 10)}${compact.slice(-4)}`;
  },
  parseValue: () => {
    throw new GraphQLError('MaskedPan is output only');
  },
  parseLiteral: () => {
    throw new GraphQLError('MaskedPan is output only');
  },
});
