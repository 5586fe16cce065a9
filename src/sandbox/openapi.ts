import { z } from 'zod';
import {
  cardCheckDocument,
  cardCheckRequest,
  deletedNetworkTokenDocument,
  enrolRequest,
  networkTokenDocument,
  provisionRequest,
  v1CardDocument,
} from '../contracts/account-updater.ts';
import { inviteResource, memberResource, pageDocument } from '../contracts/accounts.ts';
import { cardAttributesResult, lookupRequest } from '../contracts/card-attributes.ts';
import {
  cardRecord,
  checkDocument,
  createCardRequest,
  duplicateCardDocument,
  subscriptionDocument,
} from '../contracts/card-interface.ts';
import { errorDocument, VAULT_ID_PATTERN } from '../contracts/common.ts';
import { oauthError, tokenRequest, tokenResponse } from '../contracts/oauth.ts';
import { ACCOUNT_UPDATER_PREFIX } from './account-updater.ts';
import { CARD_ATTRIBUTES_PREFIX } from './card-attributes.ts';
import { CARD_INTERFACE_PREFIX } from './card-interface.ts';
import { JSON_API_MEDIA_TYPE, JSON_MEDIA_TYPE, type Router, type Scope, sendJson } from './http.ts';
import { ACCOUNTS_PREFIX, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './organization-members.ts';
import { WEBHOOK_DELIVERIES_PATH, WEBHOOK_ENDPOINTS_PATH } from './webhook-endpoints.ts';

/**
 * The OpenAPI 3.1 description of everything the embedded sandbox serves (contract §1): the token
 * endpoint, the card interface, account updater v1, network tokens, card attributes, organization
 * members, and the sandbox-only administration endpoints. Only the table of paths below is written
 * here (operations, scopes, statuses and error codes); every body schema is generated from the zod
 * contracts of src/contracts (`z.toJSONSchema`, the wire side of each schema) through
 * {@link SANDBOX_COMPONENTS}, so the document cannot disagree with the clients and the sandbox.
 * `response-validation.ts` checks every sandbox answer against this table with the same zod schemas.
 */

/** A JSON Schema 2020-12 object (the OpenAPI 3.1 Schema Object). */
export type JsonSchema = { [keyword: string]: unknown };

/** OpenAPI 3.1 Parameter Object (the subset used here). */
export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  description?: string;
  schema: JsonSchema;
}

/** OpenAPI 3.1 Header Object (the subset used here). */
export interface OpenApiHeader {
  description?: string;
  required?: boolean;
  schema: JsonSchema;
}

/** OpenAPI 3.1 Media Type Object (the subset used here). */
export interface OpenApiMediaType {
  schema: JsonSchema;
}

/** OpenAPI 3.1 Response Object (the subset used here); no `content` means an empty body. */
export interface OpenApiResponse {
  description: string;
  headers?: Record<string, OpenApiHeader>;
  content?: Record<string, OpenApiMediaType>;
}

/** OpenAPI 3.1 Operation Object (the subset used here). */
export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** Alternatives; `{}` means "no authentication" (used by the optional-token delivery log). */
  security: Record<string, string[]>[];
  parameters?: OpenApiParameter[];
  requestBody?: { required: boolean; content: Record<string, OpenApiMediaType> };
  /** Keys are status codes as strings. */
  responses: Record<string, OpenApiResponse>;
}

/** HTTP methods the document uses, as OpenAPI path item keys. */
export type OpenApiMethod = 'get' | 'post' | 'delete';

/** OpenAPI 3.1 Path Item Object (the subset used here). */
export type OpenApiPathItem = { parameters?: OpenApiParameter[] } & Partial<
  Record<OpenApiMethod, OpenApiOperation>
>;

/** An OpenAPI 3.1 document (the subset of fields this project uses). */
export interface OpenApiDocument {
  openapi: '3.1.0';
  jsonSchemaDialect: string;
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, OpenApiPathItem>;
  components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes: Record<string, unknown>;
  };
}

const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

const ref = (name: ComponentName): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const string = (extra: JsonSchema = {}): JsonSchema => ({ type: 'string', ...extra });
/** Area tags. */
const TAG = {
  oauth: 'OAuth',
  cardInterface: 'Card interface',
  accountUpdater: 'Account updater v1',
  networkTokens: 'Network tokens',
  cardAttributes: 'Card attributes',
  members: 'Organization members',
  admin: 'Sandbox administration',
} as const;

