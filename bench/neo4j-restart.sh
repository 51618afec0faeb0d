#!/usr/bin/env bash
# Restart Neo4j under one idle memoryd, alternately with and without the
# start-up cache (scripts/neo4j.sh, Java 25+), and time each start and the
# first recalls after it. With a rate, recalls also arrive at that many per
# second from before each stop until 25 s after each start, and each round
# reports how many failed and how long after the start the last failed or
# slow (over 2 s) one answered: what a client sees of the restart.
#
#   bench/neo4j-restart.sh [ROUNDS [RATE]]     (default 3 rounds, no load)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
rounds="${1:-3}"
rate="${2:-0}"
dir="$(mktemp -d "${TMPDIR:-/tmp}/mneme-restart.XXXXXX")"
mpid=""
cleanup() {
  if [[ -n "$mpid" ]]; then kill -INT "$mpid" 2>/dev/null || true; wait "$mpid" 2>/dev/null || true; fi
  scripts/down.sh "$dir" >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
go build -o "$dir/memoryd" ./cmd/memoryd
NEO4J_AOT=auto scripts/up.sh "$dir" >/dev/null
# shellcheck disable=SC1091
source "$dir/env"
port="${NEO4J_URI##*:}"
addr="127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
MNEME_KEY_SECRET="${MNEME_KEY_SECRET:-0123456789abcdef0123456789abcdef}" "$dir/memoryd" -addr "$addr" -seed >"$dir/memoryd.log" 2>&1 &
mpid=$!
until curl -sf "$addr/readyz" >/dev/null; do sleep 0.5; done
admin=mn_acme_m3tVzj56am8RDQoFx5XhHgUG # the demo admin's key (seed/demo.json)
recall() {
  curl -s -o /dev/null -w "%{http_code} %{time_total}s  " -H "Authorization: Bearer $admin" \
    -H 'Content-Type: application/json' -d "{\"user_id\":\"alice\",\"query\":\"$1\"}" "$addr/v1/recall"
}
now() { date +%s.%N; }
# trickle sends recalls at $rate per second until the file $1 exists, and
# appends "sent done status seconds" for each to $2.
trickle() {
  local stop="$1" out="$2" i=0 t
  while [[ ! -e "$stop" ]]; do
    i=$((i + 1))
    (
      t=$(now)
      r=$(curl -s -o /dev/null -m 60 -w "%{http_code} %{time_total}" -H "Authorization: Bearer $admin" \
        -H 'Content-Type: application/json' -d "{\"user_id\":\"alice\",\"query\":\"budget trickle $i\"}" "$addr/v1/recall")
      echo "$t $(now) $r" >>"$out"
    ) &
    sleep "$(echo "1 / $rate" | bc -l)"
  done
  wait
}
# Without a cache, this first start records one through memoryd's warm-up and
# these recalls, and the first stop below writes it.
recall budget >/dev/null; recall 会员 >/dev/null
for round in $(seq 1 "$rounds"); do
  for mode in use off; do
    if [[ "$rate" != 0 ]]; then
      rm -f "$dir/trickle.stop" "$dir/trickle.log"
      trickle "$dir/trickle.stop" "$dir/trickle.log" &
      tpid=$!
      sleep 2
    fi
    scripts/neo4j.sh stop "$dir" >/dev/null 2>&1
    t0=$(now)
    NEO4J_AOT=$mode NEO4J_PORT="$port" scripts/neo4j.sh start "$dir" >/dev/null 2>&1
    t1=$(now)
    printf 'cache %-3s round %d: start %.1fs; ' "$mode" "$round" "$(echo "$t1 - $t0" | bc)"
    if [[ "$rate" != 0 ]]; then
      sleep 25
      touch "$dir/trickle.stop"
      wait "$tpid"
      awk -v ready="$t1" '$3 != 200 { failed++ } ($3 != 200 || $4 > 2) && $2 > last { last = $2 }
        END { printf "%d of %d recalls failed; the last failed or slow one answered %.1fs after the start\n", failed, NR, (last > ready ? last - ready : 0) }' "$dir/trickle.log"
    else
      printf 'recalls: '
      recall "budget $round"; recall "what does she like $round"; recall "会员 $round"
      printf '\n'
    fi
  done
done
