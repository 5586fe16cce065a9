import type { ServerResponse } from 'node:http';
import type { z } from 'zod';
import { JSON_API_MEDIA_TYPE, JSON_MEDIA_TYPE } from './http.ts';
import {
  type ComponentName,
  type JsonSchema,
  type OpenApiDocument,
  type OpenApiMethod,
  type OpenApiOperation,
  type OpenApiResponse,
  SANDBOX_COMPONENTS,
  SANDBOX_OPENAPI,
} from './openapi.ts';

/**
 * Checks the sandbox's answers against its OpenAPI 3.1 document (`openapi.ts`): the status is declared
 * for the path and method, the media type is declared for that status, required headers are present,
 * and the body parses with the zod contract the document names (`$ref` to a component of
 * {@link SANDBOX_COMPONENTS}), with no member the contract does not list, and an error body carries the
 * declared status and one of the declared codes. The document and the check come from the same
 * schemas, so no second validator is needed. Problems never quote body values (bodies can hold card
 * numbers): they name the member and the rule.
 */

/** One answer of the sandbox that its OpenAPI document does not allow. */
export interface ResponseViolation {
  method: string;
  /** Request path without the query string. */
  path: string;
  status: number;
  /** What is wrong, e.g. `status 418 is not declared for GET /card-interface/cards/{card_id}`. */
  problem: string;
}

/** An answer as sent, for {@link ResponseValidator.check}. */
export interface SentResponse {
  method: string;
  /** Request path without the query string. */
  path: string;
  status: number;
  /** Response headers, names lower case (as `ServerResponse.getHeaders()` gives them). */
  headers: Record<string, number | string | string[] | undefined>;
  body: Buffer;
}

/** Validator of a document; see {@link responseValidatorFor}. */
export interface ResponseValidator {
  /** @returns the problems of one answer; empty when the document allows it. */
  check(response: SentResponse): string[];
}

const METHODS: readonly OpenApiMethod[] = ['get', 'post', 'delete'];
const COMPONENT_REF = '#/components/schemas/';

/**
 * A body rule of the document: the component whose zod schema parses it, and the constraints an
 * `allOf` adds to it (`errors[].status` const and `errors[].code` enum of an error answer, `error` enum
 * or const of an OAuth error).
 */
interface BodyRule {
  component: ComponentName;
  schema: z.ZodType;
  /** The component's generated JSON Schema, for the unknown-member check. */
  json: JsonSchema;
  errorStatus?: string;
  errorCodes?: readonly string[];
  oauthErrors?: readonly string[];
}

interface CompiledPath {
  template: string;
  segments: string[];
  /** Literal segments count: the most literal template wins when several match (OpenAPI 3.1 §4.8.8.2). */
  literals: number;
  operations: Map<string, Map<string, { response: OpenApiResponse; bodies: Map<string, BodyRule> }>>;
}

function bareMediaType(value: unknown): string {
  return (typeof value === 'string' ? value : '').split(';')[0]!.trim().toLowerCase();
}

/** A member name safe to quote: identifier-like, so never a card number. */
const QUOTABLE_MEMBER = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/** A body path for a problem: identifier-like members and indexes as they are, anything else `*`. */
function where(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return `/${path
    .map((key) => {
      const segment = String(key);
      return /^\d{1,5}$/.test(segment) || QUOTABLE_MEMBER.test(segment) ? segment : '*';
    })
    .join('/')}`;
}

/** Whether a body of `component` may be checked against `json` for unknown members at this node. */
function asObjectSchema(json: unknown): JsonSchema | undefined {
  return json !== null && typeof json === 'object' ? (json as JsonSchema) : undefined;
}

/**
 * Members of `value` the generated schema does not list, where it lists members and allows no others
 * (zod objects strip unknown members when parsing, so a leaked member would pass silently otherwise).
 */
function unknownMembers(json: JsonSchema | undefined, value: unknown, path: PropertyKey[] = []): string[] {
  if (!json || value === null || typeof value !== 'object') return [];
  if (Array.isArray(value)) {
    const items = asObjectSchema(json.items);
    return value.flatMap((item, index) => unknownMembers(items, item, [...path, index]));
  }
  const variants = (json.anyOf ?? json.oneOf) as JsonSchema[] | undefined;
  if (variants) {
    // The variant that fits best (fewest unknown members) decides.
    const found = variants.map((variant) => unknownMembers(variant, value, path));
    return found.reduce((best, next) => (next.length < best.length ? next : best), found[0] ?? []);
  }
  const properties = asObjectSchema(json.properties);
  if (!properties) return [];
  const problems: string[] = [];
  for (const [member, memberValue] of Object.entries(value)) {
    const memberSchema = asObjectSchema(properties[member]);
    if (memberSchema) problems.push(...unknownMembers(memberSchema, memberValue, [...path, member]));
    else if (json.additionalProperties === undefined || json.additionalProperties === false) {
      problems.push(
        `${where(path)} has a member the contract does not list (${QUOTABLE_MEMBER.test(member) ? member : 'a member'})`,
      );
    }
  }
  return problems;
}

