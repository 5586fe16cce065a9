import type { ServerResponse } from 'node:http';
import { Ajv2020, type ErrorObject as AjvError, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { JSON_API_MEDIA_TYPE, JSON_MEDIA_TYPE } from './http.ts';
import {
  type OpenApiDocument,
  type OpenApiMethod,
  type OpenApiOperation,
  type OpenApiResponse,
  SANDBOX_OPENAPI,
} from './openapi.ts';

/**
 * Checks the sandbox's answers against its OpenAPI 3.1 document (`openapi.ts`): the status is declared
 * for the path and method, the media type is declared for that status, required headers are present,
 * and the body validates against the declared JSON Schema 2020-12 (ajv, every schema compiled once per
 * document). Problems never quote body values (bodies can hold card numbers): they name the member and
 * the rule.
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

/** The document's URI inside ajv; `$ref`s are resolved against it. */
const DOCUMENT_ID = 'https://cardgraph.invalid/sandbox/openapi.json';
/** Fields of an OpenAPI document root, registered as annotations so ajv's strict mode accepts the root. */
const OPENAPI_ROOT_FIELDS = [
  'openapi',
  'info',
  'jsonSchemaDialect',
  'servers',
  'paths',
  'webhooks',
  'components',
  'security',
  'tags',
  'externalDocs',
];
const METHODS: readonly OpenApiMethod[] = ['get', 'post', 'delete'];

// ajv-formats is CommonJS: under Node's ESM loader its default export is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

/**
 * A strict ajv (JSON Schema 2020-12, formats) holding `document` under {@link DOCUMENT_ID}, so any
 * JSON pointer into it compiles with the document's own `#/components/schemas/…` references.
 * @throws Error when a schema is invalid under strict mode (unknown keyword, bad `$ref`, …).
 */
export function createDocumentAjv(document: OpenApiDocument): Ajv2020 {
  const ajv = new Ajv2020({
    strict: true,
    // Union types and `required` without a sibling `properties` (oneOf/not branches) are sound 2020-12.
    allowUnionTypes: true,
    strictRequired: false,
    allErrors: true,
  });
  addFormats(ajv);
  ajv.addVocabulary(OPENAPI_ROOT_FIELDS);
  ajv.addSchema(document as unknown as object, DOCUMENT_ID);
  return ajv;
}

/** Escapes one JSON pointer token (RFC 6901). */
export function pointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * Compiles the schema at a JSON pointer of the document (e.g. `/components/schemas/Card`).
 * @throws Error when it does not compile.
 */
export function compileAt(ajv: Ajv2020, pointer: string): ValidateFunction {
  return ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
}

interface CompiledResponse {
  response: OpenApiResponse;
  /** media type → body validator. */
  validators: Map<string, ValidateFunction>;
}

interface CompiledPath {
  template: string;
  segments: string[];
  /** Literal segments count: the most literal template wins when several match (OpenAPI 3.1 §4.8.8.2). */
  literals: number;
  operations: Map<string, Map<string, CompiledResponse>>;
}

function bareMediaType(value: unknown): string {
  return (typeof value === 'string' ? value : '').split(';')[0]!.trim().toLowerCase();
}

/** A member name safe to quote: identifier-like, so never a card number. */
const QUOTABLE_MEMBER = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

/**
 * `/instancePath message` of each ajv error, without values. Member names come from the body too, so
 * only identifier-like ones are quoted: another path segment reads `*`, another unexpected member
 * "a member".
 */
function describe(errors: readonly AjvError[] | null | undefined): string {
  return (errors ?? [])
    .map((error) => {
      const where =
        error.instancePath === ''
          ? '(root)'
          : error.instancePath
              .split('/')
              .map((segment) =>
                segment === '' || /^\d{1,5}$/.test(segment) || QUOTABLE_MEMBER.test(segment) ? segment : '*',
              )
              .join('/');
      const member = String((error.params as { additionalProperty?: unknown }).additionalProperty);
      const extra =
        error.keyword === 'additionalProperties'
          ? ` (${QUOTABLE_MEMBER.test(member) ? member : 'a member'})`
          : '';
      return `${where} ${error.message ?? error.keyword}${extra}`;
    })
    .join('; ');
}

class DocumentResponseValidator implements ResponseValidator {
  readonly #paths: CompiledPath[] = [];
  readonly #errorDocument: ValidateFunction;

  constructor(document: OpenApiDocument) {
    const ajv = createDocumentAjv(document);
    this.#errorDocument = compileAt(ajv, '/components/schemas/ErrorDocument');
    for (const [template, item] of Object.entries(document.paths)) {
      const segments = template.split('/').slice(1);
      const operations = new Map<string, Map<string, CompiledResponse>>();
      for (const method of METHODS) {
        const operation: OpenApiOperation | undefined = item[method];
        if (!operation) continue;
        const compiled = new Map<string, CompiledResponse>();
        for (const [status, response] of Object.entries(operation.responses)) {
          const validators = new Map<string, ValidateFunction>();
          for (const mediaType of Object.keys(response.content ?? {})) {
            const pointer = ['paths', template, method, 'responses', status, 'content', mediaType, 'schema']
              .map(pointerToken)
              .join('/');
            validators.set(mediaType, compileAt(ajv, `/${pointer}`));
          }
          compiled.set(status, { response, validators });
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

  #checkBody(body: Buffer, validate: ValidateFunction): string[] {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return ['body is not JSON'];
    }
    return validate(parsed) ? [] : [`body: ${describe(validate.errors)}`];
  }

  check(response: SentResponse): string[] {
    const path = this.#match(response.path);
    if (!path) return this.#checkGeneric(response, 404, 'a path the document does not list');
    const operation = path.operations.get(response.method);
    if (!operation) return this.#checkGeneric(response, 405, `${response.method} on ${path.template}`);
    const where = `${response.method} ${path.template}`;
    const declared =
      operation.get(String(response.status)) ??
      operation.get(`${Math.floor(response.status / 100)}XX`) ??
      operation.get('default');
    if (!declared) return [`status ${response.status} is not declared for ${where}`];

    const problems: string[] = [];
    for (const [name, header] of Object.entries(declared.response.headers ?? {})) {
      if (header.required && response.headers[name.toLowerCase()] === undefined) {
        problems.push(`required header ${name} is missing`);
      }
    }
    if (declared.validators.size === 0) {
      if (response.body.length > 0)
        problems.push(`a ${response.status} answer of ${where} must have no body`);
      return problems;
    }
    const mediaType = bareMediaType(response.headers['content-type']);
    const validate = declared.validators.get(mediaType);
    if (!validate) {
      const allowed = [...declared.validators.keys()].join(', ');
      return [...problems, `media type ${mediaType || '(none)'} is not declared (expected ${allowed})`];
    }
    problems.push(...this.#checkBody(response.body, validate));
    return problems;
  }
}

const validators = new WeakMap<OpenApiDocument, ResponseValidator>();

/**
 * The validator of a document, built (every response schema compiled) on first use and shared after.
 * @param document {@link SANDBOX_OPENAPI} by default.
 * @throws Error when a schema of the document does not compile.
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
