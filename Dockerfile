# syntax=docker/dockerfile:1
# The operator image: `npm run image` (scripts/image/build.ts: podman or Docker, tagged with the
# package version), or `docker build -t kaos-operator .`
#   manifests     what each npm ci below installs, cut from package.json and package-lock.json
#                 (scripts/lockfile-subset.ts): an edit that changes neither install (a script,
#                 the version, a test tool) reruns no npm ci
#   build         the production dependencies and esbuild; the bundles alone (scripts/build.ts
#                 --bundle-only): dist/main.js and dist/admission-worker.js (the admission
#                 thread it starts), their source maps, and dist/runtime-deps/, the package.json
#                 and lockfile of what the bundles still load from node_modules
#   runtime-deps  those packages, at their locked versions, less the files Node never loads
#                 (type declarations, source maps)
#   runtime       Node.js 24 (the major of package.json's engines and `node` devDependency),
#                 the two bundles and their maps, those node_modules and their package.json ("type":
#                 "module"); tini as PID 1 so SIGTERM reaches node and the operator's graceful
#                 shutdown runs; user 1000 (the image's `node` user, the chart's runAsUser), no
#                 shell needed at run time.
# test/e2e/image.test.ts builds it and runs it as the chart does, and checks what it holds;
# test/unit/dockerfile.test.ts checks, without an engine, that every path the runtime stage
# copies exists after `npm run build` and that nothing dev-only reaches it.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/build.ts scripts/lockfile-subset.ts ./scripts/
COPY scripts/image/build-manifest.ts ./scripts/image/
RUN node scripts/image/build-manifest.ts /build-deps

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Copied by content: an unchanged manifest keeps the npm ci layer below.
COPY --from=manifests /build-deps/ ./
# No install scripts: esbuild's only checks its binary, which it finds without it.
RUN npm ci --ignore-scripts --no-audit --no-fund
# esbuild reads tsconfig.json (how TypeScript's class fields and imports compile).
COPY tsconfig.json ./
COPY scripts/build.ts scripts/lockfile-subset.ts scripts/left-out-of-bundle.cjs ./scripts/
COPY src ./src
RUN node scripts/build.ts --bundle-only

FROM ${NODE_IMAGE} AS runtime-deps
WORKDIR /app
COPY --from=build /app/dist/runtime-deps/ ./
# Then the files Node never loads: type declarations (the @types packages keep only their
# package.json, README and licence) and source maps (dist/main.js.map covers the operator's code).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force \
 && find node_modules -type f -regextype posix-extended -regex '.*\.(d\.[mc]?ts(\.map)?|[mc]?js\.map)$' -delete \
 && find node_modules -type d -empty -delete

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
COPY --from=runtime-deps /app/node_modules ./node_modules
COPY --from=runtime-deps /app/package.json ./
COPY --from=build /app/dist/main.js /app/dist/main.js.map /app/dist/admission-worker.js /app/dist/admission-worker.js.map ./dist/
USER 1000:1000
EXPOSE 9443 8080
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--max-semi-space-size=8", "--memory-saver-mode", "dist/main.js"]
