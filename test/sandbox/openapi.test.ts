import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/sandbox/http.ts';
import {
  componentSchema,
  type OpenApiOperation,
  type OpenApiParameter,
  SANDBOX_COMPONENTS,
  SANDBOX_OPENAPI,
} from '../../src/sandbox/openapi.ts';
import { responseValidatorFor, type SentResponse } from '../../src/sandbox/response-validation.ts';
import { startSandbox, type TestSandbox } from '../support/fixtures.ts';

const document = SANDBOX_OPENAPI;

/** Escapes one JSON pointer token (RFC 6901). */
const pointerToken = (token: string) => token.replaceAll('~', '~0').replaceAll('/', '~1');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Every operation with its path and method. */
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  METHODS.flatMap((method) => {
    const operation = (item as Record<string, unknown>)[method] as OpenApiOperation | undefined;
    return operation ? [{ path, method, operation, pathParameters: item.parameters ?? [] }] : [];
  }),
);

/** Every `$ref` value in the document with the JSON pointer of the object holding it. */
function references(node: unknown, at = ''): { at: string; ref: string }[] {
  if (Array.isArray(node)) return node.flatMap((item, i) => references(item, `${at}/${i}`));
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === '$ref' && typeof value === 'string'
      ? [{ at, ref: value }]
      : references(value, `${at}/${pointerToken(key)}`),
  );
}

function resolvePointer(root: unknown, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>(
      (node, token) =>
        node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[token] : undefined,
      root,
    );
}

