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
    onResultProcess({ result, setResult }) {
      if (isAsyncIterable(result)) {
        setResult(redactExecutionResults(result as AsyncIterable<ExecutionResult>));
      } else if (Array.isArray(result)) {
        setResult(result.map((r: ExecutionResult) => redactExecutionResult(r)));
      } else {
        setResult(redactExecutionResult(result as ExecutionResult));
      }
    },
  };
}

function redactIfChanged(result: ExecutionResult): ExecutionResult | false {
  const redacted = redactExecutionResult(result);
  return redacted === result ? false : redacted;
}
