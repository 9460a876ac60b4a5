# syntax=docker/dockerfile:1
# The operator image: `npm run image` (scripts/image/build.ts: podman or Docker, tagged with the
# package version), or `docker build -t kaos-operator .`
#   build      all dependencies (TypeScript, esbuild), `npm run build` → dist/ (the operator is
#              one bundled file, dist/main.js: scripts/build.ts says why)
#   prod-deps  production dependencies only (npm ci --omit=dev)
#   runtime    Node.js 24 (the major of package.json's engines and `node` devDependency), dist/,
#              the production node_modules and package.json ("type": "module"); tini as PID 1 so
#              SIGTERM reaches node and the operator's graceful shutdown runs; user 1000 (the
#              image's `node` user, the chart's runAsUser), no shell needed at run time.
# test/e2e/image.test.ts builds it and runs it as the chart does, and checks what it holds;
# test/unit/dockerfile.test.ts checks, without an engine, that every path the runtime stage
# copies exists after `npm run build` and that nothing dev-only reaches it.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.ts ./scripts/
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS prod-deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
# tini; then apt's indexes and caches go, and so do the base's package managers (npm, and corepack
# and yarn where a base has them): nothing installs anything at run time, and their own
# dependencies are not the operator's to patch.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* \
 && rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
      /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-*
WORKDIR /app
ENV NODE_ENV=production
# The operator's environment (scripts/operator-command.ts says why).
ENV MALLOC_ARENA_MAX=2
COPY --from=prod-deps /app/node_modules ./node_modules
COPY package.json ./
COPY --from=build /app/dist ./dist
USER 1000:1000
EXPOSE 9443 8080
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--max-semi-space-size=8", "--memory-saver-mode", "dist/main.js"]
