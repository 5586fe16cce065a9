import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

/**
 * `npm run build`: the production build of the gateway in dist/ (what the Docker image runs,
 * `node dist/main.js`): src/main.ts and its modules bundled with rolldown into a few ES module files,
 * the packages they import included, so a start reads tens of files instead of about a thousand
 * modules each resolved, read and linked on its own (most of a cold start; docs/architecture.md).
 *
 * Entries: `main.js` (src/main.ts), `app.js` and `config.js` (what the bench's gateway process
 * composes, bench/servers/cardgraph.ts) and `sqlite-event-log-writer.js` (the event log's writer
 * thread, which src/events/sqlite-event-log.ts starts beside the file it is bundled into). What loads on
 * first use (graphql-jit, the subgraph schema, GraphiQL's assets, node-redis) stays a chunk of its own,
 * loaded then. Left to node_modules: the OpenTelemetry packages (the API is required, one copy, by
 * src/lib/otel-api.ts and prom-client; the SDK loads only with tracing on), undici and jose (loaded on
 * first use), none of which imports graphql, so the bundle's graphql stays the only one.
 * `npm run build -- <dir>` writes to `<dir>` instead (inside the repository).
 * Function and class names are kept: Pothos names error types after their classes.
 * Files read at run time beside a module (src/client/files.ts) are copied under the same relative names.
 */

const root = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));
// `npm run build -- <dir>`: another directory inside the repository (the bench and the tests build
// their own, so that packages left to node_modules still resolve), dist/ by default.
const dist = resolve(process.argv[2] ?? root('dist'));

rmSync(dist, { recursive: true, force: true });
await build({
  input: {
    main: root('src/main.ts'),
    app: root('src/app.ts'),
    config: root('src/config/index.ts'),
    'sqlite-event-log-writer': root('src/events/sqlite-event-log-writer.ts'),
  },
  platform: 'node',
  external: [/^node:/, /^@opentelemetry\//, /^undici(\/|$)/, /^jose(\/|$)/],
  logLevel: 'warn',
  output: {
    dir: dist,
    format: 'esm',
    keepNames: true,
    // One directory: a module's `import.meta.url` siblings (src/client/files.ts) are dist/'s.
    entryFileNames: '[name].js',
    chunkFileNames: '[name]-[hash].js',
  },
});
copyFileSync(root('src/client/operations.graphql'), `${dist}/operations.graphql`);
// Written by `npm run codegen`; without it the gateway starts as from the sources, with a warning.
const manifest = root('src/client/generated/persisted-documents.json');
if (existsSync(manifest)) {
  mkdirSync(`${dist}/generated`);
  copyFileSync(manifest, `${dist}/generated/persisted-documents.json`);
}
