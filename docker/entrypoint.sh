#!/bin/sh
# The image's entrypoint, run by tini: prepares the volume, then runs the command in this
# process's place (exec), so signals from tini reach Node itself.
#
# The ARCEP numbering data is read from ARCEP_DATA_DIR (/var/lib/phone-reputation/arcep, on the
# volume, where `phone-rep data update` writes). An empty volume is seeded once with the image's
# snapshot (/app/data/arcep); after that the volume's files are the ones in use, refreshed by
# `phone-rep data update`. When the directory cannot be written (no volume on a read-only root,
# or a volume owned by another user), the image's snapshot is used read-only, with a warning.
set -eu

SNAPSHOT=/app/data/arcep

if [ -n "${ARCEP_DATA_DIR:-}" ] && [ "$ARCEP_DATA_DIR" != "$SNAPSHOT" ] && [ ! -e "$ARCEP_DATA_DIR/MAJNUM.csv" ]; then
  if mkdir -p "$ARCEP_DATA_DIR" 2>/dev/null && cp "$SNAPSHOT"/MAJNUM.csv "$SNAPSHOT"/MAJRIO.csv "$SNAPSHOT"/identifiants_ce.csv "$ARCEP_DATA_DIR"/ 2>/dev/null; then
    echo "phone-reputation: seeded $ARCEP_DATA_DIR with the image's ARCEP snapshot" >&2
  else
    echo "phone-reputation: cannot write $ARCEP_DATA_DIR (mount a writable volume on /var/lib/phone-reputation); using the image's ARCEP snapshot read-only" >&2
    ARCEP_DATA_DIR=$SNAPSHOT
    export ARCEP_DATA_DIR
  fi
fi

# The default command, the launcher: ask it for its plan (the heap flags sized from CACHE_MAX_MB,
# and the script) and exec that, so the container runs one Node process, the server, under tini
# (src/start.ts, --exec-plan). The plan's words hold no spaces.
if [ "$#" -eq 2 ] && [ "$1" = node ] && [ "$2" = /app/dist/start.js ]; then
  plan=$(node /app/dist/start.js --exec-plan)
  # shellcheck disable=SC2086
  set -- node $plan
fi

exec "$@"
