# The Zekt image: `zekt serve` (the API and the workers; --role api|worker splits them), the console
# built in, the GitHub simulator beside it for `zekt dev`. docs/deploy.md says how to run it.
#
#   docker build -t zekt .
#   docker run -p 3000:3000 -v zekt-data:/data -e ZEKT_SECRET=… zekt
#
# BASE_IMAGE is any Debian-based image with Node.js ≥ 20.19, node and npm in /usr/local (the
# official image's layout); both stages use it. `npm run test:container` builds on a Debian base it
# makes itself, because its machine cannot pull images.
ARG BASE_IMAGE=node:24-slim

FROM ${BASE_IMAGE} AS build
WORKDIR /src
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false

# better-sqlite3 is compiled here, never downloaded prebuilt (npm_config_build_from_source): a
# prebuilt binary may have been compiled against headers that crash this runtime (below).
RUN if ! command -v g++ >/dev/null || ! command -v make >/dev/null || ! command -v python3 >/dev/null; then \
      apt-get update && apt-get install -y --no-install-recommends g++ make python3 && rm -rf /var/lib/apt/lists/*; \
    fi

# The headers native modules compile against. Node 24.19 and later ship an ObjectWrap header that
# makes every addon built with it abort when one of its objects is garbage-collected (an open
# Node.js bug), while an addon built with the 24.18.1 headers runs on every 24.x runtime: on Node
# 24 those come from npm (node-linux-<arch>@24.18.1); other versions use their own.
RUN set -eu; \
    version=$(node -p process.versions.node); arch=$(node -p process.arch); \
    case "$version" in \
      24.*) npm install --prefix /opt/node-headers --no-save --no-package-lock "node-linux-$arch@24.18.1" >/dev/null; \
            echo "/opt/node-headers/node_modules/node-linux-$arch" > /opt/nodedir ;; \
      *) echo /usr/local > /opt/nodedir ;; \
    esac

# Dependencies first, so that a change of the sources alone reuses this layer.
COPY package.json package-lock.json ./
COPY apps/server/package.json apps/server/
COPY apps/server/bin apps/server/bin
COPY apps/console/package.json apps/console/
COPY packages/github-sim/package.json packages/github-sim/
COPY packages/github-sim/bin packages/github-sim/bin
COPY packages/action/package.json packages/action/
COPY packages/client/package.json packages/client/
COPY bench/package.json bench/
RUN npm_config_nodedir=$(cat /opt/nodedir) npm_config_build_from_source=true npm ci

COPY . .
RUN npm run build -w zekt-github-sim -w @zekt/console -w @zekt/server \
 && npm prune --omit=dev \
 && mkdir -p /app/apps/server /app/apps/console /app/packages/github-sim \
 && cp -a package.json node_modules /app/ \
 && cp -a apps/server/package.json apps/server/bin apps/server/dist /app/apps/server/ \
 && cp -a apps/console/package.json apps/console/dist /app/apps/console/ \
 && cp -a packages/github-sim/package.json packages/github-sim/bin packages/github-sim/dist /app/packages/github-sim/ \
 && cp deploy/container/healthcheck.mjs /app/ \
 && rm -f /app/node_modules/@zekt/action /app/node_modules/@zekt/bench /app/node_modules/@zekt/client \
 && find /app -name '*.tsbuildinfo' -delete \
 && cd /app/node_modules/better-sqlite3 \
 && rm -rf deps src build/deps build/Release/obj build/Release/obj.target build/Release/.deps \
           build/Release/sqlite3.a build/Release/test_extension.node

FROM ${BASE_IMAGE}
ENV NODE_ENV=production \
    PORT=3000 \
    ZEKT_METRICS_PORT=9464 \
    ZEKT_DATA_DIR=/data
RUN groupadd --system --gid 10001 zekt \
 && useradd --system --uid 10001 --gid zekt --home-dir /app --no-create-home --shell /usr/sbin/nologin zekt \
 && mkdir -p /data && chown zekt:zekt /data
COPY --from=build /app /app
RUN ln -s /app/apps/server/bin/zekt.js /usr/local/bin/zekt \
 && ln -s /app/packages/github-sim/bin/zekt-github-sim.js /usr/local/bin/zekt-github-sim
WORKDIR /app
# Numeric, so that Kubernetes can check runAsNonRoot.
USER 10001:10001
# The embedded SQLite store (unset DATABASE_URL); with PostgreSQL nothing is written here.
VOLUME /data
EXPOSE 3000 9464
# /healthz of the API (PORT) or, for `serve --role worker`, of its probe port (ZEKT_METRICS_PORT).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 CMD ["node", "/app/healthcheck.mjs"]
ENTRYPOINT ["zekt"]
CMD ["serve"]