/** The rule of one response content schema of the document. */
function bodyRuleOf(schema: JsonSchema, components: Record<string, JsonSchema>): BodyRule {
  const parts = (schema.allOf as JsonSchema[] | undefined) ?? [schema];
  const reference = parts.find((part) => typeof part.$ref === 'string')?.$ref as string | undefined;
  if (!reference?.startsWith(COMPONENT_REF)) throw new Error('a response schema must name a component');
  const component = reference.slice(COMPONENT_REF.length) as ComponentName;
  const rule: BodyRule = {
    component,
    schema: SANDBOX_COMPONENTS[component],
    json: components[component] ?? {},
  };
  for (const part of parts) {
    const properties = part.properties as Record<string, JsonSchema> | undefined;
    const item = (properties?.errors?.items as JsonSchema | undefined)?.properties as
      | Record<string, JsonSchema>
      | undefined;
    if (item?.status?.const !== undefined) rule.errorStatus = String(item.status.const);
    if (item?.code?.enum) rule.errorCodes = item.code.enum as string[];
    const error = properties?.error;
    if (error?.enum) rule.oauthErrors = error.enum as string[];
    else if (error?.const !== undefined) rule.oauthErrors = [String(error.const)];
  }
  return rule;
}

class DocumentResponseValidator implements ResponseValidator {
  readonly #paths: CompiledPath[] = [];
  readonly #errorDocument: BodyRule;

  constructor(document: OpenApiDocument) {
    const components = document.components.schemas;
    this.#errorDocument = bodyRuleOf({ $ref: `${COMPONENT_REF}ErrorDocument` }, components);
    for (const [template, item] of Object.entries(document.paths)) {
      const segments = template.split('/').slice(1);
      const operations: CompiledPath['operations'] = new Map();
      for (const method of METHODS) {
        const operation: OpenApiOperation | undefined = item[method];
        if (!operation) continue;
        const compiled = new Map<string, { response: OpenApiResponse; bodies: Map<string, BodyRule> }>();
        for (const [status, response] of Object.entries(operation.responses)) {
          const bodies = new Map<string, BodyRule>();
          for (const [mediaType, content] of Object.entries(response.content ?? {})) {
            bodies.set(mediaType, bodyRuleOf(content.schema, components));
          }
          compiled.set(status, { response, bodies });
        }
        operations.set(method.toUpperCase(), compiled);
      }
      const literals = segments.filter((segment) => !segment.startsWith('{')).length;
      this.#paths.push({ template, segments, literals, operations });
    }
  }