// ---------------------------------------------------------------------------------------------------
// Responses

type ErrorCodes = readonly [string, ...string[]];

/**
 * An error answer of contract §3 whose error objects all carry `status` and one of `codes`.
 * A 401 also declares `WWW-Authenticate`, required unless `wwwAuthenticateOptional`.
 */
function errorResponse(
  status: number,
  mediaType: string,
  codes: ErrorCodes,
  description: string,
  options: { wwwAuthenticateOptional?: boolean } = {},
): OpenApiResponse {
  const schema: JsonSchema = {
    allOf: [
      ref('ErrorDocument'),
      {
        type: 'object',
        properties: {
          errors: {
            type: 'array',
            items: {
              type: 'object',
              properties: { status: { const: String(status) }, code: { enum: [...codes] } },
            },
          },
        },
      },
    ],
  };
  return {
    description,
    ...(status === 401
      ? {
          headers: {
            'WWW-Authenticate': {
              description: '`Bearer realm="sandbox"` (no token) or `Bearer error="invalid_token"`.',
              required: !options.wwwAuthenticateOptional,
              schema: string({ pattern: '^Bearer ' }),
            },
          },
        }
      : {}),
    content: { [mediaType]: { schema } },
  };
}

function ok(
  description: string,
  mediaType: string,
  schema: JsonSchema,
  headers?: Record<string, OpenApiHeader>,
) {
  return { description, ...(headers ? { headers } : {}), content: { [mediaType]: { schema } } };
}

/** What an operation can fail with, besides its own errors. */
interface CommonErrors {
  mediaType: string;
  /** Bearer-protected (401 and 403). */
  authenticated: boolean;
  /** Takes a JSON body (400 malformed, 413, 415). */
  body: boolean;
  /** Has path parameters (400 on bad percent-encoding). */
  pathParameters: boolean;
}

/**
 * The responses of an operation: its own plus the common ones of {@link CommonErrors} and 500.
 * A status given in `own` replaces the common one (its codes must then include the common codes).
 */
function responses(
  common: CommonErrors,
  own: Record<string, OpenApiResponse>,
): Record<string, OpenApiResponse> {
  const { mediaType } = common;
  const all: Record<string, OpenApiResponse> = {};
  if (common.body || common.pathParameters) {
    all['400'] = errorResponse(400, mediaType, ['bad-request'], 'Malformed request (contract §3).');
  }
  if (common.authenticated) {
    all['401'] = errorResponse(401, mediaType, ['unauthorized'], 'Missing, invalid or expired access token.');
    all['403'] = errorResponse(403, mediaType, ['forbidden'], 'The access token lacks the scope.');
  }
  if (common.body) {
    all['413'] = errorResponse(413, mediaType, ['payload-too-large'], 'Body over 1 MiB.');
    all['415'] = errorResponse(
      415,
      mediaType,
      ['unsupported-media-type'],
      `Content-Type is not ${mediaType}.`,
    );
  }
  all['500'] = errorResponse(500, mediaType, ['server-error'], 'Internal server error.');
  const merged = { ...all, ...own };
  return Object.fromEntries(Object.entries(merged).sort(([a], [b]) => a.localeCompare(b)));
}

const bearer = (scope: Scope) => [{ oauth2: [scope] }];

const pathParameter = (name: string, description: string, schema: JsonSchema = string({ minLength: 1 })) => ({
  name,
  in: 'path' as const,
  required: true,
  description,
  schema,
});

const jsonBody = (mediaType: string, schema: JsonSchema) => ({
  required: true,
  content: { [mediaType]: { schema } },
});

// ---------------------------------------------------------------------------------------------------
// Components: generated from the contracts

/** A registered webhook endpoint (sandbox only; docs/gap-decisions.md "Webhook endpoint registry"). */
const webhookEndpoint = z.object({
  id: z.string().regex(/^whe_[0-9A-Za-z]{22}$/),
  url: z.url(),
  createdAt: z.iso.datetime(),
});

/** One delivery attempt of the delivery log (sandbox only). */
const deliveryRecord = z.object({
  notificationId: z.uuid(),
  endpointId: z.string().regex(/^whe_[0-9A-Za-z]{22}$/),
  vault: z.string().regex(VAULT_ID_PATTERN),
  event: z.string().min(1),
  attempt: z.int().min(1),
  status: z.int().min(100).max(599).optional(),
  error: z.string().optional(),
  at: z.iso.datetime(),
  outcome: z.enum(['retrying', 'delivered', 'failed']),
});

