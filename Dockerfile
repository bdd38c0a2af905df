# tekil's container image: build with `docker build -t tekil .`, run with
#   docker run -e DATABASE_URL=postgres://… -e TEKIL_SECRET_KEY=… -p 8787:8787 \
#     -v $PWD/tekil.yaml:/app/tekil.yaml:ro tekil start --processes 2
# See docs/deploy.md for the layouts.

# --- build: dev dependencies and the TypeScript compiler, then only what runs ---
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the package's `prepare` would build before the sources are copied in.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build && npm prune --omit=dev --ignore-scripts

# --- run: non-root, no compiler, no dev dependencies ---
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    TEKIL_DATA_DIR=/var/lib/tekil
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json tekil.yaml ./
COPY web ./web
# The data dir holds the generated admin token and secret key (and the embedded store when there is no
# DATABASE_URL); the image's own `node` user (uid 1000) owns it and nothing else.
RUN mkdir -p /var/lib/tekil && chown node:node /var/lib/tekil
VOLUME /var/lib/tekil
USER node
EXPOSE 8787
# /healthz answers while the process serves HTTP (liveness); /readyz also checks the store, which is
# for a load balancer, not for restarting the container while the database is away.
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.TEKIL_HEALTH_PORT || 8787) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# tekil forwards SIGTERM to its processes, which drain before exiting (docker stop -t should exceed
# shutdown_timeout, 10 s by default).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["start"]
