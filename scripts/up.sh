#!/usr/bin/env bash
# Start Neo4j and Redis for dev/tests and write DIR/env (also printed on stdout, so
# `eval "$(scripts/up.sh DIR)"` works).
#
#   scripts/up.sh DIR [--aof]
#
# Already-running servers can be used instead: if NEO4J_URI is set, Neo4j is not
# started and NEO4J_URI/NEO4J_USER/NEO4J_PASSWORD are passed through; likewise REDIS_URL.
# --aof is passed to redis.sh (persist Redis data in DIR across restarts).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { printf 'up.sh: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ $# -ge 1 && $# -le 2 ]] || die "usage: $0 DIR [--aof]"
dir="$1"
redis_args=()
if [[ $# -eq 2 ]]; then
  [[ "$2" == --aof ]] || die "usage: $0 DIR [--aof]"
  redis_args=(--aof)
fi
mkdir -p "$dir"

started_neo4j=no
# If Redis fails after we started Neo4j, stop Neo4j again so nothing is left running.
cleanup() {
  if [[ "$started_neo4j" == yes ]]; then "$here/neo4j.sh" stop "$dir" || true; fi
}
trap cleanup ERR

if [[ -n "${NEO4J_URI:-}" ]]; then
  log "NEO4J_URI is set: using $NEO4J_URI"
  neo4j_uri="$NEO4J_URI" neo4j_user="${NEO4J_USER:-}" neo4j_password="${NEO4J_PASSWORD:-}"
else
  # Only undo a start that this run made (a server already running in DIR stays up).
  if [[ ! -f "$dir/neo4j.pid" ]]; then started_neo4j=yes; fi
  neo4j_uri="$("$here/neo4j.sh" start "$dir" | tail -n 1)"
  neo4j_user="" neo4j_password=""
fi

if [[ -n "${REDIS_URL:-}" ]]; then
  log "REDIS_URL is set: using $REDIS_URL"
  redis_url="$REDIS_URL"
else
  redis_url="$("$here/redis.sh" start "$dir" "${redis_args[@]}" | tail -n 1)"
fi
trap - ERR

# Empty values are written bare (export NEO4J_USER=), others shell-quoted.
env_line() {
  if [[ -z "$2" ]]; then printf 'export %s=\n' "$1"; else printf 'export %s=%q\n' "$1" "$2"; fi
}
{
  env_line NEO4J_URI "$neo4j_uri"
  env_line NEO4J_USER "$neo4j_user"
  env_line NEO4J_PASSWORD "$neo4j_password"
  env_line REDIS_URL "$redis_url"
} >"$dir/env.tmp"
mv -f "$dir/env.tmp" "$dir/env"
log "servers up; environment in $dir/env"
cat "$dir/env"