/**
 * Every named schema of the document: the contracts' wire schemas (src/contracts) and the
 * sandbox-only administration bodies. The response validator parses answers with these.
 */
export const SANDBOX_COMPONENTS = {
  ErrorDocument: errorDocument,
  TokenRequest: tokenRequest,
  TokenResponse: tokenResponse,
  OAuthError: oauthError,
  CardCreateRequest: createCardRequest,
  CardInterfaceCard: cardRecord,
  DuplicateCardReference: duplicateCardDocument,
  CardUpdateSubscription: subscriptionDocument,
  CardUpdates: checkDocument,
  EnrolRequest: enrolRequest,
  AccountUpdaterCard: v1CardDocument,
  CardCheckRequest: cardCheckRequest,
  CardCheckResult: cardCheckDocument,
  ProvisionNetworkTokenRequest: provisionRequest,
  NetworkToken: networkTokenDocument,
  DeletedNetworkToken: deletedNetworkTokenDocument,
  CardAttributesRequest: lookupRequest,
  CardAttributes: cardAttributesResult,
  UserPage: pageDocument(memberResource),
  InvitePage: pageDocument(inviteResource),
  WebhookEndpointRequest: z.object({ url: z.string().max(2048), secret: z.string().optional() }),
  WebhookEndpointDocument: z.object({ data: webhookEndpoint }),
  WebhookEndpointList: z.object({ data: z.array(webhookEndpoint) }),
  CreatedWebhookEndpointDocument: z.object({ data: webhookEndpoint.extend({ secret: z.string().min(16) }) }),
  DeliveryList: z.object({ data: z.array(deliveryRecord) }),
  OpenApiDocument: z.looseObject({
    openapi: z.literal('3.1.0'),
    info: z.looseObject({}),
    paths: z.looseObject({}),
  }),
} satisfies Record<string, z.ZodType>;

/** Name of a schema of {@link SANDBOX_COMPONENTS}. */
export type ComponentName = keyof typeof SANDBOX_COMPONENTS;

/**
 * An open enumeration of the contracts (`openEnum`: the known values or any other non-empty string)
 * as JSON Schema: `anyOf` of string variants only. It is written as the string it is, with the known
 * values as `examples`, which generic OpenAPI tooling reads as a plain string (not a union).
 */
function simplifyOpenEnums(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(simplifyOpenEnums);
  if (node === null || typeof node !== 'object') return node;
  const schema = node as JsonSchema;
  const variants = schema.anyOf as JsonSchema[] | undefined;
  if (
    Array.isArray(variants) &&
    variants.length > 1 &&
    variants.every((variant) => variant.type === 'string')
  ) {
    const known = variants.flatMap((variant) => (variant.enum as string[] | undefined) ?? []);
    const { anyOf: _variants, ...rest } = schema;
    return { ...rest, type: 'string', minLength: 1, ...(known.length > 0 ? { examples: known } : {}) };
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, simplifyOpenEnums(value)]));
}

/** `components.schemas`: each contract schema as JSON Schema 2020-12, its wire (input) side. */
function componentSchemas(): Record<string, JsonSchema> {
  return Object.fromEntries(
    Object.entries(SANDBOX_COMPONENTS).map(([name, schema]) => [name, componentSchema(schema)]),
  );
}

/** One component of {@link componentSchemas}, without the `$schema` the document's dialect states. */
export function componentSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return simplifyOpenEnums(json) as JsonSchema;
}

// ---------------------------------------------------------------------------------------------------
// Paths

const CARD_ID_PARAMETER = pathParameter('card_id', 'Card id.', string({ minLength: 1 }));
const PAN_ALIAS_PARAMETER = pathParameter('pan_alias', 'Alias of the PAN the token was provisioned for.');

const pageParameters: OpenApiParameter[] = [
  {
    name: 'page[number]',
    in: 'query',
    description: '1-based page number; a page past the last has empty `data`.',
    schema: { type: 'integer', minimum: 1, default: 1 },
  },
  {
    name: 'page[size]',
    in: 'query',
    description: 'Items per page.',
    schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
  },
];

