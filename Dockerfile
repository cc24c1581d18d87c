# syntax=docker/dockerfile:1
# The registry as a container: built in two throwaway stages, run as the unprivileged `node`
# user on the current Node.js LTS with production dependencies only.
#
#   docker build -t a2a-registry .
#   docker run -p 8080:8080 -v registry-data:/data -e PUBLIC_URL=http://localhost:8080 a2a-registry
#
# PUBLIC_URL is required: the container listens on every interface (0.0.0.0), an address peers
# cannot use, so the registry refuses to start rather than advertise it in its agent card.
ARG NODE_IMAGE=node:24-trixie-slim

# Production dependencies. better-sqlite3 is a native addon: the toolchain stays in this stage.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund

# The build (esbuild strips the types; CI's typecheck checks them): dev dependencies, none of their native code.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY web ./web
# The build precompiles the validators from the JSON Schemas (src/validation/precompile.ts).
# Its source maps stay behind, as in the npm package: they point at src/, which the image lacks.
COPY schemas ./schemas
RUN npm run build && find dist -name '*.map' -delete

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    REGISTRY_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/web ./dist/web
COPY package.json agent-card.json LICENSE ./
COPY schemas ./schemas
COPY bin ./bin
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# Memory: the search index takes about 1.7-1.8 KiB of heap per entry (docs/scaling.md); Node's
# default heap limit is enough up to a few hundred thousand entries. For 1,000,000 raise it at run
# time: -e NODE_OPTIONS=--max-old-space-size=4096 -m 6g. The index is saved in /data beside the
# database (search-index.snapshot, ~1.6 KiB per entry) and loaded at start-up.
# The registry listens at once (/healthz, liveness) and is ready once its index has loaded.
# Stopping: requests in flight get REGISTRY_SHUTDOWN_GRACE_SECONDS (5 s), then the index is saved
# (about 1 s per 100,000 entries): docker stop's 10 s suffice up to about 300,000 entries; beyond,
# docker run --stop-timeout 30 (README: "Stopping").
# Healthy = ready to serve: storage reachable and the search index loaded (/readyz). PORT read as
# the registry reads it (" 8080" or "+8080" is 8080 to it, and made no URL here: never healthy).
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+Number(process.env.PORT||8080)+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/src/main.js"]
