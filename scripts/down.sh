#!/usr/bin/env bash
# Stop the Neo4j and Redis that scripts/up.sh started in DIR (servers passed in
# through NEO4J_URI/REDIS_URL have no pid file there and are left alone).
#
#   scripts/down.sh DIR
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# -eq 1 ]] || { printf 'usage: %s DIR\n' "$0" >&2; exit 1; }
dir="$1"

rc=0
# Stop both even if one of them fails.
"$here/redis.sh" stop "$dir" || rc=1
"$here/neo4j.sh" stop "$dir" || rc=1
rm -f "$dir/env"
exit "$rc"
