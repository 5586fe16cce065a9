/**
 * Files the gateway reads at run time beside its client documents, as URLs relative to this module.
 * From the sources they are src/client/…; in the production build (`npm run build`, dist/) this
 * module is part of a file in dist/, and the build copies them there under the same relative names
 * (scripts/build.ts), so one expression serves both.
 */

/** The shipped example operations (GraphiQL's default document, the metrics' operation names). */
export const EXAMPLE_OPERATIONS_FILE = new URL('./operations.graphql', import.meta.url);

/**
 * The trusted-documents manifest graphql-codegen writes (`npm run codegen`), the default of
 * `PERSISTED_OPERATIONS_MANIFEST`.
 */
export const PERSISTED_DOCUMENTS_FILE = new URL('./generated/persisted-documents.json', import.meta.url);
