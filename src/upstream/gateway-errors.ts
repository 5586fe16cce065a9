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

/**
 * What the failed call was about, as the client that made it says: the failure carries them
 * (`UpstreamError.subject` and `sentInput`, set by the area client from its call; `InvalidArgumentError.subject`).
 */
export interface UpstreamCallFacts {
  /** The id the call named (card id, PAN alias, organization id). */
  subject?: string;
  /** Whether the call sent the client's input. */
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
 * `account-updater-not-supported`; and any 404 of a card read (`GET /cards/{id}`, `getCard` in both
 * clients), whatever its body: a proxy or an older deployment may answer one without a JSON:API
 * error. Each area's table starts with them.
 */
export const CARD_ERROR_RULES: readonly UpstreamErrorRule[] = [
  { code: 'card-not-found', error: ({ subject }) => new CardNotFoundError(subject ?? 'requested') },
  { status: 404, method: 'getCard', error: ({ subject }) => new CardNotFoundError(subject ?? 'requested') },
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

/** The facts a failure of client method `method` carries (see {@link UpstreamCallFacts}). */
export function callFactsOf(error: unknown, method: string | undefined): UpstreamCallFacts {
  const subject =
    error instanceof UpstreamError || error instanceof InvalidArgumentError ? error.subject : undefined;
  return {
    ...(subject === undefined ? {} : { subject }),
    sentInput: error instanceof UpstreamError && error.sentInput,
    ...(method === undefined ? {} : { method }),
  };
}

/**
 * The client with every method's rejection mapped by {@link toGatewayError} through `table`, with the
 * facts the failure carries and the method's name. Same type as the client.
 */
export function withGatewayErrors<Client extends object>(client: Client, table: UpstreamErrorTable): Client {
  return new Proxy(client, {
    get(target, key) {
      const member: unknown = Reflect.get(target, key, target);
      if (typeof member !== 'function' || key === 'constructor') return member;
      const method = typeof key === 'string' ? key : undefined;
      return (...args: unknown[]) =>
        (member.apply(target, args) as Promise<unknown>).catch((error: unknown) => {
          throw toGatewayError(error, table, callFactsOf(error, method));
        });
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
