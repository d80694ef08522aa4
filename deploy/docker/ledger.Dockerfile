# Image of the ledger process: gRPC 50051, ops 9101.
# Build from the repository root (the build needs the whole monorepo):
#   docker build -f deploy/docker/ledger.Dockerfile -t payments-wallet/ledger .
# Three stages: build (every dependency as locked, turbo builds @wallet/ledger, @wallet/invariants and the
# workspaces they depend on), prune (production dependencies of those two only) and runtime (slim, non-root, nothing writable:
# runs with a read-only root filesystem; /tmp is the only place it may write).
# Built and run for real by `npm run test:images` (test/images/run.mjs).
ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /repo
ENV CI=true TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 NPM_CONFIG_UPDATE_NOTIFIER=false
COPY . .
# Every dependency exactly as locked (compilers, buf, turbo), then only this process and its workspace dependencies.
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund \
 && npx turbo run build --filter=@wallet/ledger... --filter=@wallet/invariants... \
 && node deploy/docker/manifests.mjs @wallet/invariants /manifests

FROM ${NODE_IMAGE} AS prune
WORKDIR /app
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
COPY --from=build /manifests/ ./
# Production dependencies of this process only, exactly as locked: /manifests lists only this
# workspace and the ones it depends on (deploy/docker/manifests.mjs); with all of them listed, npm
# would also bring the production dependencies of every workspace this one's tests use.
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund -w @wallet/ledger -w @wallet/invariants
COPY --from=build /repo/proto/dist proto/dist
COPY --from=build /repo/services/platform/dist services/platform/dist
COPY --from=build /repo/services/ledger/dist services/ledger/dist
COPY --from=build /repo/services/invariants/dist services/invariants/dist

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
# Files belong to root and are read-only for the process (uid 1000, the image's `node` user).
COPY --from=prune --chown=root:root /app /app
WORKDIR /app/services/ledger
USER 1000:1000
EXPOSE 50051 9101
# Docker/compose health check on the port the process serves /healthz on (LEDGER_OPS_PORT, as the process
# reads it); Kubernetes uses the chart's probes on the same endpoint.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.LEDGER_OPS_PORT || 9101) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Migrations: the same image with `node dist/cli/migrate.js` (the chart's pre-install/pre-upgrade Job).
# The cross-service invariants check (`ledger:check`) ships in this image too (@wallet/invariants, whose
# workspace closure is the ledger's plus pg and prom-client): the chart's ledger-check CronJob runs
# `node /app/services/invariants/dist/cli/check.js` in it.
CMD ["node", "--experimental-async-context-frame", "--import", "@wallet/platform/otel", "dist/main.js"]
