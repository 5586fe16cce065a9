import { readFileSync } from 'node:fs';
import { Kind, parse } from 'graphql';
import { EXAMPLE_OPERATIONS_FILE } from './files.ts';
import { inlineFragments } from './inline-fragments.ts';

/**
 * The shipped example operations (src/client/operations.graphql) with their fragments written in place
 * (GraphiQL sends the chosen operation with every fragment of the editor, see {@link inlineFragments}):
 * GraphiQL's default document, and the operation names metrics label by name (any other name is counted as `other`).
 */
export function loadExampleOperations(): { document: string; operationNames: string[] } {
  const document = inlineFragments(readExampleOperations());
  return { document, operationNames: operationNamesOf(document) };
}

/**
 * The names of the shipped example operations alone (as {@link loadExampleOperations} gives them),
 * without writing their fragments in place: what metrics need at start, when GraphiQL is off.
 */
export function exampleOperationNames(): string[] {
  return operationNamesOf(readExampleOperations());
}

function readExampleOperations(): string {
  return readFileSync(EXAMPLE_OPERATIONS_FILE, 'utf8');
}

function operationNamesOf(document: string): string[] {
  return parse(document).definitions.flatMap((definition) =>
    definition.kind === Kind.OPERATION_DEFINITION && definition.name ? [definition.name.value] : [],
  );
}
