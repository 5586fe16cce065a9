import { randomUUID } from 'node:crypto';
import { type DocumentNode, type GraphQLError, getOperationAST, type OperationTypeNode } from 'graphql';
import { redactPans } from './pan.ts';

/**
 * What one HTTP request (or one graphql-ws connection) did, filled in while it runs and written as
 * its access line when it ends: the request id, the GraphQL operation name and the error codes of
 * its results. Reachable from the GraphQL context as `requestRecord`.
 */
export interface RequestRecord {
  /**
   * The request id: a well-formed incoming `x-request-id`, or a generated UUID that the PAN masker
   * leaves as it is (so the access line logs the id the response header answered).
   */
  readonly id: string;
  /** GraphQL operation names run (usually one), as sent; masked before logging. */
  readonly operationNames: Set<string>;
  /** `extensions.code` of every GraphQL error answered (or `GRAPHQL_*` for parse/validation). */
  readonly errorCodes: Set<string>;
  /** `graphql-ws` for a WebSocket connection; `http` otherwise (SSE subscriptions included). */
  readonly transport: 'http' | 'graphql-ws';
}

/** Incoming request ids we keep: 1–128 visible ASCII characters of a conservative set. */
const REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** Header carrying the request id both ways. */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A new record for a request with the given `x-request-id` header value; a missing, repeated or
 * malformed header gets a generated UUID instead (never echoing arbitrary client text into logs), and
 * so does one holding a card number in any written form (`4000.0566.5566.5556`, issue 20 item 8):
 * the id is echoed in the response header, error extensions, spans and the access line.
 */
export function createRequestRecord(
  header: string | string[] | undefined,
  transport: RequestRecord['transport'] = 'http',
): RequestRecord {
  const id =
    typeof header === 'string' && REQUEST_ID.test(header) && redactPans(header) === header
      ? header
      : generatedRequestId();
  return { id, operationNames: new Set(), errorCodes: new Set(), transport };
}

/**
 * A new request id: a random UUID (one flat string) that {@link redactPans} returns unchanged. About
 * one UUID in 200 holds 13 to 19 digits across its hyphens that pass the Luhn check, which the
 * logger's PAN masker would mask (`856744**-****-***2-…`), so the access line would carry another id
 * than the `x-request-id` answered; such a UUID is drawn again (each draw is clean with probability
 * about 0.995, so a second draw is rare and a third rarer still).
 */
function generatedRequestId(): string {
  for (;;) {
    const id = flatUuid();
    if (redactPans(id) === id) return id;
  }
}

/**
 * `randomUUID()` as one flat string: Node builds it by concatenation, a chain of 14 string pieces
 * (about 450 bytes) that a long-lived record (a graphql-ws connection, an SSE stream) would hold for
 * its whole life; the flat copy is 56 bytes (issue 21).
 */
function flatUuid(): string {
  return Buffer.from(randomUUID(), 'latin1').toString('latin1');
}

/** The record of a GraphQL context (Yoga server context or graphql-ws context), if any. */
export function requestRecordOf(context: unknown): RequestRecord | undefined {
  return (context as { requestRecord?: RequestRecord } | undefined)?.requestRecord;
}

/** The operation a document runs: its type and name (`null` when anonymous or not found). */
export function operationOf(
  document: DocumentNode,
  operationName: string | null | undefined,
): { type: OperationTypeNode | 'unknown'; name: string | null } {
  const operation = getOperationAST(document, operationName ?? undefined);
  return { type: operation?.operation ?? 'unknown', name: operation?.name?.value ?? operationName ?? null };
}

/** The operation name a client sent in its GraphQL parameters (Yoga/graphql-ws context `params`). */
export function requestedOperationName(context: unknown): string | null {
  const name = (context as { params?: { operationName?: unknown } } | undefined)?.params?.operationName;
  return typeof name === 'string' && name !== '' ? name : null;
}

/** `extensions.code` of an error, or `fallback` when it has none. */
export function errorCodeOf(error: GraphQLError | Error, fallback: string): string {
  const code = (error as GraphQLError).extensions?.code;
  return typeof code === 'string' && code !== '' ? code : fallback;
}