describe('the OpenAPI 3.1 document', () => {
  it('is an OpenAPI 3.1 document with the JSON Schema 2020-12 dialect that survives JSON', () => {
    const parsed = JSON.parse(JSON.stringify(document));
    expect(parsed).toEqual(document);
    expect(parsed.openapi).toBe('3.1.0');
    expect(parsed.jsonSchemaDialect).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(parsed.info.title).toBe('cardgraph embedded sandbox');
    expect(typeof parsed.info.version).toBe('string');
    const allowedRoot = [
      'openapi',
      'info',
      'jsonSchemaDialect',
      'servers',
      'paths',
      'webhooks',
      'components',
    ];
    for (const key of Object.keys(parsed))
      expect([...allowedRoot, 'security', 'tags', 'externalDocs']).toContain(key);
  });

  it('describes the token endpoint and the five areas', () => {
    const tags = new Set(operations.flatMap((o) => o.operation.tags));
    expect(tags).toEqual(
      new Set([
        'OAuth',
        'Card interface',
        'Account updater v1',
        'Network tokens',
        'Card attributes',
        'Organization members',
        'Sandbox administration',
      ]),
    );
    expect(operations.map((o) => `${o.method.toUpperCase()} ${o.path}`).sort()).toEqual(
      [
        'POST /oauth/token',
        'POST /card-interface/cards',
        'GET /card-interface/cards/{card_id}',
        'POST /card-interface/cards/{card_id}/card-update-subscriptions',
        'DELETE /card-interface/cards/{card_id}/card-update-subscriptions',
        'POST /card-interface/cards/{card_id}/check',
        'POST /account-updater/cards',
        'GET /account-updater/cards/{card_id}',
        'POST /account-updater/card-check',
        'POST /account-updater/network-tokens',
        'GET /account-updater/network-tokens/{pan_alias}',
        'DELETE /account-updater/network-tokens/{pan_alias}',
        'POST /card-attributes/attributes/attributes',
        'GET /accounts/organizations/{organizationId}/members',
        'GET /accounts/organizations/{organizationId}/invites',
        'POST /sandbox/webhook-endpoints',
        'GET /sandbox/webhook-endpoints',
        'GET /sandbox/webhook-endpoints/{endpointId}',
        'DELETE /sandbox/webhook-endpoints/{endpointId}',
        'GET /sandbox/webhook-endpoints/{endpointId}/deliveries',
        'GET /sandbox/webhook-deliveries',
        'GET /openapi.json',
      ].sort(),
    );
  });

  it('resolves every $ref inside the document', () => {
    const refs = references(document);
    expect(refs.length).toBeGreaterThan(50);
    for (const { at, ref } of refs) {
      expect(ref.startsWith('#/'), `${at}: ${ref} is not local`).toBe(true);
      expect(resolvePointer(document, ref.slice(1)), `${at}: ${ref} does not resolve`).toBeDefined();
    }
  });

  it('gives every operation a unique operationId, tags, a summary and described responses', () => {
    const ids = operations.map((o) => o.operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const declaredTags = new Set(document.tags.map((tag) => tag.name));
    for (const { path, method, operation } of operations) {
      const where = `${method} ${path}`;
      expect(operation.summary.length, where).toBeGreaterThan(0);
      for (const tag of operation.tags) expect(declaredTags.has(tag), `${where}: tag ${tag}`).toBe(true);
      const statuses = Object.keys(operation.responses);
      expect(statuses.length, where).toBeGreaterThan(0);
      expect(
        statuses.some((s) => s.startsWith('2')),
        `${where}: no success response`,
      ).toBe(true);
      for (const status of statuses) {
        expect(status, where).toMatch(/^([1-5]\d\d|[1-5]XX|default)$/);
        expect(operation.responses[status]!.description.length, `${where} ${status}`).toBeGreaterThan(0);
      }
    }
  });

  it('declares each path template parameter as a required path parameter, and no other', () => {
    for (const { path, method, operation, pathParameters } of operations) {
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!).sort();
      const declared: OpenApiParameter[] = [...pathParameters, ...(operation.parameters ?? [])];
      const inPath = declared.filter((p) => p.in === 'path');
      expect(inPath.map((p) => p.name).sort(), `${method} ${path}`).toEqual(templated);
      for (const parameter of inPath) expect(parameter.required, `${method} ${path}`).toBe(true);
    }
  });

  it('uses only the declared security scheme and the scopes of contract §2', () => {
    const scheme = document.components.securitySchemes.oauth2 as {
      type: string;
      flows: { clientCredentials: { tokenUrl: string; scopes: Record<string, string> } };
    };
    expect(scheme.type).toBe('oauth2');
    expect(scheme.flows.clientCredentials.tokenUrl).toBe('/oauth/token');
    expect(Object.keys(scheme.flows.clientCredentials.scopes).sort()).toEqual([...SCOPES].sort());
    for (const { path, method, operation } of operations) {
      for (const requirement of operation.security) {
        for (const [name, scopes] of Object.entries(requirement)) {
          expect(name, `${method} ${path}`).toBe('oauth2');
          for (const scope of scopes)
            expect(SCOPES as readonly string[], `${method} ${path}`).toContain(scope);
        }
      }
    }
  });

  it('writes an open enumeration as a string with its known values as examples', () => {
    const card = document.components.schemas.CardInterfaceCard as {
      properties: { data: { properties: { attributes: { properties: Record<string, unknown> } } } };
    };
    const attributes = card.properties.data.properties.attributes.properties;
    expect(attributes.brand).toEqual({
      type: 'string',
      minLength: 1,
      examples: ['visa', 'mastercard', 'amex', 'discover', 'diners', 'jcb'],
    });
    expect(attributes.wallet_type).toEqual({ type: 'string', enum: ['apple_pay', 'google_pay'] });
  });

  it('generates every component from its zod contract, and names a component for every body', () => {
    for (const [name, schema] of Object.entries(SANDBOX_COMPONENTS)) {
      // The contract's wire side as JSON Schema; open enumerations as strings with their known values.
      expect(document.components.schemas[name], name).toEqual(componentSchema(schema));
    }
    expect(Object.keys(document.components.schemas).sort()).toEqual(Object.keys(SANDBOX_COMPONENTS).sort());
    const componentOf = (schema: Record<string, unknown>) => {
      const parts = (schema.allOf as Record<string, unknown>[] | undefined) ?? [schema];
      return parts.map((part) => part.$ref).find((ref) => typeof ref === 'string');
    };
    let bodies = 0;
    for (const { path, method, operation } of operations) {
      const contents = [
        ...Object.values(operation.requestBody?.content ?? {}),
        ...Object.values(operation.responses).flatMap((response) => Object.values(response.content ?? {})),
      ];
      for (const content of contents) {
        expect(componentOf(content.schema), `${method} ${path}`).toMatch(
          /^#\/components\/schemas\/[A-Za-z]+$/,
        );
        bodies++;
      }
    }
    expect(bodies).toBeGreaterThan(140);
  });
});

