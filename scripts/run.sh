#!/usr/bin/env bash
# Run Mneme locally: install what is missing, start Neo4j and Redis (data kept
# in .run/dev between runs), load the demo data, and serve on localhost:8080
# until Ctrl-C, which also stops the servers.
#
#   scripts/run.sh            (make run)
#   MNEME_ADDR=127.0.0.1:9090 scripts/run.sh
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${RUN_DIR:-$root/.run/dev}"
cd "$root"

scripts/deps.sh
scripts/up.sh "$dir" --aof >/dev/null
trap 'scripts/down.sh "$dir"' EXIT
# shellcheck disable=SC1091
source "$dir/env"

mkdir -p "$dir/bin"
go build -o "$dir/bin/" ./cmd/memoryd ./cmd/memctl

addr="${MNEME_ADDR:-127.0.0.1:8080}"
echo
echo "Mneme: http://$addr   (OpenAPI: http://$addr/openapi.json)"
"$dir/bin/memctl" keys
echo "Try: curl -s -H 'Authorization: Bearer <key>' http://$addr/v1/whoami"
echo
MNEME_ADDR="$addr" "$dir/bin/memoryd" -seed
