# cardgraph gateway. Node 24 runs the TypeScript sources directly (type stripping).
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
# The directory is gitignored, so a clean checkout has no manifest until this stage makes one.
FROM node:24-bookworm-slim AS codegen
WORKDIR /build
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY codegen.ts schema.graphql ./
COPY src/client/operations.graphql ./src/client/operations.graphql
RUN npx graphql-codegen --config codegen.ts --silent

# The gateway image: docker-compose.yml builds this stage by name (`target: gateway`), and as the last
# stage it is also what a plain `docker build .` makes (test/topology/compose-files.test.ts checks both).
FROM node:24-bookworm-slim AS gateway
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY src ./src
COPY --from=codegen /build/src/client/generated ./src/client/generated
# Node's compile cache (stripped TypeScript and V8 code cache), filled here by loading the gateway's
# modules, so a container's first start compiles none of them (issue 21 item 2; a started gateway
# also writes what it compiled, see src/app.ts). The parts loaded only when configured (the
# OpenTelemetry SDK, the Redis event log and node-redis) or on first use (undici, graphql-jit, jose)
# are filled too. Node discards an entry whose source changed.
ENV NODE_COMPILE_CACHE=/app/.node-compile-cache
RUN node --input-type=module \
      -e "await import('./src/app.ts'); await import('./src/lib/tracing-sdk.ts'); await import('./src/events/redis-event-log.ts'); await import('redis'); await import('undici'); await import('graphql-jit'); await import('jose');" \
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
CMD ["node", "src/main.ts"]
