import { type DocumentNode, type GraphQLError, Kind, visit } from 'graphql';

/**
 * Incremental delivery (`@defer` and `@stream`, served by `@graphql-yoga/plugin-defer-stream`): an
 * operation using them executes into a stream of parts instead of one result. The first part is a
 * regular result with `hasNext: true`; each later part carries `incremental: [{ data | items, path,
 * errors?, extensions? }]` and `hasNext`, as the incremental delivery format of the GraphQL working
 * group's RFC (the one `@graphql-tools/executor`, Apollo Client 4, urql and Relay read) defines it.
 */

/** Names of the directives that turn one result into a stream of parts. */
const INCREMENTAL_DIRECTIVES: ReadonlySet<string> = new Set(['defer', 'stream']);

/**
 * The answers of {@link usesIncrementalDelivery} by document object: Yoga's document cache hands the
 * same parsed document to every request of the same text, so the walk runs once per document (three
 * plugins ask on every execution). A WeakMap: an entry goes with its document.
 */
const incrementalByDocument = new WeakMap<DocumentNode, boolean>();

/**
 * Whether `document` uses `@defer` or `@stream` anywhere (any operation, any fragment), whatever
 * their `if` argument: such a document may execute into a stream of parts. Documents are never
 * changed after parsing, so the answer is kept per document object.
 */
export function usesIncrementalDelivery(document: DocumentNode): boolean {
  const known = incrementalByDocument.get(document);
  if (known !== undefined) return known;
  const found = findsIncrementalDirective(document);
  incrementalByDocument.set(document, found);
  return found;
}

/** Walks `document` for a `@defer` or `@stream` directive. */
function findsIncrementalDirective(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    [Kind.DIRECTIVE](node) {
      if (INCREMENTAL_DIRECTIVES.has(node.name.value)) {
        found = true;
        return false;
      }
      return undefined;
    },
  });
  return found;
}

/** One entry of a later part's `incremental` list, as far as the gateway reads it. */
export interface IncrementalPayload {
  errors?: readonly GraphQLError[];
  extensions?: Record<string, unknown>;
}

/** A part of an incremental result as far as the gateway reads it (errors, nested payloads). */
export interface IncrementalPart {
  errors?: readonly GraphQLError[];
  incremental?: readonly IncrementalPayload[];
}

/**
 * Every error one part carries: its own `errors` (the first part, or a whole-operation failure) and
 * those of each entry of its `incremental` list (a deferred fragment or streamed item that failed).
 * @returns the errors in order; an empty array when there are none.
 */
export function errorsOfPart(part: IncrementalPart): GraphQLError[] {
  const errors = [...(part.errors ?? [])];
  for (const payload of part.incremental ?? []) errors.push(...(payload.errors ?? []));
  return errors;
}
