import { InputValidationError, type StandardSchemaV1 } from '@pothos/plugin-validation';
import {
  AccountUpdaterNotSupportedError,
  BinNotDiscernedError,
  CardBrandNotSupportedError,
  CardNotFoundError,
  ForbiddenError,
  type GatewayError,
  type GatewayErrorClass,
  MerchantNotFoundError,
  NetworkTokenDeclinedError,
  NetworkTokenNotFoundError,
  NetworkTokenRejectedError,
  OrganizationNotFoundError,
  UnauthenticatedError,
  UpstreamServiceError,
} from '../errors.ts';
import { builder } from './builder.ts';

/**
 * GraphQL error types (errors as data, @pothos/plugin-errors): one object type per class of
 * src/errors.ts (a subclass resolves to its parent's type, e.g. VaultNotAllowedError is a
 * `ForbiddenError`). Every error type implements `interface Error { message: String! code: String! }`.
 * Every field with `errors` returns UnauthenticatedError, ForbiddenError and UpstreamError
 * (`errors.defaultTypes`, src/schema/builder.ts) plus the types it lists.
 */
export const ErrorInterface = builder.interfaceRef<Error & { code?: string }>('Error').implement({
  description: 'A failure returned as data. `code` is stable and machine-readable.',
  fields: (t) => ({
    message: t.exposeString('message', {
      description: 'Human-readable explanation; never carries card data.',
    }),
    code: t.string({
      description: 'Stable error code, the upstream code of the specification where one exists.',
      resolve: (error) => error.code ?? 'invalid-input',
    }),
  }),
});

/**
 * The GatewayError classes with a constant code, each registered as a GraphQL object type of the
 * class's name implementing `Error`, with its description.
 */
const GATEWAY_ERROR_TYPES: readonly [GatewayErrorClass, string][] = [
  [CardNotFoundError, 'The card does not exist in the vault (`card-not-found`).'],
  [
    CardBrandNotSupportedError,
    'The card brand is not supported by the account updater (`card-brand-not-supported`).',
  ],
  [
    AccountUpdaterNotSupportedError,
    'The account updater cannot serve this card (`account-updater-not-supported`), e.g. a check of an American Express or Discover card that is not enrolled.',
  ],
  [MerchantNotFoundError, 'The merchant is not registered in the vault (`merchant-not-found`).'],
  [UnauthenticatedError, 'No valid client token was sent (`unauthenticated`).'],
  [
    ForbiddenError,
    'The client token lacks the scope or the vault this field needs (`forbidden`, `vault-not-allowed`, `vault-required`).',
  ],
  [NetworkTokenDeclinedError, 'The card network declined the token (`declined`).'],
  [NetworkTokenRejectedError, 'The token request was refused (`card-not-allowed`, `rejected`).'],
  [NetworkTokenNotFoundError, 'No token exists for the alias in this vault (`not-found`).'],
  [OrganizationNotFoundError, 'The organization was not found (`not-found`).'],
  [
    BinNotDiscernedError,
    'The card attributes service could not discern a BIN from the number (`bin-not-discerned`, its 422).',
  ],
];

/**
 * What every error object type declares: its GraphQL `name`, `description`, that it implements
 * `Error`, and that it resolves the values that are instances of `cls` (errors as data).
 */
function errorTypeOptions(cls: abstract new (...args: never[]) => Error, name: string, description: string) {
  return { name, description, interfaces: [ErrorInterface], isTypeOf: (v: unknown) => v instanceof cls };
}

for (const [cls, description] of GATEWAY_ERROR_TYPES) {
  const options = errorTypeOptions(cls, cls.name, description);
  // biome-ignore lint/suspicious/noExplicitAny: Pothos infers the object shape from any constructor signature
  builder.objectType(cls as new (...args: any[]) => GatewayError, options);
}

builder.objectType(UpstreamServiceError, {
  ...errorTypeOptions(
    UpstreamServiceError,
    'UpstreamError',
    'The upstream service failed or did not answer in time.',
  ),
  fields: (t) => ({
    retryable: t.exposeBoolean('retryable', {
      description: 'Whether the same request may succeed if sent again later.',
    }),
    status: t.exposeInt('status', {
      nullable: true,
      description: 'HTTP status of the upstream answer; null when none arrived.',
    }),
  }),
});

const InputValidationIssue = builder.objectRef<StandardSchemaV1.Issue>('InputValidationIssue').implement({
  description: 'One invalid input field.',
  fields: (t) => ({
    message: t.exposeString('message', { description: 'What is wrong; never echoes the value.' }),
    path: t.stringList({
      description: 'Path of the field from the argument, e.g. ["input", "expMonth"].',
      resolve: (issue) => issue.path?.map((part) => String(typeof part === 'object' ? part.key : part)) ?? [],
    }),
  }),
});

builder.objectType(InputValidationError, {
  ...errorTypeOptions(
    InputValidationError,
    'InputValidationError',
    'One or more input fields are invalid (`invalid-input`); nothing was sent upstream.',
  ),
  fields: (t) => ({
    issues: t.field({
      type: [InputValidationIssue],
      description: 'Every invalid field.',
      resolve: (e) => [...e.issues],
    }),
  }),
});