/** The areas of the document: the tag and the media type of their operations. */
const AREAS = {
  cardInterface: { tag: TAG.cardInterface, mediaType: JSON_API_MEDIA_TYPE },
  accountUpdater: { tag: TAG.accountUpdater, mediaType: JSON_MEDIA_TYPE },
  networkTokens: { tag: TAG.networkTokens, mediaType: JSON_MEDIA_TYPE },
  cardAttributes: { tag: TAG.cardAttributes, mediaType: JSON_MEDIA_TYPE },
  members: { tag: TAG.members, mediaType: JSON_API_MEDIA_TYPE },
  admin: { tag: TAG.admin, mediaType: JSON_MEDIA_TYPE },
} as const;

/** {@link ok} and {@link errorResponse} in one area's media type. */
interface AreaResponses {
  ok(description: string, component: ComponentName, headers?: Record<string, OpenApiHeader>): OpenApiResponse;
  error(
    status: number,
    codes: ErrorCodes,
    description: string,
    options?: { wwwAuthenticateOptional?: boolean },
  ): OpenApiResponse;
}

/** One bearer-protected operation of an area, as {@link operation} completes it. */
interface OperationSpec {
  area: keyof typeof AREAS;
  operationId: string;
  summary: string;
  description?: string;
  /** The scope the bearer token needs, or the security alternatives as they are. */
  security: Scope | OpenApiOperation['security'];
  parameters?: OpenApiParameter[];
  /** Component of the JSON request body (in the area's media type); none without a body. */
  body?: ComponentName;
  /** Whether the path has parameters (400 on bad percent-encoding). */
  pathParameters?: boolean;
  /** The operation's own responses, in the area's media type. */
  responses: (r: AreaResponses) => Record<string, OpenApiResponse>;
}

/**
 * An operation of the document: the area's tag, bearer security, the JSON request body, and the
 * common error responses of the area's media type (see {@link responses}) with the operation's own.
 */
function operation(spec: OperationSpec): OpenApiOperation {
  const { tag, mediaType } = AREAS[spec.area];
  const r: AreaResponses = {
    ok: (description, component, headers) => ok(description, mediaType, ref(component), headers),
    error: (status, codes, description, options) =>
      errorResponse(status, mediaType, codes, description, options),
  };
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: [tag],
    security: typeof spec.security === 'string' ? bearer(spec.security) : spec.security,
    ...(spec.parameters ? { parameters: spec.parameters } : {}),
    ...(spec.body ? { requestBody: jsonBody(mediaType, ref(spec.body)) } : {}),
    responses: responses(
      {
        mediaType,
        authenticated: true,
        body: spec.body !== undefined,
        pathParameters: spec.pathParameters ?? false,
      },
      spec.responses(r),
    ),
  };
}

const CARD_NOT_FOUND = 'No such card in the vault.';
const NO_TOKEN = 'No token for this alias in the vault.';
const NO_ENDPOINT = 'No such endpoint in the vault.';
const NO_ORGANIZATION = 'No such organization.';
const ORGANIZATION_ID_PARAMETER = pathParameter('organizationId', 'Organization id (24 characters).');
const ENDPOINT_ID_PARAMETER = pathParameter('endpointId', 'Endpoint id (`whe_…`).');

