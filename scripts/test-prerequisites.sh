#!/usr/bin/env bash
# What `npm test` needs besides Node, installed or started when missing (npm runs this as the
# `pretest` script, so the README's one test command is enough on a fresh Debian/Ubuntu machine):
#   - the project's packages (npm ci), when node_modules was never installed;
#   - Redis on 127.0.0.1:6379 (real Redis for the shared cache and rate-limit tests), and
#     redis-sentinel (the tests of a primary found through Sentinel start their own; the failover
#     system test a primary, a replica and three sentinels on free ports: harness/redis-sentinel.ts);
#   - Chromium (the lookup page's browser test; never a browser a test tool downloads);
#   - Kamailio with its http_client module, and SIPp (the SIP call-screening system test);
#   - vdirsyncer (the real CardDAV client of the blocklist feed's system test);
#   - python3 (its expat reads every WebDAV answer as a strict XML parser);
#   - nginx-light, which runs the shipped docker/nginx.conf in front of the built service;
#   - systemd's systemd-analyze, whose `verify` checks the example units (examples/systemd);
#   - docker-compose (Debian's), whose `config` validates compose.yaml (the container image test;
#     podman, buildah and mmdebstrap for building the image are installed by scripts/test-image.sh).
# Packages come from apt; apt-get runs as root, or through sudo when this is not root.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
[ -x /usr/bin/redis-server ] && [ -x /usr/bin/redis-cli ] || missing+=(redis-server)
[ -x /usr/bin/redis-sentinel ] || missing+=(redis-sentinel)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/sbin/kamailio ] || missing+=(kamailio)
compgen -G '/usr/lib/*/kamailio/modules/http_client.so' >/dev/null || missing+=(kamailio-utils-modules)
[ -x /usr/bin/sipp ] || missing+=(sip-tester)
[ -x /usr/bin/vdirsyncer ] || missing+=(vdirsyncer)
[ -x /usr/bin/python3 ] || missing+=(python3)
[ -x /usr/bin/docker-compose ] || missing+=(docker-compose)
[ -x /usr/sbin/nginx ] || missing+=(nginx-light)
[ -x /usr/bin/systemd-analyze ] || missing+=(systemd)

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then as_root=(); elif command -v sudo >/dev/null; then as_root=(sudo); else
    echo "test prerequisites missing (${missing[*]}) and neither root nor sudo to install them: apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "installing test prerequisites: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
  echo "starting redis-server on 127.0.0.1:6379" >&2
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
  for _ in $(seq 1 50); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.1; done
  redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null || { echo "redis-server did not start on 127.0.0.1:6379" >&2; exit 1; }
fi

if [ ! -f node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
