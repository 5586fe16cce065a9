# cardgraph gateway. Node 24 runs the production build of the TypeScript sources (scripts/build.ts:
# src/main.ts and the packages it imports bundled into dist/, so a start reads a few files instead of
# about a thousand modules; the sources themselves run as they are in development and tests).
# Production by default: the gateway refuses to start without an explicit UPSTREAM, with the
# development JWT secret or with the sandbox client credentials, and serves no GraphiQL, introspection
# or field suggestions unless GRAPHIQL, INTROSPECTION or FIELD_SUGGESTIONS turn them on (.env.example).
# The image contains none of src/sandbox: .dockerignore keeps it (and src/dev.ts, the development
# entry that composes it) out of the build context; src/main.ts never imports it
# (test/sandbox-boundary.test.ts checks both). deploy/sandbox.Dockerfile builds the standalone
# sandbox that docker-compose.yml runs as the gateways' upstream, with its own ignore file.
#
# Build stage: graphql-codegen (a devDependency) writes src/client/generated/, whose
# persisted-documents.json is the trusted-documents manifest that PERSISTED_OPERATIONS=require accepts.
# The directory is gitignored, so a clean checkout has no manifest until this stage makes one. Then
# scripts/build.ts (rolldown, a devDependency) writes dist/ with that manifest in it.
FROM node:24-bookworm-slim AS build
WORKDIR /build
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY codegen.ts schema.graphql ./
COPY scripts/build.ts ./scripts/build.ts
COPY src ./src
RUN npx graphql-codegen --config codegen.ts --silent && node scripts/build.ts

# The gateway image: docker-compose.yml builds this stage by name (`target: gateway`), and as the last
# stage it is also what a plain `docker build .` makes (test/topology/compose-files.test.ts checks both).
FROM node:24-bookworm-slim AS gateway
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY --from=build /build/dist ./dist
# Node's compile cache (V8 code cache), filled here by loading the build's files, so a container's
# first start compiles none of them (a started gateway also writes what it compiled, see src/app.ts):
# every file of dist/ but the two that run something (main.js starts the gateway; the event log's
# writer runs only in its thread), so the parts loaded only when configured (the OpenTelemetry SDK,
# the Redis event log) or on first use (graphql-jit, GraphiQL's assets, undici, jose) are filled too.
# Node discards an entry whose source changed.
ENV NODE_COMPILE_CACHE=/app/.node-compile-cache
RUN node --input-type=module \
      -e "for (const file of (await import('node:fs')).readdirSync('./dist')) if (file.endsWith('.js') && file !== 'main.js' && file !== 'sqlite-event-log-writer.js') await import('./dist/' + file); await import('undici'); await import('jose');" \
  && chown -R node:node /app/.node-compile-cache
RUN mkdir -p /app/data && chown node:node /app/data
USER node
# 4000: GraphQL, webhooks, /health, /readiness; 9464: Prometheus /metrics (keep it off the public network).
EXPOSE 4000 9464
ENV PORT=4000 HOST=0.0.0.0 DATA_DIR=/app/data
VOLUME /app/data
STOPSIGNAL SIGTERM
# Node's own fetch: the slim image has no curl or wget. GET /health answers 200 while the gateway serves.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 4000) + '/health', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/main.js"]
