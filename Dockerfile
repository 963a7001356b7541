# respgate container image. Three stages:
#   build  compiles TypeScript and packs the npm package (the same tarball `npm pack` makes);
#   dev    the dev stack (`respgate dev`): the package plus Debian's redis-server (about +15 MB);
#   proxy  the default target: the proxy alone, in front of UPSTASH_REDIS_REST_URL / _TOKEN.
# Build: docker build -t respgate .            (proxy)
#        docker build -t respgate:dev --target dev .
# Both run as the unprivileged `node` user; settings come from RESPGATE_* variables (README).
# They bind 0.0.0.0 so that other containers reach them, and then start only when clients must
# authenticate (docs/security.md): give RESPGATE_REQUIREPASS (or RESPGATE_REQUIREPASS_FILE, e.g. a
# mounted secret), or leave the proxy's REST token unset (each client AUTHs with its own), or set
# RESPGATE_HOST=127.0.0.1 when the application shares the container's network, as in a Kubernetes pod
# or with compose's `network_mode: service:respgate` (compose.yaml).

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json README.md ./
COPY bin ./bin
COPY scripts/bundle.mjs scripts/split-command-data.mjs ./scripts/
COPY src ./src
COPY docs ./docs
RUN npm pack --pack-destination /tmp/pack

FROM node:20-bookworm-slim AS base
ENV NODE_ENV=production
COPY --from=build /tmp/pack/ /tmp/pack/
# The package ships compiled JavaScript only: no TypeScript toolchain at run time. usearch loads its
# prebuilt binary, so no install script (and no compiler) is needed.
RUN npm install -g --no-audit --no-fund --ignore-scripts /tmp/pack/respgate-*.tgz \
  && rm -rf /tmp/pack \
  && npm cache clean --force
WORKDIR /home/node
ENTRYPOINT ["respgate"]

FROM base AS dev
# redis-server for the embedded stores of the dev stack.
RUN apt-get update \
  && apt-get install -y --no-install-recommends redis-server \
  && rm -rf /var/lib/apt/lists/*
USER node
ENV RESPGATE_HOST=0.0.0.0
EXPOSE 6379 6380 6381 8079
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.RESPGATE_HTTP_PORT||8079)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["dev"]

FROM base AS proxy
USER node
# V8's code cache of the proxy (src/cli/code-cache.ts), made here once so that every container starts with
# it (10-15 ms sooner ready): the proxy runs on loopback, with no upstream, until it has written the cache
# (1 s after its start), then stops. The build fails if no cache was written.
RUN respgate proxy --host 127.0.0.1 --port 0 --upstream-url http://127.0.0.1:9 --upstream-token warm-up >/dev/null 2>&1 & \
  for i in $(seq 600); do [ -e /tmp/respgate-compile-cache-*/proxy.cjs-*.cache ] && break; sleep 0.1; done; \
  kill $! && wait $!; ls /tmp/respgate-compile-cache-*/proxy.cjs-*.cache
ENV RESPGATE_HOST=0.0.0.0 \
  RESPGATE_METRICS_PORT=9090
EXPOSE 6379 9090
# /healthz: the process answers. Orchestrators wanting "upstream reachable" probe /readyz on 9090.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.RESPGATE_METRICS_PORT||9090)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["proxy"]
