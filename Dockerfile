# syntax=docker/dockerfile:1
# Build: docker build -t identity-content-gateway .   Run: see README "Docker".
# Node 24, an LTS line; bookworm, the glibc the allocator settings below were measured with.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json build.mjs ./
COPY src ./src
COPY simulator ./simulator
# One bundle of the gateway and its packages (build.mjs): the runtime stage needs no node_modules.
RUN npm run build

FROM node:24-bookworm-slim AS runtime
# MALLOC_MMAP_THRESHOLD_, as in `npm run start:prod`: fixed glibc thresholds, so memory freed after
# a large page goes back to the system instead of staying with the process (docs/performance.md).
ENV NODE_ENV=production \
    PORT=4000 \
    HOST=0.0.0.0 \
    MALLOC_MMAP_THRESHOLD_=1048576
WORKDIR /app
COPY --from=build --chown=node:node /app/dist ./dist
USER node
EXPOSE 4000
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||4000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
STOPSIGNAL SIGTERM
# The same command as `npm run start:prod` (its variable is set above): the heap cap keeps GC slack
# in check (see docs/performance.md).
CMD ["node", "--max-old-space-size=256", "--max-semi-space-size=16", "dist/index.js"]
