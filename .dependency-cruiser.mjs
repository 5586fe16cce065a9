/**
 * Layering of src/, checked by `npm run lint` (dependency-cruiser). Imports run one way, from the top
 * of this list down; a module may import its own layer and any below it, never one above:
 *
 *   entries      src/main.ts, src/dev.ts (and src/app.ts, the composition root they share, with
 *                its types in src/app-types.ts)
 *   server       src/server/     HTTP, graphql-ws and metrics listeners: framing and back-pressure
 *   live         src/live/       the live-subscription hub the transports share
 *   runtime      src/runtime/    the GraphQL runtime (Yoga, plugins, services) a transport calls
 *   plugins      src/plugins/    Yoga/Envelop plugins
 *   schema       src/schema/     the Pothos schema and its resolvers
 *   context      src/context.ts  the per-operation GraphQL context: what resolvers see of the layers below
 *   loaders      src/loaders/    DataLoaders and read caches
 *   upstream     src/upstream/   provider clients       } one layer: each may import the other,
 *   events       src/events/     event logs and streams }   never in a cycle
 *   foundation   src/contracts/ (provider wire shapes), src/lib/ (logging, metrics, tracing, PAN
 *                checks), src/config/ (settings, leaf-ish: read by every layer, reads none above),
 *                src/auth/ (token verification and the viewer, a leaf every layer may ask),
 *                src/errors.ts (the client-facing error classes), src/client/ (the operations of
 *                the trusted-documents manifest)
 *
 * The sandbox (src/sandbox/) is a separate program: only it and src/dev.ts (which runs it beside the
 * gateway in development) import it, and it imports the foundation only. No cycles anywhere.
 * Type-only imports count: a type from above is a dependency on above.
 */

/** Path patterns of each layer, top first. */
const layers = [
  ['entries', '^src/(main|dev|app|app-types)[.]ts$'],
  ['server', '^src/server/'],
  ['live', '^src/live/'],
  ['runtime', '^src/runtime/'],
  ['plugins', '^src/plugins/'],
  ['schema', '^src/schema/'],
  ['context', '^src/context[.]ts$'],
  ['loaders', '^src/loaders/'],
  ['upstream and events', '^src/(upstream|events)/'],
  ['foundation', '^src/(contracts|lib|config|auth|client)/|^src/errors[.]ts$'],
];

/**
 * Upward imports tolerated for now, each with the change that removes it. Keep this list short: an
 * entry here is a debt, not a rule.
 */
const tolerated = [];

/** A pattern matching exactly `file`. */
const only = (file) => `^${file.replaceAll('.', '[.]')}$`;

/** One rule per layer: it imports nothing from the layers above it (tolerated edges excepted). */
const upward = layers.slice(1).flatMap(([name, path], index) => {
  const rule = {
    name: `no-upward-import-from-${name.replaceAll(' ', '-')}`,
    comment: `${name} (${path}) imports only its own layer and those below: ${layers
      .slice(index + 2)
      .map(([below]) => below)
      .join(', ')}`,
    severity: 'error',
    from: { path },
    to: {
      path: layers
        .slice(0, index + 1)
        .map(([, above]) => `(${above})`)
        .join('|'),
    },
  };
  const exceptions = tolerated.filter((edge) => new RegExp(path).test(edge.from));
  if (exceptions.length === 0) return [rule];
  return [
    { ...rule, from: { path, pathNot: exceptions.map((edge) => only(edge.from)).join('|') } },
    ...exceptions.map((edge) => ({
      ...rule,
      comment: `${rule.comment}; ${edge.to} tolerated until ${edge.until}`,
      from: { path: only(edge.from) },
      to: { ...rule.to, pathNot: only(edge.to) },
    })),
  ];
});

/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no import cycle, however long',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'sandbox-is-its-own-program',
      comment: 'only the sandbox itself and src/dev.ts import src/sandbox/',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/sandbox/|^src/dev[.]ts$' },
      to: { path: '^src/sandbox/' },
    },
    {
      name: 'sandbox-imports-the-foundation-only',
      comment: 'the sandbox shares contracts, lib and config with the gateway, nothing of its layers',
      severity: 'error',
      from: { path: '^src/sandbox/' },
      to: { path: '^src/', pathNot: '^src/(sandbox|contracts|lib|config)/' },
    },
    {
      name: 'one-copy-of-the-opentelemetry-api',
      comment:
        'values of @opentelemetry/api come through src/lib/otel-api.ts (its CommonJS build, the copy prom-client loads); types may be imported directly',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/lib/otel-api[.]ts$' },
      to: { path: '@opentelemetry/api/', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/client/generated/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};
