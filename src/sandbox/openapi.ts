import { ENROLLING_EVENT } from '../contracts/account-updater.ts';
import { ACCOUNT_UPDATER_PREFIX } from './account-updater.ts';
import { BRAND_NAMES, CARD_ATTRIBUTES_PREFIX, CARD_CATEGORIES, CARD_TYPES } from './card-attributes.ts';
import { CARD_INTERFACE_PREFIX } from './card-interface.ts';
import { JSON_API_MEDIA_TYPE, JSON_MEDIA_TYPE, type Router, SCOPES, type Scope, sendJson } from './http.ts';
import { TOKEN_LIFETIME_S } from './oauth.ts';
import { ACCOUNTS_PREFIX, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './organization-members.ts';
import { FORMAT_PRESERVING_ALIAS_PATTERN, TOK_ALIAS_PATTERN } from './vault.ts';
import { WEBHOOK_DELIVERIES_PATH, WEBHOOK_ENDPOINTS_PATH } from './webhook-endpoints.ts';

/**
 * The OpenAPI 3.1 description of everything the embedded sandbox serves (contract §1): the token
 * endpoint, the card interface, account updater v1, network tokens, card attributes, organization
 * members, and the sandbox-only administration endpoints. Paths are the sandbox's absolute paths (each
 * area under its prefix); schemas are JSON Schema 2020-12 and describe exactly what the sandbox sends
 * (docs/gap-decisions.md). `response-validation.ts` checks every sandbox answer against it.
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

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const string = (extra: JsonSchema = {}): JsonSchema => ({ type: 'string', ...extra });
const integer = (minimum: number, maximum: number, extra: JsonSchema = {}): JsonSchema => ({
  type: 'integer',
  minimum,
  maximum,
  ...extra,
});
/** An object whose listed members are the only ones allowed; `required` lists the mandatory ones. */
const object = (properties: Record<string, JsonSchema>, required: string[] = [], extra: JsonSchema = {}) => ({
  type: 'object',
  properties,
  ...(required.length > 0 ? { required } : {}),
  additionalProperties: false,
  ...extra,
});
const arrayOf = (items: JsonSchema, extra: JsonSchema = {}): JsonSchema => ({
  type: 'array',
  items,
  ...extra,
});
const pattern = (regex: RegExp): string => regex.source;

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

const AU_CARD_EVENTS = [
  'au_card.updated',
  'au_card.expired',
  'au_card.closed',
  'au_card.contact_cardholder_advice',
  'au_card.non_participating',
  'au_card.unknown',
  'au_card.enrolled',
  'au_card.opt_out',
];
const CHECK_EVENTS = [
  'au_card.updated',
  'au_card.valid',
  'au_card.closed',
  'au_card.expired',
  'au_card.contact_cardholder_advice',
  'au_card.non_participating',
];

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
// Schemas

const CARD_ID = string({ pattern: '^CRD[0-9A-Za-z]{22}$', description: '`CRD` + 22 Base62 characters.' });
const ISO_UTC_MS = string({
  format: 'date-time',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  description: 'ISO 8601 UTC with milliseconds (24 characters).',
});

const schemas: Record<string, JsonSchema> = {
  ErrorObject: object(
    {
      status: string({ pattern: '^[45]\\d\\d$', description: 'The HTTP status as a string.' }),
      code: string({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' }),
      detail: string({ description: 'Human-readable; names fields, never carries card data.' }),
      source: {
        oneOf: [
          object({ pointer: string({ description: 'JSON pointer of the offending request member.' }) }, [
            'pointer',
          ]),
          object({ parameter: string({ description: 'Name of the offending query parameter.' }) }, [
            'parameter',
          ]),
        ],
      },
    },
    ['status', 'code', 'detail'],
    { description: 'A JSON:API error object (contract §3).' },
  ),
  ErrorDocument: object({ errors: arrayOf(ref('ErrorObject'), { minItems: 1 }) }, ['errors'], {
    description: 'Error body of every area (contract §3).',
  }),

  // OAuth
  TokenRequest: object(
    {
      grant_type: { const: 'client_credentials' },
      client_id: string({ description: 'Unless sent as HTTP Basic.' }),
      client_secret: string({ description: 'Unless sent as HTTP Basic.' }),
      scope: string({ description: `Space-separated subset of: ${SCOPES.join(', ')}. All when absent.` }),
    },
    ['grant_type'],
  ),
  TokenResponse: object(
    {
      access_token: string({ pattern: '^[A-Za-z0-9_-]{43}$' }),
      token_type: { const: 'Bearer' },
      expires_in: { const: TOKEN_LIFETIME_S },
      scope: string({ description: 'Granted scopes, space-separated.' }),
    },
    ['access_token', 'token_type', 'expires_in', 'scope'],
  ),
  OAuthError: object(
    {
      error: { enum: ['invalid_request', 'unsupported_grant_type', 'invalid_scope', 'invalid_client'] },
      error_description: string(),
    },
    ['error'],
    { description: 'RFC 6749 §5.2 error body of the token endpoint.' },
  ),

  // Card interface
  CardInterfaceTimestamp: string({
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}$',
    description: 'Timestamp without zone designator, microseconds (read as UTC).',
  }),
  CardholderAddress: {
    type: 'object',
    properties: {
      address1: string(),
      address2: string(),
      address3: string(),
      address4: string(),
      city: string(),
    },
    additionalProperties: { type: ['string', 'number', 'boolean', 'null'] },
    description: 'Further members beyond address1-4 and city are kept as given (scalars only).',
  },
  Cardholder: object({ name: string(), company: string(), address: ref('CardholderAddress') }),
  CardCreateRequest: object(
    {
      data: object(
        {
          type: { const: 'cards' },
          attributes: {
            ...object(
              {
                pan: string({ pattern: '^\\d{13,19}$', description: 'Luhn-valid card number.' }),
                pan_alias: string({ minLength: 1 }),
                cvc: string({ pattern: '^\\d{3,4}$' }),
                cvc_alias: string({ minLength: 1 }),
                cvc_status: { const: 'active' },
                exp_month: integer(1, 12),
                exp_year: integer(0, 99),
                cardholder: ref('Cardholder'),
                token_type: { enum: ['dpan', 'mpan', 'pan'] },
                wallet_type: { enum: ['apple_pay', 'google_pay'] },
              },
              ['exp_month', 'exp_year'],
            ),
            anyOf: [{ required: ['pan'] }, { required: ['pan_alias'] }],
          },
          meta: {
            type: 'object',
            description: 'Free-form metadata; `account_updater` is reserved.',
            properties: { account_updater: false },
          },
        },
        ['attributes'],
      ),
    },
    ['data'],
  ),
  CardInterfaceCard: object(
    {
      data: object(
        {
          type: { const: 'cards' },
          id: CARD_ID,
          attributes: object(
            {
              pan_alias: string({ pattern: pattern(TOK_ALIAS_PATTERN) }),
              cvc_alias: string({ pattern: pattern(TOK_ALIAS_PATTERN) }),
              bin: string({ pattern: '^\\d{6}$' }),
              last4: string({ pattern: '^\\d{4}$' }),
              brand: { enum: ['visa', 'mastercard', 'amex', 'discover', 'diners', 'jcb'] },
              exp_month: integer(1, 12),
              exp_year: integer(0, 99),
              cvc_status: { const: 'active' },
              cardholder: ref('Cardholder'),
              token_type: { enum: ['dpan', 'mpan', 'pan'] },
              wallet_type: { enum: ['apple_pay', 'google_pay'] },
              created_at: ref('CardInterfaceTimestamp'),
              updated_at: ref('CardInterfaceTimestamp'),
            },
            ['pan_alias', 'bin', 'last4', 'brand', 'exp_month', 'exp_year', 'created_at', 'updated_at'],
          ),
          meta: {
            type: 'object',
            properties: {
              account_updater: object(
                {
                  subscription_id: string({ pattern: '^CUS[0-9A-Za-z]{22}$' }),
                  state: { const: 'enrolled' },
                },
                ['subscription_id', 'state'],
                { description: 'Present while the card is subscribed to account updater.' },
              ),
            },
            description: 'The submitted metadata, plus `account_updater` while subscribed.',
          },
        },
        ['type', 'id', 'attributes', 'meta'],
      ),
    },
    ['data'],
    { description: 'The card record (never `pan` nor `cvc`).' },
  ),
  CardUpdateSubscription: object(
    {
      data: object(
        {
          type: { const: 'card_update_subscriptions' },
          id: string({ pattern: '^CUS[0-9A-Za-z]{22}$' }),
          attributes: object(
            {
              created_at: ref('CardInterfaceTimestamp'),
              state: { enum: ['enrolled', 'failed'] },
              updated_at: ref('CardInterfaceTimestamp'),
            },
            ['created_at', 'state', 'updated_at'],
          ),
        },
        ['type', 'id', 'attributes'],
      ),
    },
    ['data'],
  ),
  CardUpdates: object(
    {
      data: object(
        {
          type: { const: 'card_updates' },
          id: CARD_ID,
          attributes: object(
            {
              event: {
                enum: [
                  'updated',
                  'valid',
                  'closed',
                  'expired',
                  'contact_cardholder_advice',
                  'non_participating',
                ],
              },
              updated_values: arrayOf(
                object(
                  {
                    field_name: { enum: ['pan', 'exp_month', 'exp_year'] },
                    old_value: { type: 'number' },
                    new_value: { type: 'number' },
                  },
                  ['field_name', 'old_value', 'new_value'],
                  { description: 'A `pan` value is the full card number as a JSON number (gap decisions).' },
                ),
              ),
            },
            ['event', 'updated_values'],
          ),
        },
        ['type', 'id', 'attributes'],
      ),
    },
    ['data'],
  ),

  // Account updater v1
  FormatPreservingAlias: string({
    pattern: pattern(FORMAT_PRESERVING_ALIAS_PATTERN),
    description: 'Alias of a PAN: six leading digits, Base62 characters with a letter, four trailing digits.',
  }),
  BillingAddress: object({
    name: string(),
    company: string(),
    address1: string(),
    address2: string(),
    city: string(),
    region: string(),
    country: string(),
    postal_code: string(),
    phone: string(),
  }),
  MerchantRequest: object({
    service_merchant_id: string({
      minLength: 1,
      description: 'Required when the vault has several merchants.',
    }),
    sub_merchant_name: string({ minLength: 1, description: 'Required whenever `merchant` is sent.' }),
  }),
  Merchant: object(
    { service_merchant_id: string(), sub_merchant_name: string(), sub_merchant_mid: { type: 'integer' } },
    ['service_merchant_id', 'sub_merchant_name', 'sub_merchant_mid'],
  ),
  EnrolRequest: object(
    {
      name: string({ minLength: 1 }),
      number: string({
        minLength: 1,
        description:
          'A `tok_sandbox_…` or format-preserving alias of the vault, or (sandbox only) a plain PAN.',
      }),
      exp_month: integer(1, 12),
      exp_year: integer(0, 9999),
      billing_address: ref('BillingAddress'),
      merchant: ref('MerchantRequest'),
    },
    ['name', 'number', 'exp_month', 'exp_year'],
  ),
  AccountUpdaterCard: object(
    {
      data: object(
        {
          id: CARD_ID,
          name: string(),
          number: ref('FormatPreservingAlias'),
          exp_month: integer(1, 12),
          exp_year: integer(0, 9999),
          billing_address: ref('BillingAddress'),
          merchant: ref('Merchant'),
          capabilities: arrayOf({ const: 'ACCOUNT_UPDATER' }, { maxItems: 1 }),
          created_at: ISO_UTC_MS,
          updated_at: ISO_UTC_MS,
          state: { enum: ['enrolling', 'enrolled'] },
          event: {
            enum: [...AU_CARD_EVENTS, ENROLLING_EVENT],
            description: `Latest event type; \`${ENROLLING_EVENT}\` while the state is \`enrolling\`.`,
          },
        },
        [
          'id',
          'name',
          'number',
          'exp_month',
          'exp_year',
          'capabilities',
          'created_at',
          'updated_at',
          'state',
          'event',
        ],
      ),
    },
    ['data'],
  ),
  CardCheckRequest: object(
    {
      name: string(),
      number: string({ minLength: 1 }),
      exp_month: integer(1, 12),
      exp_year: integer(0, 9999),
      cvv: string({ pattern: '^\\d{3,4}$' }),
      merchant: ref('MerchantRequest'),
    },
    ['number', 'exp_month', 'exp_year'],
  ),
  CardCheckResult: object(
    {
      data: object(
        {
          name: string(),
          number: ref('FormatPreservingAlias'),
          exp_month: integer(1, 12),
          exp_year: integer(0, 9999),
          merchant: ref('Merchant'),
          failure_code: { const: 'account-updater-not-supported' },
          event: { enum: CHECK_EVENTS },
        },
        ['number', 'exp_month', 'exp_year', 'event'],
        { description: '`cvv` is never echoed.' },
      ),
    },
    ['data'],
  ),

  // Network tokens
  YearMonth: string({ pattern: '^\\d{4}-(0[1-9]|1[0-2])$', description: '`YYYY-MM`.' }),
  HolderInfo: object({
    name: string(),
    email: string(),
    number: string({ description: 'A phone number.' }),
    billing_address: ref('BillingAddress'),
  }),
  ProvisionNetworkTokenRequest: object(
    {
      pan_alias: string({ description: 'A PAN alias of the vault.' }),
      exp_month: integer(1, 12),
      exp_year: { type: 'integer', description: 'Two digits or 2000-2099.' },
      holder_info: ref('HolderInfo'),
    },
    ['pan_alias', 'exp_month', 'exp_year'],
  ),
  NetworkToken: object(
    {
      data: object(
        {
          pan_alias: string({ minLength: 1 }),
          network_token_last4: string({ pattern: '^\\d{4}$' }),
          expires_at: ref('YearMonth'),
          state: { enum: ['ACTIVE', 'SUSPENDED', 'DELETED'] },
          created_at: ISO_UTC_MS,
          updated_at: ISO_UTC_MS,
          card: object(
            {
              last4: string({ pattern: '^\\d{4}$' }),
              bin: string({ pattern: '^\\d{6}$' }),
              expires_at: ref('YearMonth'),
              holder_info: ref('HolderInfo'),
            },
            ['last4', 'bin', 'expires_at'],
          ),
        },
        ['pan_alias', 'created_at', 'updated_at', 'card'],
        {
          description:
            'While provisioning is pending there is no `state`, `network_token_last4` nor `expires_at`.',
        },
      ),
    },
    ['data'],
  ),
  DeletedNetworkToken: {
    allOf: [ref('NetworkToken')],
    type: 'object',
    properties: {
      data: {
        type: 'object',
        required: ['state'],
        properties: {
          state: { const: 'DELETED' },
          card: { type: 'object', properties: { holder_info: false } },
        },
      },
    },
    description: 'State `DELETED`; `card` carries `last4`, `bin` and `expires_at` only.',
  },

  // Card attributes
  CardAttributesRequest: object(
    {
      number: string({
        pattern: '^(\\d(?:[ -]?\\d){5,18}|tok_.+)$',
        description:
          '6 digits: a BIN; more: a PAN (Luhn-valid above 11 digits); `tok_…`: an alias of the vault. ' +
          'Optional in the spec; the sandbox answers 400 without it (nothing to look up).',
      }),
    },
    ['number'],
  ),
  CardAttributes: object(
    {
      bin: {
        type: 'integer',
        minimum: 100000,
        maximum: 99999999,
        description: 'The matched 6- or 8-digit prefix.',
      },
      brand: { enum: Object.values(BRAND_NAMES) },
      issuing_organization: string(),
      card_type: { enum: [...CARD_TYPES] },
      card_category: { enum: [...CARD_CATEGORIES] },
      issuing_country_name: string(),
      issuing_country_code: string({ pattern: '^[A-Z]{2}$' }),
      maximum_pan_length: integer(12, 19),
      card_commercial_type: { enum: ['PERSONAL', 'COMMERCIAL'] },
      regulation_status: { enum: ['REGULATED', 'UNREGULATED'] },
      version: integer(19000101, 99991231, { description: '`YYYYMMDD` of the data set.' }),
      prepaid_type: { enum: ['RELOADABLE', 'NON_RELOADABLE'] },
      cobadged_brands: string(),
    },
    [
      'bin',
      'brand',
      'issuing_organization',
      'card_type',
      'card_category',
      'issuing_country_name',
      'issuing_country_code',
      'maximum_pan_length',
      'card_commercial_type',
      'regulation_status',
      'version',
    ],
  ),

  // Organization members
  MemberRole: { enum: ['owner', 'admin', 'developer', 'viewer'] },
  VaultMembership: object(
    {
      id: string({ pattern: '^[0-9A-Za-z]{11}$' }),
      name: string(),
      role: ref('MemberRole'),
      env_identifier: { enum: ['SANDBOX', 'LIVE'] },
    },
    ['id', 'name', 'role', 'env_identifier'],
  ),
  User: object(
    {
      id: string({ pattern: '^US[0-9A-Za-z]{22}$' }),
      type: { const: 'users' },
      attributes: object(
        {
          created_at: ISO_UTC_MS,
          id: string({ pattern: '^US[0-9A-Za-z]{22}$' }),
          name: string(),
          email_address: string({ format: 'email' }),
          vaults: arrayOf(ref('VaultMembership')),
          role: ref('MemberRole'),
          permissions: arrayOf({ enum: ['read', 'write', 'admin'] }, { uniqueItems: true }),
          sso_id: string({ format: 'uuid' }),
        },
        ['created_at', 'id', 'name', 'email_address', 'vaults', 'role', 'permissions', 'sso_id'],
      ),
    },
    ['id', 'type', 'attributes'],
  ),
  Invite: object(
    {
      id: string({ pattern: '^IN[0-9A-Za-z]{22}$' }),
      type: { const: 'invites' },
      attributes: object(
        {
          created_at: ISO_UTC_MS,
          id: string({ pattern: '^IN[0-9A-Za-z]{22}$' }),
          email_address: string({ format: 'email' }),
          role: ref('MemberRole'),
          vaults: arrayOf(ref('VaultMembership')),
          invited_by: string({ pattern: '^US[0-9A-Za-z]{22}$', description: '`id` of the inviting member.' }),
          state: { const: 'pending' },
        },
        ['created_at', 'id', 'email_address', 'role', 'vaults', 'invited_by', 'state'],
      ),
    },
    ['id', 'type', 'attributes'],
  ),
  PageLinks: object(
    {
      self: string({ format: 'uri-reference' }),
      first: string({ format: 'uri-reference' }),
      last: string({ format: 'uri-reference' }),
      prev: { type: ['string', 'null'], format: 'uri-reference' },
      next: { type: ['string', 'null'], format: 'uri-reference' },
    },
    ['self', 'first', 'last', 'prev', 'next'],
    {
      description: 'Path-absolute links carrying explicit `page[number]` and `page[size]`; null when absent.',
    },
  ),
  PageMeta: object({ total: { type: 'integer', minimum: 0, description: 'Items in all pages.' } }, ['total']),
  UserPage: object({ data: arrayOf(ref('User')), links: ref('PageLinks'), meta: ref('PageMeta') }, [
    'data',
    'links',
    'meta',
  ]),
  InvitePage: object({ data: arrayOf(ref('Invite')), links: ref('PageLinks'), meta: ref('PageMeta') }, [
    'data',
    'links',
    'meta',
  ]),

  // Sandbox administration
  WebhookEndpointRequest: object(
    {
      url: string({ maxLength: 2048, description: 'Absolute http(s) URL, no credentials nor fragment.' }),
      secret: string({
        pattern: '^[\\x21-\\x7E]{16,256}$',
        description: 'Signing secret; generated (`whsec_` + 32 Base62 characters) when absent.',
      }),
    },
    ['url'],
  ),
  WebhookEndpoint: object(
    {
      id: string({ pattern: '^whe_[0-9A-Za-z]{22}$' }),
      url: string({ format: 'uri' }),
      createdAt: ISO_UTC_MS,
    },
    ['id', 'url', 'createdAt'],
    { description: 'A registered endpoint; the secret is shown only when it is created.' },
  ),
  CreatedWebhookEndpoint: object(
    {
      id: string({ pattern: '^whe_[0-9A-Za-z]{22}$' }),
      url: string({ format: 'uri' }),
      createdAt: ISO_UTC_MS,
      secret: string({ minLength: 16 }),
    },
    ['id', 'url', 'createdAt', 'secret'],
  ),
  DeliveryRecord: object(
    {
      notificationId: string({ format: 'uuid' }),
      endpointId: string({ pattern: '^whe_[0-9A-Za-z]{22}$' }),
      vault: string(),
      event: string(),
      attempt: { type: 'integer', minimum: 1 },
      status: integer(100, 599, { description: 'HTTP status of the receiver, when it answered.' }),
      error: string({ description: 'Transport failure or `endpoint-removed`, when it did not.' }),
      at: ISO_UTC_MS,
      outcome: { enum: ['retrying', 'delivered', 'failed'] },
    },
    ['notificationId', 'endpointId', 'vault', 'event', 'attempt', 'at', 'outcome'],
  ),
  DeliveryList: object({ data: arrayOf(ref('DeliveryRecord')) }, ['data']),
};

// ---------------------------------------------------------------------------------------------------
// Paths

const CI = { mediaType: JSON_API_MEDIA_TYPE, authenticated: true };
const V1 = { mediaType: JSON_MEDIA_TYPE, authenticated: true };
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
    post: {
      operationId: 'createCard',
      summary: 'Create a card (vaults the PAN and CVC, returns aliases)',
      description:
        'Test cards ending 4401, 4403, 4500, 4502, 4503, 4504 answer that status; 4998 answers 504 after the hang.',
      tags: [TAG.cardInterface],
      security: bearer('cards:write'),
      requestBody: jsonBody(JSON_API_MEDIA_TYPE, ref('CardCreateRequest')),
      responses: responses(
        { ...CI, body: true, pathParameters: false },
        {
          '201': ok('The card record.', JSON_API_MEDIA_TYPE, ref('CardInterfaceCard')),
          '401': errorResponse(
            401,
            JSON_API_MEDIA_TYPE,
            ['unauthorized'],
            'Bad token (with WWW-Authenticate), or the simulated upstream fault of test card 4401 (without).',
            { wwwAuthenticateOptional: true },
          ),
          '403': errorResponse(403, JSON_API_MEDIA_TYPE, ['forbidden'], 'Scope missing, or test card 4403.'),
          '502': errorResponse(502, JSON_API_MEDIA_TYPE, ['bad-gateway'], 'Test card 4502.'),
          '503': errorResponse(503, JSON_API_MEDIA_TYPE, ['service-unavailable'], 'Test card 4503.'),
          '504': errorResponse(504, JSON_API_MEDIA_TYPE, ['gateway-timeout'], 'Test cards 4504 and 4998.'),
        },
      ),
    },
  },
  [`${CARD_INTERFACE_PREFIX}/cards/{card_id}`]: {
    parameters: [CARD_ID_PARAMETER],
    get: {
      operationId: 'getCard',
      summary: 'Get a card (sandbox addition, gap decisions)',
      tags: [TAG.cardInterface],
      security: bearer('cards:read'),
      responses: responses(
        { ...CI, body: false, pathParameters: true },
        {
          '200': ok('The card record.', JSON_API_MEDIA_TYPE, ref('CardInterfaceCard')),
          '404': errorResponse(404, JSON_API_MEDIA_TYPE, ['card-not-found'], 'No such card in the vault.'),
        },
      ),
    },
  },
  [`${CARD_INTERFACE_PREFIX}/cards/{card_id}/card-update-subscriptions`]: {
    parameters: [CARD_ID_PARAMETER],
    post: {
      operationId: 'subscribeCard',
      summary: 'Subscribe a card to account updater',
      description:
        'An already subscribed card answers its subscription unchanged; test cards 4002 answer `failed`.',
      tags: [TAG.cardInterface],
      security: bearer('cards:write'),
      responses: responses(
        { ...CI, body: false, pathParameters: true },
        {
          '200': ok('The subscription.', JSON_API_MEDIA_TYPE, ref('CardUpdateSubscription')),
          '404': errorResponse(404, JSON_API_MEDIA_TYPE, ['card-not-found'], 'No such card in the vault.'),
          '422': errorResponse(422, JSON_API_MEDIA_TYPE, ['card-brand-not-supported'], 'Diners Club or JCB.'),
        },
      ),
    },
    delete: {
      operationId: 'unsubscribeCard',
      summary: 'Unsubscribe a card from account updater (idempotent)',
      tags: [TAG.cardInterface],
      security: bearer('cards:write'),
      responses: responses(
        { ...CI, body: false, pathParameters: true },
        {
          '204': { description: 'Unsubscribed (or was not subscribed).' },
          '404': errorResponse(404, JSON_API_MEDIA_TYPE, ['card-not-found'], 'No such card in the vault.'),
        },
      ),
    },
  },
  [`${CARD_INTERFACE_PREFIX}/cards/{card_id}/check`]: {
    parameters: [CARD_ID_PARAMETER],
    post: {
      operationId: 'checkCard',
      summary: 'On-demand check of a card (stateless)',
      tags: [TAG.cardInterface],
      security: bearer('cards:write'),
      responses: responses(
        { ...CI, body: false, pathParameters: true },
        {
          '200': ok('The latest card data.', JSON_API_MEDIA_TYPE, ref('CardUpdates')),
          '404': errorResponse(404, JSON_API_MEDIA_TYPE, ['card-not-found'], 'No such card in the vault.'),
          '422': errorResponse(
            422,
            JSON_API_MEDIA_TYPE,
            ['account-updater-not-supported'],
            'American Express or Discover card without subscription.',
          ),
        },
      ),
    },
  },

  [`${ACCOUNT_UPDATER_PREFIX}/cards`]: {
    post: {
      operationId: 'enrolCard',
      summary: 'Enrol a card in account updater (asynchronous)',
      tags: [TAG.accountUpdater],
      security: bearer('cards:write'),
      requestBody: jsonBody(JSON_MEDIA_TYPE, ref('EnrolRequest')),
      responses: responses(
        { ...V1, body: true, pathParameters: false },
        {
          '201': ok(
            'The card, `enrolling` or (mock cards) `enrolled`.',
            JSON_MEDIA_TYPE,
            ref('AccountUpdaterCard'),
          ),
          '404': errorResponse(404, JSON_MEDIA_TYPE, ['merchant-not-found'], 'Unknown service_merchant_id.'),
          '422': errorResponse(
            422,
            JSON_MEDIA_TYPE,
            ['card-brand-not-supported', 'account-updater-not-supported'],
            'Diners Club or JCB; test card 1099.',
          ),
        },
      ),
    },
  },
  [`${ACCOUNT_UPDATER_PREFIX}/cards/{card_id}`]: {
    parameters: [CARD_ID_PARAMETER],
    get: {
      operationId: 'getAccountUpdaterCard',
      summary: 'Get an enrolled card',
      description: 'An id not matching `^CRD.*$` answers 400; mock enrolments answer 404.',
      tags: [TAG.accountUpdater],
      security: bearer('cards:read'),
      responses: responses(
        { ...V1, body: false, pathParameters: true },
        {
          '200': ok('The card.', JSON_MEDIA_TYPE, ref('AccountUpdaterCard')),
          '404': errorResponse(404, JSON_MEDIA_TYPE, ['card-not-found'], 'No such card in the vault.'),
        },
      ),
    },
  },
  [`${ACCOUNT_UPDATER_PREFIX}/card-check`]: {
    post: {
      operationId: 'checkAccountUpdaterCard',
      summary: 'Stateless card check',
      tags: [TAG.accountUpdater],
      security: bearer('cards:write'),
      requestBody: jsonBody(JSON_MEDIA_TYPE, ref('CardCheckRequest')),
      responses: responses(
        { ...V1, body: true, pathParameters: false },
        {
          '200': ok('The check result.', JSON_MEDIA_TYPE, ref('CardCheckResult')),
          '404': errorResponse(404, JSON_MEDIA_TYPE, ['merchant-not-found'], 'Unknown service_merchant_id.'),
          '422': errorResponse(
            422,
            JSON_MEDIA_TYPE,
            ['card-brand-not-supported', 'account-updater-not-supported'],
            'American Express or Discover card not enrolled in the vault.',
          ),
        },
      ),
    },
  },

  [`${ACCOUNT_UPDATER_PREFIX}/network-tokens`]: {
    post: {
      operationId: 'provisionNetworkToken',
      summary: 'Provision a network token (asynchronous)',
      tags: [TAG.networkTokens],
      security: bearer('network-tokens:write'),
      requestBody: jsonBody(JSON_MEDIA_TYPE, ref('ProvisionNetworkTokenRequest')),
      responses: responses(
        { ...V1, body: true, pathParameters: false },
        {
          '200': ok(
            'The card already has a token (not DELETED): that token.',
            JSON_MEDIA_TYPE,
            ref('NetworkToken'),
          ),
          '202': ok('Provisioning accepted; no final state yet.', JSON_MEDIA_TYPE, ref('NetworkToken')),
          '404': errorResponse(
            404,
            JSON_MEDIA_TYPE,
            ['not-found', 'declined'],
            'Alias unknown to the vault; test cards 5404.',
          ),
          '422': errorResponse(
            422,
            JSON_MEDIA_TYPE,
            [
              'required-fields-missing',
              'invalid-format',
              'card-brand-not-supported',
              'card-not-allowed',
              'rejected',
            ],
            'Missing or malformed members, Diners Club or JCB, expired card, test cards 5422 and 5423.',
          ),
        },
      ),
    },
  },
  [`${ACCOUNT_UPDATER_PREFIX}/network-tokens/{pan_alias}`]: {
    parameters: [PAN_ALIAS_PARAMETER],
    get: {
      operationId: 'getNetworkToken',
      summary: 'Get the network token of a card',
      tags: [TAG.networkTokens],
      security: bearer('network-tokens:read'),
      responses: responses(
        { ...V1, body: false, pathParameters: true },
        {
          '200': ok('The token with card info and holder_info.', JSON_MEDIA_TYPE, ref('NetworkToken')),
          '404': errorResponse(404, JSON_MEDIA_TYPE, ['not-found'], 'No token for this alias in the vault.'),
        },
      ),
    },
    delete: {
      operationId: 'deleteNetworkToken',
      summary: 'Delete the network token of a card (idempotent)',
      tags: [TAG.networkTokens],
      security: bearer('network-tokens:write'),
      responses: responses(
        { ...V1, body: false, pathParameters: true },
        {
          '200': ok('The token in state DELETED.', JSON_MEDIA_TYPE, ref('DeletedNetworkToken')),
          '404': errorResponse(404, JSON_MEDIA_TYPE, ['not-found'], 'No token for this alias in the vault.'),
        },
      ),
    },
  },

  [`${CARD_ATTRIBUTES_PREFIX}/attributes/attributes`]: {
    post: {
      operationId: 'lookupCardAttributes',
      summary: 'Card product attributes of a BIN, PAN or alias',
      tags: [TAG.cardAttributes],
      security: bearer('card-attributes:basic'),
      requestBody: jsonBody(JSON_MEDIA_TYPE, ref('CardAttributesRequest')),
      responses: responses(
        { ...V1, body: true, pathParameters: false },
        {
          '200': ok('The attributes.', JSON_MEDIA_TYPE, ref('CardAttributes')),
          '404': errorResponse(
            404,
            JSON_MEDIA_TYPE,
            ['not-found'],
            'Alias unknown to the vault, or BIN not in the table.',
          ),
        },
      ),
    },
  },

  [`${ACCOUNTS_PREFIX}/organizations/{organizationId}/members`]: {
    parameters: [pathParameter('organizationId', 'Organization id (24 characters).')],
    get: {
      operationId: 'listOrganizationMembers',
      summary: 'Members of an organization (pending invitations excluded)',
      tags: [TAG.members],
      security: bearer('organization-users:read'),
      parameters: pageParameters,
      responses: responses(
        { mediaType: JSON_API_MEDIA_TYPE, authenticated: true, body: false, pathParameters: true },
        {
          '200': ok('One page of users, oldest first.', JSON_API_MEDIA_TYPE, ref('UserPage')),
          '404': errorResponse(404, JSON_API_MEDIA_TYPE, ['not-found'], 'No such organization.'),
        },
      ),
    },
  },
  [`${ACCOUNTS_PREFIX}/organizations/{organizationId}/invites`]: {
    parameters: [pathParameter('organizationId', 'Organization id (24 characters).')],
    get: {
      operationId: 'listOrganizationInvites',
      summary: 'Pending invitations of an organization',
      tags: [TAG.members],
      security: bearer('organization-users:read'),
      parameters: pageParameters,
      responses: responses(
        { mediaType: JSON_API_MEDIA_TYPE, authenticated: true, body: false, pathParameters: true },
        {
          '200': ok('One page of invites, oldest first.', JSON_API_MEDIA_TYPE, ref('InvitePage')),
          '404': errorResponse(404, JSON_API_MEDIA_TYPE, ['not-found'], 'No such organization.'),
        },
      ),
    },
  },

  [WEBHOOK_ENDPOINTS_PATH]: {
    post: {
      operationId: 'createWebhookEndpoint',
      summary: "Register a webhook endpoint for the token's vault",
      tags: [TAG.admin],
      security: bearer('cards:write'),
      requestBody: jsonBody(JSON_MEDIA_TYPE, ref('WebhookEndpointRequest')),
      responses: responses(
        { ...V1, body: true, pathParameters: false },
        {
          '201': ok(
            'The endpoint with its secret (shown only here).',
            JSON_MEDIA_TYPE,
            object({ data: ref('CreatedWebhookEndpoint') }, ['data']),
            { Location: { description: 'Path of the new endpoint.', required: true, schema: string() } },
          ),
          '409': errorResponse(
            409,
            JSON_MEDIA_TYPE,
            ['conflict'],
            'The vault has an endpoint with this url.',
          ),
        },
      ),
    },
    get: {
      operationId: 'listWebhookEndpoints',
      summary: "Webhook endpoints of the token's vault (no secrets)",
      tags: [TAG.admin],
      security: bearer('cards:read'),
      responses: responses(
        { ...V1, body: false, pathParameters: false },
        {
          '200': ok(
            'Endpoints in registration order.',
            JSON_MEDIA_TYPE,
            object({ data: arrayOf(ref('WebhookEndpoint')) }, ['data']),
          ),
        },
      ),
    },
  },
  [`${WEBHOOK_ENDPOINTS_PATH}/{endpointId}`]: {
    parameters: [pathParameter('endpointId', 'Endpoint id (`whe_…`).')],
    get: {
      operationId: 'getWebhookEndpoint',
      summary: 'One webhook endpoint (no secret)',
      tags: [TAG.admin],
      security: bearer('cards:read'),
      responses: responses(
        { ...V1, body: false, pathParameters: true },
        {
          '200': ok('The endpoint.', JSON_MEDIA_TYPE, object({ data: ref('WebhookEndpoint') }, ['data'])),
          '404': errorResponse(
            404,
            JSON_MEDIA_TYPE,
            ['webhook-endpoint-not-found'],
            'No such endpoint in the vault.',
          ),
        },
      ),
    },
    delete: {
      operationId: 'deleteWebhookEndpoint',
      summary: 'Remove a webhook endpoint; its pending retries end as failed',
      tags: [TAG.admin],
      security: bearer('cards:write'),
      responses: responses(
        { ...V1, body: false, pathParameters: true },
        {
          '204': { description: 'Removed.' },
          '404': errorResponse(
            404,
            JSON_MEDIA_TYPE,
            ['webhook-endpoint-not-found'],
            'No such endpoint in the vault.',
          ),
        },
      ),
    },
  },
  [`${WEBHOOK_ENDPOINTS_PATH}/{endpointId}/deliveries`]: {
    parameters: [pathParameter('endpointId', 'Endpoint id (`whe_…`).')],
    get: {
      operationId: 'listWebhookEndpointDeliveries',
      summary: 'Delivery attempts to one endpoint, oldest first',
      tags: [TAG.admin],
      security: bearer('cards:read'),
      responses: responses(
        { ...V1, body: false, pathParameters: true },
        {
          '200': ok('The attempts.', JSON_MEDIA_TYPE, ref('DeliveryList')),
          '404': errorResponse(
            404,
            JSON_MEDIA_TYPE,
            ['webhook-endpoint-not-found'],
            'No such endpoint in the vault.',
          ),
        },
      ),
    },
  },
  [WEBHOOK_DELIVERIES_PATH]: {
    get: {
      operationId: 'listWebhookDeliveries',
      summary: 'Delivery attempts: every vault without a token, the token’s vault with one',
      tags: [TAG.admin],
      security: [{}, { oauth2: ['cards:read'] }],
      responses: responses(
        { ...V1, body: false, pathParameters: false },
        { '200': ok('The attempts, oldest first.', JSON_MEDIA_TYPE, ref('DeliveryList')) },
      ),
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'getOpenApiDocument',
      summary: 'This document',
      tags: [TAG.admin],
      security: [],
      responses: {
        '200': ok('The OpenAPI 3.1 document.', JSON_MEDIA_TYPE, {
          type: 'object',
          required: ['openapi', 'info', 'paths'],
          properties: { openapi: { const: '3.1.0' } },
        }),
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
    schemas,
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
