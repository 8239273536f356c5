#!/usr/bin/env bash
# Builds the container image from the real Dockerfile, here, where no registry is reachable and
# no OCI runtime can start a container (test/system/container-image.test.ts then starts it with
# `buildah run`; see docs/testing.md, "The container image"):
#   1. installs podman, buildah and mmdebstrap with apt when they are missing;
#   2. builds a stand-in for node:24-bookworm-slim: a Debian bookworm root file system
#      (mmdebstrap, from this machine's apt sources) holding the project's Node 24 binary at
#      /usr/local/bin/node and its npm under /usr/local/lib/node_modules, as the official image
#      lays them out, plus the CA bundle NODE_EXTRA_CA_CERTS names (the npm registry is reached
#      through it here) with NODE_EXTRA_CA_CERTS set; imported with `podman import`;
#   3. `podman build --isolation=chroot --build-arg NODE_IMAGE=<the stand-in>` of the Dockerfile.
# Both are cached: the stand-in is tagged with a hash of what goes into it and built only when
# that tag is missing; the image is labelled with a hash of the build context and not built again
# while it matches; otherwise podman's layer cache reuses every step whose inputs did not change.
# Prints the image reference as its last line of stdout. Exit 77: the packages cannot be
# installed here (no root, no sudo, or apt failed), so the caller skips, saying why.
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${PHONE_REP_TEST_IMAGE:-localhost/phone-reputation:test}
log() { echo "test-image: $*" >&2; }

missing=()
command -v podman >/dev/null || missing+=(podman)
command -v buildah >/dev/null || missing+=(buildah)
command -v mmdebstrap >/dev/null || missing+=(mmdebstrap)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then as_root=(); elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then as_root=(sudo -n); else
    log "cannot install ${missing[*]}: neither root nor passwordless sudo"
    exit 77
  fi
  log "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  if ! { "${as_root[@]}" apt-get update -qq && "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
    log "apt-get could not install ${missing[*]}"
    exit 77
  fi
fi
if [ "$(id -u)" -ne 0 ]; then
  # mmdebstrap --mode=root, podman import and buildah's chroot isolation as used here need root.
  log "building the image needs root (this runs as uid $(id -u))"
  exit 77
fi

# The stand-in holds Node 24 or later, the floor: the Node on PATH (npm scripts put the project's
# node_modules/.bin first), else the one the `node` devDependency installed.
node_bin=$(command -v node)
if [ "$("$node_bin" -p 'process.versions.node.split(".")[0]')" -lt 24 ] && [ -x node_modules/node/bin/node ]; then node_bin=node_modules/node/bin/node; fi
node_bin=$(readlink -f "$node_bin")
[ "$("$node_bin" -p 'process.versions.node.split(".")[0]')" -ge 24 ] || { log "no Node 24 or later to put in the stand-in base (run npm ci)"; exit 1; }
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
ca_bundle=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
[ -f "$node_bin" ] && [ -f "$npm_dir/package.json" ] || { log "node or npm not found ($node_bin, $npm_dir)"; exit 1; }
[ -f "$ca_bundle" ] || { log "no CA bundle at $ca_bundle"; exit 1; }

# The stand-in's tag: what goes into it (this recipe's version, Node, npm, the CA bundle).
recipe=1
key=$( { echo "recipe $recipe"; "$node_bin" --version; cat "$npm_dir/package.json"; sha256sum "$ca_bundle"; } | sha256sum | cut -c1-16)
BASE="localhost/phone-rep-stand-in-node:$key"

started=$(date +%s)
if podman image exists "$BASE"; then
  log "stand-in base $BASE cached"
else
  log "building the stand-in base $BASE (mmdebstrap bookworm + node $("$node_bin" --version) + npm $("$node_bin" -p "require('$npm_dir/package.json').version"))"
  ca_dir=$(dirname "$ca_bundle")
  mmdebstrap --quiet --variant=minbase --mode=root --format=tar \
    --customize-hook='mkdir -p "$1/usr/local/bin" "$1/usr/local/lib/node_modules" "$1'"$ca_dir"'"' \
    --customize-hook="copy-in $node_bin /usr/local/bin" \
    --customize-hook="copy-in $npm_dir /usr/local/lib/node_modules" \
    --customize-hook='[ "$(basename '"$node_bin"')" = node ] || mv "$1/usr/local/bin/$(basename '"$node_bin"')" "$1/usr/local/bin/node"' \
    --customize-hook='ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"; ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"' \
    --customize-hook="copy-in $ca_bundle $ca_dir" \
    --customize-hook='chroot "$1" groupadd --gid 1000 node && chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node' \
    bookworm - |
    podman import --quiet \
      --change "ENV NODE_EXTRA_CA_CERTS=$ca_bundle" \
      --change "ENV NODE_VERSION=$("$node_bin" --version | tr -d v)" \
      --change 'CMD ["node"]' \
      - "$BASE" >/dev/null
  log "stand-in base built in $(( $(date +%s) - started )) s"
fi

# The build context's fingerprint: every file .dockerignore lets in (its `!` lines; the context
# holds nothing else), the Dockerfile, .dockerignore and the base. An image already labelled with
# it was built from this very context: podman build is skipped (its layer cache would rebuild
# nothing, but checking every step takes a minute or more on a loaded machine).
context_paths=(Dockerfile .dockerignore)
while IFS= read -r line; do
  case "$line" in '!'*) context_paths+=("${line#!}") ;; esac
done < .dockerignore
context=$( { echo "$BASE"; find "${context_paths[@]%/}" -type f -print0 | sort -z | xargs -0 sha256sum; } | sha256sum | cut -c1-32)
if [ "$(podman image inspect --format '{{index .Labels "phone-rep.test.context"}}' "$IMAGE" 2>/dev/null || true)" = "$context" ]; then
  log "image $IMAGE already built from this context ($context)"
  echo "BASE=$BASE"
  echo "IMAGE=$IMAGE"
  exit 0
fi

build_started=$(date +%s)
log "podman build --isolation=chroot --build-arg NODE_IMAGE=$BASE -t $IMAGE ."
# --format docker: the OCI image format has no HEALTHCHECK (podman would drop it).
build_log=$(mktemp)
trap 'rm -f "$build_log"' EXIT
if ! podman build --isolation=chroot --format docker --layers \
  --build-arg "NODE_IMAGE=$BASE" --label "phone-rep.test.context=$context" -t "$IMAGE" . >"$build_log" 2>&1; then
  tail -n 40 "$build_log" >&2
  log "podman build failed (its last lines above)"
  exit 1
fi
log "image built in $(( $(date +%s) - build_started )) s ($(( $(date +%s) - started )) s in all)"
echo "BASE=$BASE"
echo "IMAGE=$IMAGE"
