import { readFileSync, writeFileSync } from 'node:fs';
import { GraphQLObjectType } from 'graphql';
import * as errors from '../errors.ts';
import { schema } from './index.ts';

/**
 * docs/errors.md, generated from the errors module (src/errors.ts): every exported `GatewayError`
 * class with its `code`, the GraphQL type a client receives it as (its own, or its nearest registered
 * parent's), that type's schema description and the class's documentation; the upstream codes an
 * `UpstreamError` passes through (src/upstream/errors.ts); and `InputValidationError`. Run with
 * `npm run docs:errors`; test/docs/guides.test.ts fails when the committed file differs.
 */

/** One row of the table: a class of src/errors.ts and what a client sees of it. */
interface ErrorRow {
  className: string;
  codes: string[];
  graphqlType: string | null;
  description: string;
}

const ERRORS_SOURCE = new URL('../errors.ts', import.meta.url);
const UPSTREAM_ERRORS_SOURCE = new URL('../upstream/errors.ts', import.meta.url);

/**
 * Codes of the classes whose `code` is chosen where they are thrown rather than fixed per class
 * (their constructor takes it): the union of `OperationLimitError.code`, and for `UpstreamServiceError`
 * the upstream's own code or one of src/upstream/errors.ts's transport codes (listed separately).
 */
const CONSTRUCTED_CODES: Readonly<Record<string, string[]>> = {
  OperationLimitError: ['too-many-ids', 'operation-too-expensive'],
  UpstreamServiceError: ['(the upstream code, see below)'],
};

/** How a client meets the classes that are no GraphQL type. */
const NOT_DATA: Readonly<Record<string, string>> = {
  CardAttributesNotFoundError: 'none: the field answers `null`',
  OperationLimitError: 'none: a GraphQL error, `errors[].extensions.code`',
};

/** Documentation text in words for clients: references to sections of outside documents dropped. */
function plain(text: string): string {
  return text
    .replace(/\s*\((?:sandbox )?contract §[\d, §]+\)/g, '')
    .replace(/;?\s*(?:sandbox )?contract §[\d, §]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The JSDoc text written right above `export class <name>` in `source`, joined into one line. */
function docOf(source: string, name: string): string {
  const at = source.indexOf(`export class ${name} `);
  const end = source.lastIndexOf('*/', at);
  const start = source.lastIndexOf('/**', end);
  if (at < 0 || start < 0 || source.slice(end + 2, at).trim() !== '') return '';
  return plain(
    source
      .slice(start + 3, end)
      .split('\n')
      .map((line) => line.replace(/^\s*\*\s?/, ''))
      .join(' ')
      .replace(/Spec "Errors": /g, 'The provider answers '),
  );
}

/** The GraphQL object type a value of `cls` resolves to: its own name's, else its parent's. */
function graphqlTypeOf(cls: unknown): GraphQLObjectType | null {
  for (let c = cls as { name: string } | null; c?.name; c = Object.getPrototypeOf(c)) {
    const name = c.name === 'UpstreamServiceError' ? 'UpstreamError' : c.name;
    const type = schema.getType(name);
    if (type instanceof GraphQLObjectType) return type;
  }
  return null;
}

/** The `code` of an instance of `cls`, constructed as its throw sites do with placeholder messages. */
function fixedCodeOf(cls: new (...args: never[]) => errors.GatewayError): string | undefined {
  const construct = cls as unknown as new (...args: unknown[]) => errors.GatewayError;
  const code = new construct('requested').code;
  return typeof code === 'string' ? code : undefined;
}

/** Every exported GatewayError class of src/errors.ts, in source order. */
function errorRows(): ErrorRow[] {
  const source = readFileSync(ERRORS_SOURCE, 'utf8');
  const classes = (Object.values(errors) as unknown[]).filter(
    (value): value is new (...args: never[]) => errors.GatewayError =>
      typeof value === 'function' && value.prototype instanceof errors.GatewayError,
  );
  classes.sort((a, b) => source.indexOf(`class ${a.name} `) - source.indexOf(`class ${b.name} `));
  return classes.map((cls) => {
    const constructed = CONSTRUCTED_CODES[cls.name];
    const fixed = constructed ? undefined : fixedCodeOf(cls);
    if (!constructed && fixed === undefined) {
      throw new Error(
        `${cls.name} has no fixed code: add it to CONSTRUCTED_CODES in src/schema/error-codes.ts`,
      );
    }
    const type = graphqlTypeOf(cls);
    return {
      className: cls.name,
      codes: constructed ?? [fixed!],
      graphqlType: type?.name ?? null,
      description: docOf(source, cls.name),
    };
  });
}

/** The transport codes of `UpstreamTransportCode` in src/upstream/errors.ts. */
function upstreamTransportCodes(): string[] {
  const source = readFileSync(UPSTREAM_ERRORS_SOURCE, 'utf8');
  const union = /export type UpstreamTransportCode =([^;]+);/.exec(source)?.[1] ?? '';
  return [...union.matchAll(/'([a-z-]+)'/g)].map((match) => match[1]!);
}

/** Escapes `|` for a Markdown table cell. */
const cell = (text: string) => text.replace(/\|/g, '\\|');

/** docs/errors.md as it should be committed. */
export function errorCodesMarkdown(): string {
  const rows = errorRows();
  const lines = [
    '# Error codes',
    '',
    '<!-- Generated by `npm run docs:errors` from src/errors.ts and the schema; do not edit by hand. -->',
    '',
    'Every root field answers errors as data: a result union of `<Parent><Field>Success { data }` and',
    'error types, each implementing `interface Error { message: String! code: String! }`. Branch on',
    '`code` (stable, machine-readable), never on `message` (for people; it never carries card data).',
    'Every field with errors can answer `UnauthenticatedError`, `ForbiddenError` and `UpstreamError`;',
    'the schema lists the further types of each field. Errors of the transport itself (HTTP statuses,',
    'graphql-ws close codes, persisted-operation refusals) are in [transport-errors.md](transport-errors.md).',
    '',
    '| Code | GraphQL type | Class (src/errors.ts) | Meaning |',
    '|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.codes.map((code) => (code.startsWith('(') ? code : `\`${code}\``)).join(', ')} | ${
          row.graphqlType ? `\`${row.graphqlType}\`` : (NOT_DATA[row.className] ?? 'none')
        } | \`${row.className}\` | ${cell(row.description)} |`,
    ),
    '| `invalid-input` | `InputValidationError` | `InputValidationError` (@pothos/plugin-validation) | One or more input fields are invalid; `issues` names the path of each, never its value. Nothing was sent upstream. |',
    '',
    '## Codes of `UpstreamError`',
    '',
    '`UpstreamError` carries `retryable` and the upstream `status` (null when no answer arrived). Its',
    '`code` is the upstream error code when the provider sent one (`card-not-found`, `invalid-request`, …),',
    'otherwise one of these:',
    '',
    ...upstreamTransportCodes().map((code) => `- \`${code}\``),
    '- from the status of an error answer without a readable error body: `bad-request`, `unauthorized`,',
    '  `forbidden`, `not-found`, `conflict`, `unprocessable`, `rate-limited`, `server-error`,',
    '  `bad-gateway`, `service-unavailable`, `gateway-timeout`, otherwise `http-<status>`.',
    '',
    'What each transport code means is documented beside `UpstreamTransportCode` in',
    '`src/upstream/errors.ts`; the proxy codes are explained in [provider.md](provider.md).',
    '',
  ];
  return lines.join('\n');
}

if (import.meta.main) {
  writeFileSync(new URL('../../docs/errors.md', import.meta.url), errorCodesMarkdown());
}
