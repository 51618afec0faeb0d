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

# API keys are stored under an HMAC with this secret: made once, kept with
# the data it protects (a new secret would orphan every stored key).
if [[ -z "${MNEME_KEY_SECRET:-}" ]]; then
  if [[ ! -s "$dir/key-secret" ]]; then
    (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$dir/key-secret")
  fi
  chmod 600 "$dir/key-secret"
  MNEME_KEY_SECRET="$(cat "$dir/key-secret")"
fi
export MNEME_KEY_SECRET

mkdir -p "$dir/bin"
go build -o "$dir/bin/" ./cmd/memoryd ./cmd/memctl

addr="${MNEME_ADDR:-127.0.0.1:8080}"
echo
echo "Mneme: http://$addr   (OpenAPI: http://$addr/openapi.json)"
"$dir/bin/memctl" keys
echo "Try: curl -s -H 'Authorization: Bearer <key>' http://$addr/v1/whoami"
echo
MNEME_ADDR="$addr" "$dir/bin/memoryd" -seed