const paths: Record<string, OpenApiPathItem> = {
  '/oauth/token': {
    post: {
      operationId: 'createAccessToken',
      summary: 'OAuth 2.0 client credentials token (contract §2)',
      tags: [TAG.oauth],
      security: [],
      requestBody: jsonBody('application/x-www-form-urlencoded', ref('TokenRequest')),
      responses: {
        '200': ok('Access token, valid 1200 s.', JSON_MEDIA_TYPE, ref('TokenResponse')),
        '400': ok('invalid_request, unsupported_grant_type or invalid_scope.', JSON_MEDIA_TYPE, {
          allOf: [
            ref('OAuthError'),
            {
              type: 'object',
              properties: { error: { enum: ['invalid_request', 'unsupported_grant_type', 'invalid_scope'] } },
            },
          ],
        }),
        '401': ok('invalid_client.', JSON_MEDIA_TYPE, {
          allOf: [ref('OAuthError'), { type: 'object', properties: { error: { const: 'invalid_client' } } }],
        }),
        '413': errorResponse(413, JSON_MEDIA_TYPE, ['payload-too-large'], 'Body over 1 MiB.'),
        '500': errorResponse(500, JSON_MEDIA_TYPE, ['server-error'], 'Internal server error.'),
      },
    },
  },

  [`${CARD_INTERFACE_PREFIX}/cards`]: {
    post: operation({
      area: 'cardInterface',
      operationId: 'createCard',
      summary: 'Create a card (vaults the PAN and CVC, returns aliases)',
      description:
        'Test cards ending 4401, 4403, 4500, 4502, 4503, 4504 answer that status; 4998 answers 504 after the hang. In the documented wire the 201 carries `pan`, `cvc`, `first8` and no `brand` nor timestamps, and a vault with Duplicate Card Check on answers 303 for a PAN already on file.',
      security: 'cards:write',
      body: 'CardCreateRequest',
      responses: (r) => ({
        '201': r.ok('The card record.', 'CardInterfaceCard'),
        '303': r.ok(
          'Duplicate Card Check: the PAN is already on file; the existing card.',
          'DuplicateCardReference',
          {
            Location: { description: 'Path of the existing card.', required: true, schema: string() },
          },
        ),
        '401': r.error(
          401,
          ['unauthorized'],
          'Bad token (with WWW-Authenticate), or the simulated upstream fault of test card 4401 (without).',
          { wwwAuthenticateOptional: true },
        ),
        '403': r.error(403, ['forbidden'], 'Scope missing, or test card 4403.'),
        '502': r.error(502, ['bad-gateway'], 'Test card 4502.'),
        '503': r.error(503, ['service-unavailable'], 'Test card 4503.'),
        '504': r.error(504, ['gateway-timeout'], 'Test cards 4504 and 4998.'),
      }),
    }),
  },
  [`${CARD_INTERFACE_PREFIX}/cards/{card_id}`]: {
    parameters: [CARD_ID_PARAMETER],
    get: operation({
      area: 'cardInterface',
      operationId: 'getCard',
      summary: 'Get a card (sandbox addition, gap decisions)',
      security: 'cards:read',
      pathParameters: true,
      responses: (r) => ({
        '200': r.ok('The card record.', 'CardInterfaceCard'),
        '404': r.error(404, ['card-not-found'], CARD_NOT_FOUND),
      }),
    }),
  },
  [`${CARD_INTERFACE_PREFIX}/cards/{card_id}/card-update-subscriptions`]: {
    parameters: [CARD_ID_PARAMETER],
    post: operation({
      area: 'cardInterface',
      operationId: 'subscribeCard',
      summary: 'Subscribe a card to account updater',
      description:
        'An already subscribed card answers its subscription unchanged; test cards 4002 answer `failed`.',
      security: 'cards:write',
      pathParameters: true,
      responses: (r) => ({
        '200': r.ok('The subscription.', 'CardUpdateSubscription'),
        '404': r.error(404, ['card-not-found'], CARD_NOT_FOUND),
        '422': r.error(422, ['card-brand-not-supported'], 'Diners Club or JCB.'),
      }),
    }),
    delete: operation({
      area: 'cardInterface',
      operationId: 'unsubscribeCard',
      summary: 'Unsubscribe a card from account updater (idempotent)',
      security: 'cards:write',
      pathParameters: true,
      responses: (r) => ({
        '204': { description: 'Unsubscribed (or was not subscribed).' },
        '404': r.error(404, ['card-not-found'], CARD_NOT_FOUND),
      }),
    }),
  },
  [`${CARD_INTERFACE_PREFIX}/cards/{card_id}/check`]: {
    parameters: [CARD_ID_PARAMETER],
    post: operation({
      area: 'cardInterface',
      operationId: 'checkCard',
      summary: 'On-demand check of a card (stateless)',
      security: 'cards:write',
      pathParameters: true,
      responses: (r) => ({
        '200': r.ok('The latest card data.', 'CardUpdates'),
        '404': r.error(404, ['card-not-found'], CARD_NOT_FOUND),
        '422': r.error(
          422,
          ['account-updater-not-supported'],
          'American Express or Discover card without subscription.',
        ),
      }),
    }),
  },

  [`${ACCOUNT_UPDATER_PREFIX}/cards`]: {
    post: operation({
      area: 'accountUpdater',
      operationId: 'enrolCard',
      summary: 'Enrol a card in account updater (asynchronous)',
      security: 'cards:write',
      body: 'EnrolRequest',
      responses: (r) => ({
        '201': r.ok(
          'The specification reading (`SANDBOX_WIRE=specification`): the card, `enrolling` or (mock cards) `enrolled`.',
          'AccountUpdaterCard',
        ),
        '202': r.ok(
          'The documented reading (default; sandbox contract §8): the card, `enrolling` or (mock cards) `enrolled`.',
          'AccountUpdaterCard',
        ),
        '404': r.error(404, ['merchant-not-found'], 'Unknown service_merchant_id.'),
        '422': r.error(
          422,
          ['card-brand-not-supported', 'account-updater-not-supported'],
          'Diners Club or JCB; test card 1099.',
        ),
      }),
    }),
  },
  [`${ACCOUNT_UPDATER_PREFIX}/cards/{card_id}`]: {
    parameters: [CARD_ID_PARAMETER],
    get: operation({
      area: 'accountUpdater',
      operationId: 'getAccountUpdaterCard',
      summary: 'Get an enrolled card',
      description: 'An id not matching `^CRD.*$` answers 400; mock enrolments answer 404.',
      security: 'cards:read',
      pathParameters: true,
      responses: (r) => ({
        '200': r.ok('The card.', 'AccountUpdaterCard'),
        '404': r.error(404, ['card-not-found'], CARD_NOT_FOUND),
      }),
    }),
  },
  [`${ACCOUNT_UPDATER_PREFIX}/card-check`]: {
    post: operation({
      area: 'accountUpdater',
      operationId: 'checkAccountUpdaterCard',
      summary: 'Stateless card check',
      security: 'cards:write',
      body: 'CardCheckRequest',
      responses: (r) => ({
        '200': r.ok(
          'The specification reading: the check result, `number` the format-preserving alias, no `cvv`.',
          'CardCheckResult',
        ),
        '202': r.ok(
          'The documented reading (default; sandbox contract §8): the check result, `number` the plain PAN and `cvv` the given CVV as JSON numbers, the merchant id as `vgs_merchant_id`.',
          'CardCheckResult',
        ),
        '404': r.error(404, ['merchant-not-found'], 'Unknown service_merchant_id.'),
        '422': r.error(
          422,
          ['card-brand-not-supported', 'account-updater-not-supported'],
          'American Express or Discover card not enrolled in the vault.',
        ),
      }),
    }),
  },

  [`${ACCOUNT_UPDATER_PREFIX}/network-tokens`]: {
    post: operation({
      area: 'networkTokens',
      operationId: 'provisionNetworkToken',
      summary: 'Provision a network token (asynchronous)',
      security: 'network-tokens:write',
      body: 'ProvisionNetworkTokenRequest',
      responses: (r) => ({
        '200': r.ok(
          'The documented reading (default; sandbox contract §8): the token, bare, already in its final state; or, in both readings, the token the card already has (not DELETED).',
          'NetworkToken',
        ),
        '202': r.ok(
          'The specification reading: provisioning accepted, `{"data": token}` without a final state yet.',
          'NetworkToken',
        ),
        '404': r.error(404, ['not-found', 'declined'], 'Alias unknown to the vault; test cards 5404.'),
        '422': r.error(
          422,
          [
            'required-fields-missing',
            'invalid-format',
            'card-brand-not-supported',
            'card-not-allowed',
            'rejected',
          ],
          'Missing or malformed members, Diners Club or JCB, expired card, test cards 5422 and 5423.',
        ),
      }),
    }),
  },
  [`${ACCOUNT_UPDATER_PREFIX}/network-tokens/{pan_alias}`]: {
    parameters: [PAN_ALIAS_PARAMETER],
    get: operation({
      area: 'networkTokens',
      operationId: 'getNetworkToken',
      summary: 'Get the network token of a card',
      security: 'network-tokens:read',
      pathParameters: true,
      responses: (r) => ({
        '200': r.ok('The token with card info and holder_info.', 'NetworkToken'),
        '404': r.error(404, ['not-found'], NO_TOKEN),
      }),
    }),
    delete: operation({
      area: 'networkTokens',
      operationId: 'deleteNetworkToken',
      summary: 'Delete the network token of a card (idempotent)',
      security: 'network-tokens:write',
      pathParameters: true,
      responses: (r) => ({
        '200': r.ok('The token in state DELETED.', 'DeletedNetworkToken'),
        '404': r.error(404, ['not-found'], NO_TOKEN),
      }),
    }),
  },

  [`${CARD_ATTRIBUTES_PREFIX}/attributes/attributes`]: {
    post: operation({
      area: 'cardAttributes',
      operationId: 'lookupCardAttributes',
      summary: 'Card product attributes of a BIN, PAN or alias',
      security: 'card-attributes:basic',
      body: 'CardAttributesRequest',
      responses: (r) => ({
        '200': r.ok('The attributes.', 'CardAttributes'),
        '404': r.error(
          404,
          ['not-found'],
          'Alias unknown to the vault, or BIN not in the table (the specification wire).',
        ),
        '422': r.error(
          422,
          ['bin-not-discerned'],
          'We could not discern a bin from the input provided: alias unknown to the vault, or BIN not in the table (the documented wire).',
        ),
      }),
    }),
  },

  [`${ACCOUNTS_PREFIX}/organizations/{organizationId}/members`]: {
    parameters: [ORGANIZATION_ID_PARAMETER],
    get: operation({
      area: 'members',
      operationId: 'listOrganizationMembers',
      summary: 'Members of an organization (pending invitations excluded)',
      security: 'organization-users:read',
      parameters: pageParameters,
      pathParameters: true,
      responses: (r) => ({
        '200': r.ok(
          'One page of users, oldest first; in the documented wire every user in one `data` array, without `links` and `meta`.',
          'UserPage',
        ),
        '404': r.error(404, ['not-found'], NO_ORGANIZATION),
      }),
    }),
  },
  [`${ACCOUNTS_PREFIX}/organizations/{organizationId}/invites`]: {
    parameters: [ORGANIZATION_ID_PARAMETER],
    get: operation({
      area: 'members',
      operationId: 'listOrganizationInvites',
      summary: 'Pending invitations of an organization',
      security: 'organization-users:read',
      parameters: pageParameters,
      pathParameters: true,
      responses: (r) => ({
        '200': r.ok(
          'One page of invites, oldest first; in the documented wire every invite in one `data` array, without `links` and `meta`.',
          'InvitePage',
        ),
        '404': r.error(404, ['not-found'], NO_ORGANIZATION),
      }),
    }),
  },

  [WEBHOOK_ENDPOINTS_PATH]: {
    post: operation({
      area: 'admin',
      operationId: 'createWebhookEndpoint',
      summary: "Register a webhook endpoint for the token's vault",
      security: 'cards:write',
      body: 'WebhookEndpointRequest',
      responses: (r) => ({
        '201': r.ok('The endpoint with its secret (shown only here).', 'CreatedWebhookEndpointDocument', {
          Location: { description: 'Path of the new endpoint.', required: true, schema: string() },
        }),
        '409': r.error(409, ['conflict'], 'The vault has an endpoint with this url.'),
      }),
    }),
    get: operation({
      area: 'admin',
      operationId: 'listWebhookEndpoints',
      summary: "Webhook endpoints of the token's vault (no secrets)",
      security: 'cards:read',
      responses: (r) => ({ '200': r.ok('Endpoints in registration order.', 'WebhookEndpointList') }),
    }),
  },
  [`${WEBHOOK_ENDPOINTS_PATH}/{endpointId}`]: {
    parameters: [ENDPOINT_ID_PARAMETER],
    get: operation({
      area: 'admin',
      operationId: 'getWebhookEndpoint',
      summary: 'One webhook endpoint (no secret)',
      security: 'cards:read',
      pathParameters: true,
      responses: (r) => ({
        '200': r.ok('The endpoint.', 'WebhookEndpointDocument'),
        '404': r.error(404, ['webhook-endpoint-not-found'], NO_ENDPOINT),
      }),
    }),
    delete: operation({
      area: 'admin',
      operationId: 'deleteWebhookEndpoint',
      summary: 'Remove a webhook endpoint; its pending retries end as failed',
      security: 'cards:write',
      pathParameters: true,
      responses: (r) => ({
        '204': { description: 'Removed.' },
        '404': r.error(404, ['webhook-endpoint-not-found'], NO_ENDPOINT),
      }),
    }),
  },
  [`${WEBHOOK_ENDPOINTS_PATH}/{endpointId}/deliveries`]: {
    parameters: [ENDPOINT_ID_PARAMETER],
    get: operation({
      area: 'admin',
      operationId: 'listWebhookEndpointDeliveries',
      summary: 'Delivery attempts to one endpoint, oldest first',
      security: 'cards:read',
      pathParameters: true,
      responses: (r) => ({
        '200': r.ok('The attempts.', 'DeliveryList'),
        '404': r.error(404, ['webhook-endpoint-not-found'], NO_ENDPOINT),
      }),
    }),
  },
  [WEBHOOK_DELIVERIES_PATH]: {
    get: operation({
      area: 'admin',
      operationId: 'listWebhookDeliveries',
      summary: 'Delivery attempts: every vault without a token, the token’s vault with one',
      security: [{}, { oauth2: ['cards:read'] }],
      responses: (r) => ({ '200': r.ok('The attempts, oldest first.', 'DeliveryList') }),
    }),
  },
  '/openapi.json': {
    get: {
      operationId: 'getOpenApiDocument',
      summary: 'This document',
      tags: [TAG.admin],
      security: [],
      responses: {
        '200': ok('The OpenAPI 3.1 document.', JSON_MEDIA_TYPE, ref('OpenApiDocument')),
        '500': errorResponse(500, JSON_MEDIA_TYPE, ['server-error'], 'Internal server error.'),
      },
    },
  },
};

