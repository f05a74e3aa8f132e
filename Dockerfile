# The control plane's image (the registry path; scripts/control-plane-image.ts
# builds the same runtime layout offline from the host's node). Two stages: the
# build stage has the compiler toolchain better-sqlite3 needs and every dev
# dependency; the runtime stage gets only dist/, production node_modules,
# package.json and Dockerfile.runner (the control plane builds the runner image
# from it at start when missing), and runs as a non-root numeric user.
#
#   docker build -t mcphost:latest .            # or: docker compose build
#   docker build --build-arg NODE_IMAGE=node:22-slim@sha256:… -t mcphost:latest .
ARG NODE_IMAGE=node:22-slim

FROM ${NODE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Dependencies first, so a source change reuses the npm ci layer.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build \
 && npx tsx scripts/build-dashboard.ts \
 && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
# 10002, not the runner's 10001: the two never share a uid on the host kernel.
RUN groupadd --system --gid 10002 mcphost-plane \
 && useradd --system --uid 10002 --gid 10002 --home-dir /tmp --no-create-home \
      --shell /usr/sbin/nologin mcphost-plane \
 && mkdir /data && chown 10002:10002 /data
WORKDIR /app
# Owned by root and not writable by the service: only /data (and /tmp) are.
COPY --from=build /src/package.json /src/Dockerfile.runner ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# Every interface: a container's loopback is its own (npm start's default is 127.0.0.1).
ENV NODE_ENV=production DATA_DIR=/data PORT=8080 LISTEN_HOST=0.0.0.0 HOME=/tmp
USER 10002:10002
VOLUME ["/data"]
EXPOSE 8080
# Node only (the slim image has no curl): GET /healthz on the admin listener.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["node","-e","fetch('http://127.0.0.1:'+(process.env.ADMIN_PORT||process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/control-plane/main.js"]
