# cardgraph gateway. Node 24 runs the TypeScript sources directly (type stripping).
FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY src ./src
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 4000
ENV PORT=4000 HOST=0.0.0.0 DATA_DIR=/app/data
VOLUME /app/data
STOPSIGNAL SIGTERM
CMD ["node", "src/main.ts"]
