import { expect } from 'vitest';
import { graphql } from '../generated/index.ts';

/** Narrows a union result to the member named `typename`, failing the test otherwise. */
export function member<T extends { __typename?: string }, N extends NonNullable<T['__typename']>>(
  value: T | null | undefined,
  typename: N,
): Extract<T, { __typename?: N }> {
  expect(value?.__typename, JSON.stringify(value)).toBe(typename);
  return value as Extract<T, { __typename?: N }>;
}

/**
 * The members every `Error` result carries, written once for the test operations: spread
 * `...ErrorFields` in a result union (the generated documents carry the fragment along).
 */
export const ErrorFields = graphql(`
  fragment ErrorFields on Error {
    code
    message
  }
`);