describe('the served document and every documented route', () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startSandbox();
  });
  afterAll(() => t.stop());

  it('is served at GET /openapi.json without a token', async () => {
    const response = await t.call('GET', '/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.body).toEqual(JSON.parse(JSON.stringify(document)));
    expect((await t.call('POST', '/openapi.json', { body: {} })).status).toBe(405);
  });

  it('matches a sandbox route for every documented operation (no 404/405), protected as documented', async () => {
    for (const { path, method, operation } of operations) {
      const concrete = path.replace(/\{[^}]+\}/g, 'CRDprobe');
      const response = await t.call(method.toUpperCase(), concrete);
      const where = `${method} ${path}`;
      expect(response.status, where).not.toBe(405);
      if (response.status === 404) expect(response.body.errors[0].detail, where).not.toBe('no such resource');
      const anonymousAllowed =
        operation.security.length === 0 || operation.security.some((r) => Object.keys(r).length === 0);
      if (!anonymousAllowed) expect(response.status, where).toBe(401);
    }
  });
});

describe('response validation', () => {
  const validator = responseValidatorFor();
  const json = (value: unknown) => Buffer.from(JSON.stringify(value));
  const notFound = (code: string, status = '404') => json({ errors: [{ status, code, detail: 'd' }] });
  const response = (overrides: Partial<SentResponse>): SentResponse => ({
    method: 'GET',
    path: '/card-interface/cards/CRDabc',
    status: 404,
    headers: { 'content-type': 'application/vnd.api+json' },
    body: notFound('card-not-found'),
    ...overrides,
  });

  it('accepts an answer the document declares', () => {
    expect(validator.check(response({}))).toEqual([]);
  });

  it('flags an undeclared status, media type, code, missing header and stray body', () => {
    expect(validator.check(response({ status: 409, body: notFound('conflict', '409') }))).toEqual([
      'status 409 is not declared for GET /card-interface/cards/{card_id}',
    ]);
    expect(validator.check(response({ headers: { 'content-type': 'application/json' } }))).toEqual([
      'media type application/json is not declared (expected application/vnd.api+json)',
    ]);
    expect(validator.check(response({ body: notFound('not-found') }))).toEqual([
      'body: /errors/0/code is not one of card-not-found',
    ]);
    expect(
      validator.check(
        response({
          status: 401,
          body: notFound('unauthorized', '401'),
          headers: { 'content-type': 'application/vnd.api+json' },
        }),
      ),
    ).toEqual(['required header WWW-Authenticate is missing']);
    expect(
      validator.check(
        response({
          method: 'DELETE',
          path: '/card-interface/cards/CRDabc/card-update-subscriptions',
          status: 204,
          headers: {},
          body: Buffer.from('x'),
        }),
      ),
    ).toEqual([
      'a 204 answer of DELETE /card-interface/cards/{card_id}/card-update-subscriptions must have no body',
    ]);
    expect(validator.check(response({ body: Buffer.from('<html>') }))).toEqual(['body is not JSON']);
  });

  it('allows 404 on unknown paths and 405 (with Allow) on undeclared methods only', () => {
    expect(validator.check(response({ path: '/nowhere', body: notFound('not-found') }))).toEqual([]);
    expect(validator.check(response({ path: '/nowhere', status: 200, body: json({}) }))).toEqual([
      'status 200 for a path the document does not list (expected 404)',
    ]);
    const notAllowed = json({ errors: [{ status: '405', code: 'method-not-allowed', detail: 'd' }] });
    expect(
      validator.check(
        response({
          method: 'PUT',
          status: 405,
          body: notAllowed,
          headers: { 'content-type': 'application/vnd.api+json', allow: 'GET' },
        }),
      ),
    ).toEqual([]);
    expect(validator.check(response({ method: 'PUT', status: 405, body: notAllowed }))).toEqual([
      '405 answer without Allow',
    ]);
  });

  it('never quotes body values in a problem, and flags members the contract does not list', () => {
    const pan = '4111111111111111';
    /** The problems of a 200 card check answer with this `data.id` and these `data.attributes`. */
    const checkAnswer = (id: string, attributes: Record<string, unknown>) =>
      validator.check(
        response({
          method: 'POST',
          path: '/card-interface/cards/CRDabc/check',
          status: 200,
          body: json({ data: { type: 'card_updates', id, attributes } }),
        }),
      );
    const problems = checkAnswer(pan, { event: 'valid', updated_values: [], [pan]: pan });
    expect(problems).toEqual([
      'body: /data/id breaks CardUpdates (invalid_format); /data/attributes has a member the contract does not list (a member)',
    ]);
    const named = checkAnswer('CRDabcdefghijklmnopqrstuv', { event: 'valid', updated_values: [], pan });
    expect(named).toEqual(['body: /data/attributes has a member the contract does not list (pan)']);
  });
});
