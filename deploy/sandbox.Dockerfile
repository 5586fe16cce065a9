# The standalone sandbox of the upstream (sandbox contract §1), docker-compose.yml's `sandbox`
# service: `docker build -f deploy/sandbox.Dockerfile .` from the repository root. Its build context
# follows deploy/sandbox.Dockerfile.dockerignore (BuildKit reads the ignore file named after the
# Dockerfile), which keeps src/sandbox; the root .dockerignore keeps it out of the gateway image.
FROM node:24-bookworm-slim AS sandbox
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY src ./src
USER node
EXPOSE 4010
ENV HOST=0.0.0.0 SANDBOX_PORT=4010
STOPSIGNAL SIGTERM
CMD ["node", "src/sandbox/main.ts"]
