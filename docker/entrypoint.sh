#!/bin/sh
# The image's entrypoint, run by tini: runs the command in this process's place (exec), so
# signals from tini reach Node itself.
#
# Everything the service writes goes to STATE_DIR (/var/lib/phone-reputation, the volume): the
# lists file and the ARCEP data `phone-rep data update` fetches into arcep/. Until that first
# update, the image's snapshot (/app/data/arcep) is read, never written, so nothing needs seeding.
set -eu

# The default command, the launcher: ask it for its plan (the heap flags sized from CACHE_MAX_MB,
# and the script) and exec that, so the container runs one Node process, the server, under tini
# (src/start.ts, --exec-plan). The plan's words hold no spaces.
if [ "$#" -eq 2 ] && [ "$1" = node ] && [ "$2" = /app/dist/start.js ]; then
  plan=$(node /app/dist/start.js --exec-plan)
  # shellcheck disable=SC2086
  set -- node $plan
fi

exec "$@"
