import { type ExecutionResult, mergeIncrementalResult } from '@graphql-tools/utils';
import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { type DocumentNode, type GraphQLSchema, getOperationAST } from 'graphql';
import { isAsyncIterable, type Plugin, type YogaInitialContext } from 'graphql-yoga';
import { type IncrementalPart, usesIncrementalDelivery } from '../lib/incremental-delivery.ts';
import { GRAPHQL_SSE_PATH } from './graphql-sse.ts';

/** The gateway's error masking (src/plugins/error-masking.ts) as Yoga applies it to `errors`. */
export interface ErrorMasking {
  /** Masks one error: typed gateway errors keep message and code, anything else becomes `message`. */
  maskError(error: Error, message: string): Error;
  /** The message of a masked error (`Unexpected error.`). */
  message: string;
}

/** Options of {@link useIncrementalDelivery} beside the masking. */
export interface IncrementalDeliveryOptions {
  /**
   * Whether `document` was validated against `schema` already and its result is answered from a
   * cache (src/runtime/document-cache.ts): then no rule runs, and the `@defer`/`@stream` rules are not
   * added to the request's rule list (a filtered copy of every rule per request otherwise).
   */
  validated?: (schema: GraphQLSchema, document: DocumentNode) => boolean;
}

/** Media types whose answers carry parts (Yoga's multipart and SSE result processors). */
const STREAMING_MEDIA_TYPES = /(^|,)\s*(multipart\/mixed|text\/event-stream)\s*(;|,|$)/i;

/**
 * `@defer` and `@stream` on every transport that executes through Yoga's envelop
 * (`@graphql-yoga/plugin-defer-stream`: its validation rules; the directives themselves are declared
 * in src/schema/index.ts, and `@graphql-tools/executor`, Yoga's executor, streams the parts):
 * - HTTP with `Accept: multipart/mixed` (Apollo Client, urql) or `text/event-stream` (urql, Relay's
 *   SSE fetchers): one part per deferred fragment or streamed item, by Yoga's result processors;
 * - graphql-ws and graphql-sse (`/graphql/stream`): one `next` message per part;
 * - an HTTP request to `/graphql` whose `Accept` names neither (JSON only, `*\/*` or none): the parts
 *   are merged into the one JSON answer the client asked for (every deferred field at its path, the
 *   errors of every part in order), instead of Yoga's multipart answer to `*\/*` or its 406 to JSON
 *   only. So a plain JSON client never meets a stream it did not ask for.
 *
 * The errors of deferred fragments and streamed items (in a later part's `incremental` entries) are
 * masked with `masking`, as Yoga masks those of `errors` (a merged answer has them in `errors`).
 * Register it before the plugins that read execution results (metrics, access line): a merged
 * answer reaches them as one result; a stream of parts reaches their `onNext`, masked.
 */
export function useIncrementalDelivery(
  masking: ErrorMasking,
  options: IncrementalDeliveryOptions = {},
): Plugin {
  const maskEntries = (part: ExecutionResult): ExecutionResult => {
    const incremental = (part as IncrementalPart).incremental;
    if (!incremental?.some((entry) => entry.errors?.length)) return part;
    return {
      ...part,
      incremental: incremental.map((entry) =>
        entry.errors?.length
          ? { ...entry, errors: entry.errors.map((error) => masking.maskError(error, masking.message)) }
          : entry,
      ),
    } as ExecutionResult;
  };
  return {
    onPluginInit({ addPlugin }) {
      const deferStream = useDeferStream();
      const addRules = deferStream.onValidate!;
      const { validated } = options;
      // Typed for a context of any members; Yoga's initial context has fixed ones.
      addPlugin({
        ...deferStream,
        // Rules matter only when validation runs: not for a document whose result is cached.
        onValidate: (payload: Parameters<typeof addRules>[0]) =>
          validated?.(payload.params.schema, payload.params.documentAST) ? undefined : addRules(payload),
      } as unknown as Plugin<YogaInitialContext>);
    },
    onExecute({ args, executeFn, setExecuteFn }) {
      if (!usesIncrementalDelivery(args.document)) return undefined;
      const request = (args.contextValue as { request?: Request } | undefined)?.request;
      const operation = getOperationAST(args.document, args.operationName)?.operation;
      if (request && !acceptsParts(request) && operation !== 'subscription') {
        setExecuteFn(async (run) => {
          const result = await executeFn(run);
          return isAsyncIterable(result) ? mergeParts(result as AsyncIterable<ExecutionResult>) : result;
        });
      }
      // Yoga's error masking reads `errors` of each part, not those of its `incremental` entries.
      return {
        onExecuteDone({ result }) {
          if (!isAsyncIterable(result)) return undefined;
          return { onNext: ({ result: part, setResult }) => setResult(maskEntries(part as ExecutionResult)) };
        },
      };
    },
  };
}

/** Whether an HTTP request takes an answer in parts: graphql-sse's path, or a streaming `Accept`. */
function acceptsParts(request: Request): boolean {
  if (new URL(request.url).pathname === GRAPHQL_SSE_PATH) return true;
  return STREAMING_MEDIA_TYPES.test(request.headers.get('accept') ?? '');
}

/**
 * The parts of an incremental result merged into one result: the first part, then each later part's
 * `incremental` entries at their paths (`mergeIncrementalResult` of graphql-tools), without the
 * `hasNext`, `pending` and `completed` bookkeeping of the stream.
 */
async function mergeParts(parts: AsyncIterable<ExecutionResult>): Promise<ExecutionResult> {
  let merged: ExecutionResult | undefined;
  for await (const part of parts) {
    if (!merged) {
      const {
        hasNext: _hasNext,
        pending: _pending,
        ...first
      } = part as ExecutionResult & {
        pending?: unknown;
      };
      merged = first;
    } else {
      mergeIncrementalResult({ incrementalResult: part, executionResult: merged });
    }
  }
  return merged ?? { data: null };
}