/**
 * The sandbox's OpenAPI 3.1 document. Besides the declared operations, two answers are valid for any
 * request (and checked so by the response validator): 404 `not-found` for a path the document does not
 * list, and 405 `method-not-allowed` (with `Allow`) for an undeclared method on a listed path, both as
 * an `ErrorDocument` in `application/json` or, under `/card-interface` and `/accounts`,
 * `application/vnd.api+json`.
 */
export const SANDBOX_OPENAPI: OpenApiDocument = {
  openapi: '3.1.0',
  jsonSchemaDialect: JSON_SCHEMA_2020_12,
  info: {
    title: 'cardgraph embedded sandbox',
    version: '1.0.0',
    description: [
      'The upstream card credential management provider as the embedded sandbox serves it. Each area lives',
      'under its prefix (sandbox contract §1): `/card-interface` ({base_url}), `/account-updater`',
      '({account_updater_url}: account updater v1 and network tokens), `/card-attributes`',
      '({card_enrichment_url}), `/accounts` ({accounts_url}); the token endpoint is `/oauth/token`.',
      '`/sandbox/…` and `/openapi.json` exist only in the sandbox.',
      '',
      'Every path answers 404 `not-found` when unknown and 405 `method-not-allowed` (with `Allow`) for an',
      'undeclared method. Errors are `{"errors":[{"status","code","detail","source"}]}` in the area media',
      'type (contract §3). Gaps of the specification are filled as docs/gap-decisions.md says.',
    ].join('\n'),
  },
  servers: [{ url: '/', description: 'The sandbox serving this document.' }],
  tags: [
    { name: TAG.oauth, description: 'Token endpoint (contract §2).' },
    { name: TAG.cardInterface, description: '{base_url}, application/vnd.api+json.' },
    { name: TAG.accountUpdater, description: '{account_updater_url}, application/json.' },
    { name: TAG.networkTokens, description: '{account_updater_url}, application/json.' },
    { name: TAG.cardAttributes, description: '{card_enrichment_url}, application/json.' },
    { name: TAG.members, description: '{accounts_url}, application/vnd.api+json, JSON:API pagination.' },
    { name: TAG.admin, description: 'Sandbox only: webhook endpoint registry, delivery log, this document.' },
  ],
  paths,
  components: {
    schemas: componentSchemas(),
    securitySchemes: {
      oauth2: {
        type: 'oauth2',
        description: 'Client credentials per vault (contract §2); tokens expire after 1200 s.',
        flows: {
          clientCredentials: {
            tokenUrl: '/oauth/token',
            scopes: {
              'cards:read': 'Read cards, webhook endpoints and deliveries.',
              'cards:write': 'Create, enrol, subscribe and check cards; manage webhook endpoints.',
              'network-tokens:read': 'Read network tokens.',
              'network-tokens:write': 'Provision and delete network tokens.',
              'card-attributes:basic': 'Look up card attributes.',
              'organization-users:read': 'List organization members and invitations.',
            } satisfies Record<Scope, string>,
          },
        },
      },
    },
  },
};

let serialized: string | undefined;

/** Registers `GET /openapi.json` (public): {@link SANDBOX_OPENAPI} as `application/json`. */
export function registerOpenApiRoute(router: Router): void {
  router.addPublic('GET', '/openapi.json', ({ res }) => {
    serialized ??= JSON.stringify(SANDBOX_OPENAPI);
    sendJson(res, 200, serialized, JSON_MEDIA_TYPE);
  });
}