  #match(path: string): CompiledPath | undefined {
    const parts = path.split('/').slice(1);
    let best: CompiledPath | undefined;
    for (const candidate of this.#paths) {
      if (candidate.segments.length !== parts.length) continue;
      const fits = candidate.segments.every((segment, i) =>
        segment.startsWith('{') ? parts[i] !== '' : segment === parts[i],
      );
      if (fits && (!best || candidate.literals > best.literals)) best = candidate;
    }
    return best;
  }

  /** The generic answers allowed everywhere: 404 for unknown paths, 405 for undeclared methods. */
  #checkGeneric(response: SentResponse, expected: 404 | 405, why: string): string[] {
    if (response.status !== expected) return [`status ${response.status} for ${why} (expected ${expected})`];
    const problems: string[] = [];
    const mediaType = bareMediaType(response.headers['content-type']);
    if (mediaType !== JSON_MEDIA_TYPE && mediaType !== JSON_API_MEDIA_TYPE) {
      problems.push(`media type ${mediaType || '(none)'} of a ${expected} answer is not a JSON media type`);
    }
    if (expected === 405 && response.headers.allow === undefined) problems.push('405 answer without Allow');
    problems.push(...this.#checkBody(response.body, this.#errorDocument));
    return problems;
  }

  #checkBody(body: Buffer, rule: BodyRule): string[] {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return ['body is not JSON'];
    }
    const problems: string[] = [];
    const result = rule.schema.safeParse(parsed);
    if (!result.success) {
      problems.push(
        ...result.error.issues.map(
          (issue) => `${where(issue.path)} breaks ${rule.component} (${issue.code})`,
        ),
      );
    }
    problems.push(...unknownMembers(rule.json, parsed));
    const errors = (parsed as { errors?: { status?: unknown; code?: unknown }[] } | null)?.errors;
    if (Array.isArray(errors) && (rule.errorStatus !== undefined || rule.errorCodes)) {
      errors.forEach((error, index) => {
        if (rule.errorStatus !== undefined && error?.status !== rule.errorStatus) {
          problems.push(`/errors/${index}/status is not ${rule.errorStatus}`);
        }
        if (rule.errorCodes && !rule.errorCodes.includes(String(error?.code))) {
          problems.push(`/errors/${index}/code is not one of ${rule.errorCodes.join(', ')}`);
        }
      });
    }
    const oauthError = (parsed as { error?: unknown } | null)?.error;
    if (rule.oauthErrors && !rule.oauthErrors.includes(String(oauthError))) {
      problems.push(`/error is not one of ${rule.oauthErrors.join(', ')}`);
    }
    return problems.length > 0 ? [`body: ${problems.join('; ')}`] : [];
  }

  check(response: SentResponse): string[] {
    const path = this.#match(response.path);
    if (!path) return this.#checkGeneric(response, 404, 'a path the document does not list');
    const operation = path.operations.get(response.method);
    if (!operation) return this.#checkGeneric(response, 405, `${response.method} on ${path.template}`);
    const at = `${response.method} ${path.template}`;
    const declared =
      operation.get(String(response.status)) ??
      operation.get(`${Math.floor(response.status / 100)}XX`) ??
      operation.get('default');
    if (!declared) return [`status ${response.status} is not declared for ${at}`];

    const problems: string[] = [];
    for (const [name, header] of Object.entries(declared.response.headers ?? {})) {
      if (header.required && response.headers[name.toLowerCase()] === undefined) {
        problems.push(`required header ${name} is missing`);
      }
    }
    if (declared.bodies.size === 0) {
      if (response.body.length > 0) problems.push(`a ${response.status} answer of ${at} must have no body`);
      return problems;
    }
    const mediaType = bareMediaType(response.headers['content-type']);
    const rule = declared.bodies.get(mediaType);
    if (!rule) {
      const allowed = [...declared.bodies.keys()].join(', ');
      return [...problems, `media type ${mediaType || '(none)'} is not declared (expected ${allowed})`];
    }
    problems.push(...this.#checkBody(response.body, rule));
    return problems;
  }
}

const validators = new WeakMap<OpenApiDocument, ResponseValidator>();

/**
 * The validator of a document, built on first use and shared after.
 * @param document {@link SANDBOX_OPENAPI} by default.
 * @throws Error when a response schema of the document names no component.
 */
export function responseValidatorFor(document: OpenApiDocument = SANDBOX_OPENAPI): ResponseValidator {
  let validator = validators.get(document);
  if (!validator) {
    validator = new DocumentResponseValidator(document);
    validators.set(document, validator);
  }
  return validator;
}
/** What {@link captureResponse} saw of a response. */
export interface CapturedResponse {
  /** Body bytes written so far (`write` and `end` chunks). */
  body(): Buffer;
  /**
   * Headers as sent, names lower case: those given to `writeHead` (which `getHeaders()` does not
   * report) over those set with `setHeader`.
   */
  headers(): Record<string, number | string | string[] | undefined>;
}

/** Records what a response writes, for validation once it finishes. */
export function captureResponse(res: ServerResponse): CapturedResponse {
  const chunks: Buffer[] = [];
  const written: Record<string, number | string | string[] | undefined> = {};
  const keep = (chunk: unknown, encoding?: unknown): void => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    if (typeof chunk === 'string') {
      chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    } else if (chunk instanceof Uint8Array) {
      chunks.push(Buffer.from(chunk));
    }
  };
  const keepHeaders = (headers: unknown): void => {
    if (Array.isArray(headers)) {
      // Raw form: [name, value, name, value, …].
      for (let i = 0; i + 1 < headers.length; i += 2)
        written[String(headers[i]).toLowerCase()] = String(headers[i + 1]);
    } else if (headers && typeof headers === 'object') {
      for (const [name, value] of Object.entries(headers)) written[name.toLowerCase()] = value as string;
    }
  };
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = ((...args: unknown[]) => {
    keepHeaders(typeof args[1] === 'string' ? args[2] : args[1]);
    return writeHead(...args);
  }) as ServerResponse['writeHead'];
  res.write = ((...args: unknown[]) => {
    keep(args[0], args[1]);
    return write(...args);
  }) as ServerResponse['write'];
  res.end = ((...args: unknown[]) => {
    keep(args[0], args[1]);
    return end(...args);
  }) as ServerResponse['end'];
  return {
    body: () => Buffer.concat(chunks),
    headers: () => ({ ...res.getHeaders(), ...written }),
  };
}
