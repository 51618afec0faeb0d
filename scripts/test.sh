#!/usr/bin/env bash
# Run the whole test suite against a real Neo4j and Redis that this script
# starts on free loopback ports and stops afterwards, whatever happens.
#
#   scripts/test.sh [go test flags]      (make test; .ci/run)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

scripts/deps.sh
# The panel's browser test drives Debian's chromium; the Python client's
# tests build their virtual environment themselves (scripts/pyenv.sh).
scripts/chromium.sh >/dev/null
# Neo4j's start-up cache is used when a run of Mneme made one; the tests never
# spend a stop recording one (scripts/neo4j.sh).
export NEO4J_AOT="${NEO4J_AOT:-use}"
dir="$(mktemp -d "${TMPDIR:-/tmp}/mneme-test.XXXXXX")"
cleanup() {
  scripts/redis-cluster.sh stop "$dir/cluster" >/dev/null 2>&1 || true
  [[ -d "$dir/model" ]] && { scripts/down.sh "$dir/model" || true; }
  scripts/down.sh "$dir" || true
  rm -rf "$dir"
}
trap cleanup EXIT
# Servers given by the environment are used as they are; tests use their own
# tenants, so they share a database safely.
scripts/up.sh "$dir" >/dev/null
# shellcheck disable=SC1091
source "$dir/env"
# A three-master Redis Cluster: the Redis-backed packages' tests run on it
# as well as on the single server.
scripts/redis-cluster.sh start "$dir/cluster" >/dev/null
export REDIS_CLUSTER_ADDRS="$(cat "$dir/cluster/addrs")"
# The API key secret of this run (internal/testenv has a fixed fallback).
export MNEME_KEY_SECRET="${MNEME_KEY_SECRET:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}"

echo "== gofmt and go vet"
unformatted="$(gofmt -l .)"
if [[ -n "$unformatted" ]]; then
  echo "gofmt needed:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...

echo "== go test (Neo4j $NEO4J_URI, Redis $REDIS_URL)"
go test -count=1 -timeout 30m "$@" ./...

echo "== erase and sessions end to end on the Redis Cluster"
MNEME_TEST_APP_ON_CLUSTER=1 go test -count=1 -timeout 20m -run 'Erase|Session' ./handlers

# The recall eval with the default model: its vector index takes the model's
# 512 dimensions, so it runs on a Neo4j and Redis of its own. The held-out
# part must keep the floors just below what the model reaches (0.854 recall@5
# and 0.882 unrelated empty when this was written; the targets are 0.95 and
# 0.97); memeval fails on anything forbidden.
echo "== recall eval with the default model (seed/eval, its own Neo4j)"
mkdir -p "$dir/model"
env -u NEO4J_URI -u NEO4J_USER -u NEO4J_PASSWORD -u REDIS_URL scripts/up.sh "$dir/model" >/dev/null
if ! (source "$dir/model/env" && MNEME_EMBEDDER=use go run ./cmd/memeval -min-heldout 0.83 -min-unrelated-empty 0.87 >"$dir/model/memeval.txt"); then
  cat "$dir/model/memeval.txt"
  exit 1
fi
sed -n '1,/^ *tune /p' "$dir/model/memeval.txt"
scripts/down.sh "$dir/model"

# Budgets are counts of executions, not durations: with a duration, Go's
# fuzz coordinator (before Go 1.27, go.dev/issue/75804) can fail a target
# with "context deadline exceeded" as the time runs out, having found
# nothing. The policy upload check compiles each module, so it gets fewer.
echo "== every fuzz target, briefly (make fuzz runs them longer)"
scripts/fuzz.sh "${MNEME_FUZZ_EXECS:-300x}" 'graph|guard|extract|memory|handlers|policyadmin|FuzzTranslate'
scripts/fuzz.sh 10x 'FuzzCheckPolicy'
# Its own Neo4j, Redis and three replicas under load for two minutes while a
# replica is killed, Redis restarts and Redis pauses; then a run whose
# oracle forgot a write must fail. A Neo4j restart is left to make chaos:
# the replicas take longer than its 10 s limit to recover from it here.
echo "== chaos: three replicas under load and faults (make chaos adds a Neo4j restart)"
go test -tags chaos -count=1 -timeout 30m -run TestChaosRun ./bench/chaos -chaos.faults kill-replica,restart-redis,pause-redis
