import { InputValidationError } from '@pothos/plugin-validation';
import {
  AccountUpdaterNotSupportedError,
  CardBrandNotSupportedError,
  CardNotFoundError,
  type GatewayError,
  UpstreamServiceError,
} from '../errors.ts';
import { InvalidArgumentError, type UpstreamArea, UpstreamError } from './errors.ts';

/**
 * The client boundary: where a failure of an upstream client (src/upstream/<area>/client.ts, which
 * rejects with {@link UpstreamError} or {@link InvalidArgumentError}) becomes the typed error GraphQL
 * returns as data (src/errors.ts). Each area declares one {@link UpstreamErrorTable}; `createUpstream`
 * wraps every client with {@link withGatewayErrors}, so resolvers and loaders receive typed errors
 * and never translate them again.
 */

/** What the failed call was about, read from its arguments (see {@link withGatewayErrors}). */
export interface UpstreamCallFacts {
  /** The id the call named (card id, PAN alias, organization id): its second argument when a string. */
  subject?: string;
  /** Whether the call sent the client's input object (its second argument when an object). */
  sentInput: boolean;
  /** The client method that failed (e.g. `listInvites`), for rules that hold for one endpoint only. */
  method?: string;
}

/**
 * One row of an area's table: an upstream failure whose `code` (and `status`, and the client
 * `method`, when given) matches becomes `error(facts)`. Rows are tried in order; the first match wins.
 */
export interface UpstreamErrorRule {
  status?: number;
  code?: string;
  /** The client method the row holds for (e.g. `listMembers`); every method when absent. */
  method?: string;
  error: (facts: UpstreamCallFacts) => GatewayError;
}

/**
 * The card failures both card areas (card interface and account updater v1) answer with the same
 * codes: 404 `card-not-found` (the subject is the card id), 422 `card-brand-not-supported` and 422
 * `account-updater-not-supported`. Each area's table starts with them.
 */
export const CARD_ERROR_RULES: readonly UpstreamErrorRule[] = [
  { code: 'card-not-found', error: ({ subject }) => new CardNotFoundError(subject ?? 'requested') },
  { code: 'card-brand-not-supported', error: () => new CardBrandNotSupportedError() },
  { code: 'account-updater-not-supported', error: () => new AccountUpdaterNotSupportedError() },
];

/**
 * An area's declarative mapping from upstream status/code to gateway error class. `rules` apply to
 * failures of that area only: a failure of the token endpoint (area `oauth`) during the same call is
 * never, say, a missing card.
 */
export interface UpstreamErrorTable {
  area: UpstreamArea;
  rules: readonly UpstreamErrorRule[];
  /**
   * Request members whose input field is not their camelCased name, wire name → input field name
   * (e.g. `vgs_merchant_id` → `serviceMerchantId`), for errors whose `source.pointer` names them.
   */
  inputFields?: Readonly<Record<string, string>>;
}

/**
 * Name of the argument holding the client's input object in every mutation that sends one upstream
 * (`createCard(input:)`, `enrollAccountUpdaterCard(input:)`, …): an upstream 400 naming a member
 * becomes an InputValidationError on that input field.
 */
export const INPUT_ARGUMENT = 'input';

/**
 * Maps one failure of an upstream client through the area's table:
 * 1. an upstream 400 with `source.pointer` of a call that sent input → InputValidationError on the
 *    field (`/data/attributes/exp_month` → `['input', 'expMonth']`): the upstream refused a member the
 *    gateway cannot check itself (e.g. a merchant the vault requires);
 * 2. the first matching row of `table` (failures of the table's area only); then an upstream 422
 *    with `source.pointer` of a call that sent input (e.g. `invalid-format` of `/exp_year`) →
 *    InputValidationError on the field, not `unprocessable` (issue 19);
 * 3. any other upstream failure → {@link UpstreamServiceError} (upstream code, `retryable`, status);
 * 4. a malformed card id refused before sending ({@link InvalidArgumentError} `cardId`) →
 *    CardNotFoundError, as the upstream would answer;
 * anything else is returned unchanged (and surfaces as a masked GraphQL error).
 */
export function toGatewayError(error: unknown, table: UpstreamErrorTable, facts: UpstreamCallFacts): Error {
  if (error instanceof UpstreamError) {
    const onField = (pointer: string) =>
      new InputValidationError({
        issues: [
          {
            message: error.detail ?? 'is invalid',
            path: [INPUT_ARGUMENT, ...inputPathOf(pointer, table.inputFields)],
          },
        ],
      });
    if (error.status === 400 && error.pointer && facts.sentInput) return onField(error.pointer);
    const rule = table.rules.find(
      (row) =>
        error.area === table.area &&
        (row.code === undefined || row.code === error.code) &&
        (row.status === undefined || row.status === error.status) &&
        (row.method === undefined || row.method === facts.method),
    );
    if (rule) return rule.error(facts);
    if (error.status === 422 && error.pointer && facts.sentInput && error.area === table.area) {
      return onField(error.pointer);
    }
    return new UpstreamServiceError(
      upstreamMessage(error),
      error.code,
      error.retryable,
      error.status ?? null,
    );
  }
  if (error instanceof InvalidArgumentError && error.argument === 'cardId') {
    return new CardNotFoundError(facts.subject ?? 'requested');
  }
  // A request member the client refused before sending (`input.<field>…`, strict writer).
  if (error instanceof InvalidArgumentError && error.argument.startsWith(`${INPUT_ARGUMENT}.`)) {
    return new InputValidationError({
      issues: [{ message: 'is not accepted by the provider', path: error.argument.split('.') }],
    });
  }
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * The client with every method's rejection mapped by {@link toGatewayError} through `table`. Methods
 * take `(vault, subject | input, …)`: a string second argument is the call's subject (for
 * CardNotFoundError), an object one the client's input. Same type as the client.
 */
export function withGatewayErrors<Client extends object>(client: Client, table: UpstreamErrorTable): Client {
  return new Proxy(client, {
    get(target, key) {
      const member: unknown = Reflect.get(target, key, target);
      if (typeof member !== 'function' || key === 'constructor') return member;
      return (...args: unknown[]) => {
        const second = args[1];
        const facts: UpstreamCallFacts = {
          ...(typeof second === 'string' ? { subject: second } : {}),
          sentInput: typeof second === 'object' && second !== null,
          ...(typeof key === 'string' ? { method: key } : {}),
        };
        return (member.apply(target, args) as Promise<unknown>).catch((error: unknown) => {
          throw toGatewayError(error, table, facts);
        });
      };
    },
  });
}

/**
 * `/data/attributes/exp_month` or `/merchant/service_merchant_id` → `['expMonth']`,
 * `['merchant', 'serviceMerchantId']`; a member named in `fields` takes its input field name from it.
 */
function inputPathOf(pointer: string, fields: Readonly<Record<string, string>> = {}): string[] {
  const segments = pointer.split('/').slice(1);
  const members = segments[0] === 'data' && segments[1] === 'attributes' ? segments.slice(2) : segments;
  return members.map(
    (segment) =>
      (Object.hasOwn(fields, segment) ? fields[segment] : undefined) ??
      segment.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase()),
  );
}

function upstreamMessage(error: UpstreamError): string {
  const where = `${error.area} answered ${error.status === undefined ? 'nothing' : error.status}`;
  return error.detail ? `${where}: ${error.detail}` : `${where} (${error.code})`;
}
