# syntax=docker/dockerfile:1
# phone-reputation as one container image: the server by default, and the `phone-rep` CLI
# (lookup, batch, data update, canary…) as the command. Multi-stage: the build needs the dev
# dependencies (TypeScript, tsx), the runtime only dist/, the production dependencies, the
# ARCEP snapshot and the CLI launcher. See docs/operations.md ("Containers").
#
#   docker build -t phone-reputation .
#   docker run -p 3000:3000 -v phone-rep-data:/var/lib/phone-reputation phone-reputation
#   docker run --rm phone-reputation phone-rep lookup 0612345678
#
# NODE_IMAGE picks the base (any image laid out as the official Node one: node and npm in
# /usr/local, Debian bookworm), so the image can be built from a local base where no registry
# is reachable (scripts/test-image.sh does that).
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: every dependency, then `npm run build` (tsc + the page's precompressed assets)
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: the base's Node builds. The `node` devDependency (Node 24 for machines whose
# system Node is older, docs/dependencies.md) would download a second Node in its install script;
# its dangling bin link is removed so that npm scripts find the base's.
RUN npm ci --no-audit --no-fund --ignore-scripts && rm -f node_modules/.bin/node
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.ts scripts/build-console.ts scripts/
COPY src ./src
RUN npm run build

# ---- production dependencies alone (none has an install script; --ignore-scripts keeps it so)
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/.cache /root/.npm

# ---- runtime
FROM ${NODE_IMAGE} AS runtime
# The package's version (package.json's; test/system/container-image.test.ts holds them equal).
ARG VERSION=0.1.0
ARG SOURCE_URL=https://example.invalid/phone-reputation
LABEL org.opencontainers.image.title="phone-reputation" \
      org.opencontainers.image.description="Self-hostable HTTP service that tells whether to trust a telephone number" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.source="${SOURCE_URL}"

# tini as PID 1: forwards SIGTERM/SIGINT to the command and reaps orphaned processes.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/apt /var/log/dpkg.log

# A system user of its own, numeric so that `runAsNonRoot` can check it; it owns only the volume.
RUN groupadd --system --gid 10001 phonerep \
 && useradd --system --uid 10001 --gid phonerep --home-dir /var/lib/phone-reputation --no-create-home --shell /usr/sbin/nologin phonerep \
 && mkdir -p /var/lib/phone-reputation \
 && chown phonerep:phonerep /var/lib/phone-reputation

WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin/phone-rep.js ./bin/
COPY data/arcep ./data/arcep
COPY data/fr-call-centre-operators.csv ./data/
COPY docker/entrypoint.sh docker/healthcheck.mjs ./docker/
COPY --from=build /src/dist ./dist
RUN ln -s /app/bin/phone-rep.js /usr/local/bin/phone-rep

# Everything the service writes is on the volume, its state directory (STATE_DIR): the ARCEP data
# `phone-rep data update` fetches (the image's snapshot in /app/data/arcep is read until then)
# and the operator's lists. The root file system can be read-only (docker run --read-only).
ENV NODE_ENV=production \
    PORT=3000 \
    STATE_DIR=/var/lib/phone-reputation \
    LISTS_FILE=/var/lib/phone-reputation/lists.csv
VOLUME ["/var/lib/phone-reputation"]
EXPOSE 3000
USER 10001:10001

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "/app/docker/healthcheck.mjs"]
ENTRYPOINT ["/usr/bin/tini", "-s", "--", "/app/docker/entrypoint.sh"]
# The server: what `npm start` runs (without its `exec`), its paths under /app
# (test/system/container-image.test.ts holds the two equal: when `npm start` changes, change this one line).
CMD ["node", "/app/dist/start.js"]
