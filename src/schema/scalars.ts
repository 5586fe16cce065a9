import { GraphQLError, Kind, type ValueNode } from 'graphql';
import { builder } from './builder.ts';

/** Free-form JSON (card metadata, spec "Card": `data.meta`). Input must be a JSON object. */
builder.scalarType('JSON', {
  description: 'Any JSON value; as input, card metadata must be an object.',
  serialize: (value) => value,
  parseValue: (value) => value,
});

function stringLiteral(ast: ValueNode, scalar: string): string {
  if (ast.kind !== Kind.STRING) throw new GraphQLError(`${scalar} must be a string`);
  return ast.value;
}

/**
 * A string scalar whose values match `pattern`, as input (variables and literals) and as output.
 * Errors read `<name> must be <rule>`; `output` converts what a resolver returned to the text to
 * check, and `outputError` replaces the message for a resolver's bad value.
 */
function patternScalar(
  name: 'DateTime' | 'YearMonth',
  options: {
    description: string;
    pattern: RegExp;
    rule: string;
    output?: (value: unknown) => unknown;
    outputError?: string;
  },
): void {
  const inputError = `${name} must be ${options.rule}`;
  const checked = (value: unknown, message: string): string => {
    if (typeof value !== 'string' || !options.pattern.test(value)) throw new GraphQLError(message);
    return value;
  };
  builder.scalarType(name, {
    description: options.description,
    serialize: (value) => checked(options.output?.(value) ?? value, options.outputError ?? inputError),
    parseValue: (value) => checked(value, inputError),
    parseLiteral: (ast) => checked(stringLiteral(ast, name), inputError),
  });
}

/** ISO 8601 date-time with a zone (spec timestamps: `created_at`, `updated_at`, `timestamp`). */
patternScalar('DateTime', {
  description: 'An ISO 8601 date-time with a zone designator, e.g. `2026-11-21T05:00:00.000Z`.',
  pattern: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/,
  rule: 'an ISO 8601 date-time',
  output: (value) => (value instanceof Date ? value.toISOString() : String(value)),
  outputError: 'DateTime cannot represent a value that is not an ISO 8601 date-time',
});

/** Year and month, `YYYY-MM` (spec "Network token": `expires_at`). */
patternScalar('YearMonth', {
  description: 'A year and month, `YYYY-MM` (network token and card expiry).',
  pattern: /^\d{4}-(0[1-9]|1[0-2])$/,
  rule: 'YYYY-MM',
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
