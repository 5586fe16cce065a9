import type { ExecutionResult, GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin, usePayloadFormatter, type YogaInitialContext } from 'graphql-yoga';
import { redactExecutionResult, redactExecutionResults, redactGraphQLError } from '../lib/redaction.ts';

/**
 * Card data never leaves in a GraphQL answer: every result Yoga sends over HTTP (single, batched,
 * SSE and multipart streams, and the errors of requests that never reached execution, such as a
 * malformed JSON body whose parser message quotes the body) passes through the one redaction
 * mechanism of src/lib/redaction.ts: messages lose echoed client values and PANs, every extension is
 * redacted. Parse and validation errors and execution results are redacted where they arise too, so
 * graphql-ws (which executes through the same envelop) and Yoga's own error logging get the redacted
 * form.
 */
export function useCardDataRedaction(): Plugin {
  return {
    onPluginInit({ addPlugin }) {
      // usePayloadFormatter is typed for envelop's bare context; Yoga's context extends it.
      addPlugin(usePayloadFormatter((result) => redactIfChanged(result)) as Plugin<YogaInitialContext>);
    },
    onParse() {
      return ({ result, replaceParseResult }) => {
        if (result instanceof Error && 'extensions' in result) {
          replaceParseResult(redactGraphQLError(result as GraphQLError));
        }
      };
    },
    onValidate() {
      return ({ result, setResult }) => {
        if (result.length > 0) setResult(result.map((error) => redactGraphQLError(error as GraphQLError)));
      };
    },
    // Every road that runs through Yoga's `getResultForParams` (the lean HTTP path, SSE, graphql-sse):
    // one result (streams are redacted event by event by the payload formatter above).
    onExecutionResult({ result, setResult }) {
      if (result && !isAsyncIterable(result)) setResult(redactRequestResult(result));
    },
    // Yoga's own HTTP handling: also the errors that never became a result (a body Yoga's parser refused).
    onResultProcess({ result, setResult }) {
      if (isAsyncIterable(result)) {
        setResult(redactExecutionResults(result as AsyncIterable<ExecutionResult>));
      } else {
        setResult(redactRequestResult(result));
      }
    },
  };
}

/**
 * A request's result (one result, or a batch's) redacted as {@link useCardDataRedaction} redacts it:
 * for a transport's errors that never reached Yoga's `getResultForParams` (src/server/graphql-http.ts).
 */
export function redactRequestResult<R extends ExecutionResult | readonly ExecutionResult[]>(result: R): R {
  if (Array.isArray(result)) return result.map((one: ExecutionResult) => redactExecutionResult(one)) as never;
  return redactExecutionResult(result as ExecutionResult) as R;
}

function redactIfChanged(result: ExecutionResult): ExecutionResult | false {
  const redacted = redactExecutionResult(result);
  return redacted === result ? false : redacted;
}
