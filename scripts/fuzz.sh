#!/usr/bin/env bash
# Run every Go fuzz target for a bounded time, one after the other.
#
#   scripts/fuzz.sh [TIME] [PATTERN]    TIME per target (go test -fuzztime; default 10s),
#                                       PATTERN an extended regexp on "pkg Target" to run a subset
#
# Each target runs alone (-parallel 1 by default, FUZZ_PARALLEL to change): fuzzing is
# CPU-bound and the suite shares the machine. A failing input is written by go test to
# the package's testdata/fuzz/<Target>/, where it stays as a regression case for
# `go test`; the script stops at the first failure. Prints one line per target with
# the executions and time reported by the fuzzer.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

time="${1:-10s}"
pattern="${2:-.}"
parallel="${FUZZ_PARALLEL:-1}"

# Package and target of every fuzz test. TestFuzzTargetsListed (scripts)
# checks that this list and the code agree.
targets=(
  "./graph/neo FuzzFullTextQuery"
  "./graph/neo FuzzEscapePhrase"
  "./graph FuzzFilterPredicate"
  "./policy FuzzTranslate"
  "./policy FuzzCheckPolicy"
  "./policyadmin FuzzValidModules"
  "./guard FuzzScan"
  "./guard FuzzQuoteLine"
  "./extract FuzzRules"
  "./extract FuzzLLMAnswer"
  "./memory FuzzDecodeCursor"
  "./handlers FuzzDecodeBody"
  "./handlers FuzzBatchOrOne"
  "./handlers FuzzQueryParams"
  "./knowledge/sight FuzzLook"
)

ran=0
for t in "${targets[@]}"; do
  [[ "$t" =~ $pattern ]] || continue
  pkg="${t%% *}" name="${t##* }"
  log="$(mktemp)"
  start=$(date +%s)
  if ! go test -timeout 0 -run '^$' -fuzz "^${name}\$" -fuzztime "$time" -parallel "$parallel" "$pkg" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "fuzz.sh: $pkg $name FAILED; the input is in $pkg/testdata/fuzz/$name/" >&2
    exit 1
  fi
  # The fuzzer's last progress line: "fuzz: elapsed: 10s, execs: 12345 (1234/sec), ...".
  last="$(grep -E '^fuzz: elapsed' "$log" | tail -n 1 || true)"
  printf '%-14s %-22s %4ss  %s\n' "$pkg" "$name" "$(($(date +%s) - start))" "${last#fuzz: }"
  rm -f "$log"
  ran=$((ran + 1))
done
if ((ran == 0)); then
  echo "fuzz.sh: no target matches $pattern" >&2
  exit 1
fi
