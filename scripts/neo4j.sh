#!/usr/bin/env bash
# Local Neo4j Community for dev and tests: embedded launcher, Bolt on 127.0.0.1, no auth.
#
#   scripts/neo4j.sh start DIR   build the launcher if needed, start, print bolt://127.0.0.1:PORT last
#   scripts/neo4j.sh stop DIR    SIGTERM, wait, SIGKILL after NEO4J_STOP_TIMEOUT
#   scripts/neo4j.sh build       only build the launcher (idempotent)
#
# DIR gets neo4j.pid, neo4j.port, neo4j.log and data/ (kept across restarts).
# A start after a stop takes the port in neo4j.port again while it is free, so
# clients reconnect; on another port it rewrites NEO4J_URI in DIR/env.
# Env: NEO4J_LINE=5.26|2026 (default: 2026 when a JDK >= 21 exists, else 5.26),
#      NEO4J_JAVA_HOME (force a JDK), NEO4J_PORT (fixed port), NEO4J_HEAP (1g),
#      NEO4J_PAGECACHE (256m), NEO4J_JAVA_OPTS (extra JVM flags),
#      NEO4J_START_TIMEOUT (120 s), NEO4J_STOP_TIMEOUT (60 s),
#      NEO4J_AOT=auto|use|off (auto), NEO4J_AOT_DIR (~/.cache/mneme/neo4j-aot).
#
# Start-up cache (Java 25+): a JVM AOT cache of the classes Neo4j loads and the
# methods it runs, which makes a start about 3 s shorter and its first queries
# faster (Neo4j plans every statement again after a restart). With auto, a start
# without a cache records one, and its stop writes it (about 20 s, once per JDK
# and launcher build); use only uses a cache already there; off does neither.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
launcher_dir="$here/neo4j-launcher"
main_class=mneme.launcher.Launcher

log() { printf 'neo4j.sh: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# Feature version (17, 21, 25...) of a JDK home, from its release file or by asking java.
jdk_major() {
  local home="$1" v=""
  if [[ -f "$home/release" ]]; then
    v="$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$home/release")"
  fi
  if [[ -z "$v" ]]; then
    v="$("$home/bin/java" -XshowSettings:properties -version 2>&1 |
      sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p')" || true
  fi
  printf '%s' "$v"
}

# Sets JDK_HOME, JDK_MAJOR and LINE (5.26 or 2026). 2026.x needs Java 21+;
# 5.26 is run on the lowest JDK >= 17 found (the one it is best tested with).
select_jdk() {
  local want="${NEO4J_LINE:-auto}" h m
  local -a homes=()
  case "$want" in auto | 5.26 | 2026) ;; *) die "NEO4J_LINE must be 5.26 or 2026, not '$want'" ;; esac
  if [[ -n "${NEO4J_JAVA_HOME:-}" ]]; then
    homes=("$NEO4J_JAVA_HOME")
  else
    if command -v java >/dev/null 2>&1; then
      homes+=("$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
    fi
    if [[ -n "${JAVA_HOME:-}" ]]; then homes+=("$JAVA_HOME"); fi
    for h in /usr/lib/jvm/*/; do
      if [[ -d "$h" ]]; then homes+=("${h%/}"); fi
    done
  fi
  local hi_home="" hi=0 lo_home="" lo=999
  for h in "${homes[@]}"; do
    [[ -x "$h/bin/java" ]] || continue
    m="$(jdk_major "$h")"
    if ! [[ "$m" =~ ^[0-9]+$ ]] || ((m < 17)); then continue; fi
    if ((m > hi)); then hi=$m hi_home=$h; fi
    if ((m < lo)); then lo=$m lo_home=$h; fi
  done
  [[ -n "$hi_home" ]] || die "no Java 17+ found (looked at: ${homes[*]:-nothing}); apt-get install -y openjdk-17-jdk-headless"
  if [[ "$want" == 2026 || ("$want" == auto && hi -ge 21) ]]; then
    ((hi >= 21)) || die "NEO4J_LINE=2026 needs Java 21+, best found is Java $hi ($hi_home)"
    LINE=2026 JDK_HOME=$hi_home JDK_MAJOR=$hi
  else
    LINE=5.26 JDK_HOME=$lo_home JDK_MAJOR=$lo
  fi
}

# Builds target-$LINE/ (classes + copied dependency jars) unless it is newer than the sources.
build() {
  select_jdk
  local target="$launcher_dir/target-$LINE"
  local stamp="$target/.built"
  up_to_date() {
    [[ -f "$stamp" && -f "$target/launcher.jar" ]] && [[ -z "$(find "$launcher_dir/pom.xml" "$launcher_dir/src" -newer "$stamp" -print -quit)" ]]
  }
  if up_to_date; then return 0; fi
  command -v mvn >/dev/null 2>&1 || die "mvn not found; apt-get install -y maven"
  [[ -x "$JDK_HOME/bin/javac" ]] || die "$JDK_HOME has no javac (a JDK, not a JRE, is needed to build)"
  # Parallel starts (e.g. several test packages) must not build into the same folder at once.
  exec 9<"$launcher_dir"
  flock 9
  if ! up_to_date; then
    log "building Neo4j $LINE launcher with Java $JDK_MAJOR ($JDK_HOME)..."
    local t0=$SECONDS profile=()
    if [[ "$LINE" == 2026 ]]; then profile=(-P neo4j-2026); fi
    rm -rf "$target"
    mkdir -p "$target"
    if ! JAVA_HOME="$JDK_HOME" mvn -q -B -f "$launcher_dir/pom.xml" "${profile[@]}" \
      compile dependency:copy-dependencies >"$target/build.log" 2>&1; then
      tail -n 40 "$target/build.log" >&2
      die "launcher build failed (full log: $target/build.log)"
    fi
    # A jar, not a classes folder: the JVM's AOT cache accepts only jars on the class path.
    "$JDK_HOME/bin/jar" cf "$target/launcher.jar" -C "$target/classes" . || die "could not pack $target/launcher.jar"
    touch "$stamp"
    log "built in $((SECONDS - t0)) s"
  fi
  exec 9<&-
}

# aot_cache prints the start-up cache's path for this JDK and launcher build:
# the JVM refuses a cache made with another JDK or other jars, so their
# versions, sizes and times name it.
aot_cache() {
  local target="$launcher_dir/target-$LINE" key
  key="$( (
    "$JDK_HOME/bin/java" -version 2>&1
    stat -c '%n %s %Y' "$target/launcher.jar" "$target"/dependency/*.jar
  ) | sha1sum | cut -c1-12)"
  printf '%s/%s-java%s-%s.aot' "${NEO4J_AOT_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mneme/neo4j-aot}" "$LINE" "$JDK_MAJOR" "$key"
}

# aot_opts sets the JVM flags of the start-up cache in the array named by $2
# for a server in DIR ($1): use the cache, or record one into DIR that stop
# moves into place.
aot_opts() {
  local dir="$1" mode="${NEO4J_AOT:-auto}" cache
  local -n out="$2"
  case "$mode" in auto | use | off) ;; *) die "NEO4J_AOT must be auto, use or off, not '$mode'" ;; esac
  rm -f "$dir/neo4j.aot" "$dir/neo4j.aot.dest"
  if [[ "$mode" == off ]] || ((JDK_MAJOR < 25)); then return 0; fi
  cache="$(aot_cache)"
  if [[ -s "$cache" ]]; then
    out+=(-XX:AOTCache="$cache")
  elif [[ "$mode" == auto ]]; then
    out+=(-XX:AOTCacheOutput="$dir/neo4j.aot")
    echo "$cache" >"$dir/neo4j.aot.dest"
    log "recording a start-up cache for this JDK; the stop writes it (about 20 s, once)"
  fi
}

# aot_keep moves the start-up cache a stopped server in DIR recorded into
# place, if the JVM finished writing it.
aot_keep() {
  local dir dest
  dir="$(cd "$1" && pwd)" # the JVM logs the absolute path
  [[ -f "$dir/neo4j.aot.dest" ]] || return 0
  dest="$(cat "$dir/neo4j.aot.dest")"
  rm -f "$dir/neo4j.aot.dest"
  if [[ -s "$dir/neo4j.aot" ]] && grep -q "AOTCache creation is complete: $dir/neo4j.aot" "$dir/neo4j.log"; then
    mkdir -p "$(dirname "$dest")"
    # Across file systems mv copies: copy beside the cache, then rename.
    mv -f "$dir/neo4j.aot" "$dest.$$.tmp" && mv -f "$dest.$$.tmp" "$dest" && log "start-up cache written to $dest"
    # Each launcher build (each checkout) has its own; keep the three newest of this line and JDK.
    local old
    while read -r old; do rm -f "$old"; done < <(ls -t "${dest%-*}"-*.aot 2>/dev/null | tail -n +4)
  fi
  rm -f "$dir/neo4j.aot" "$dest.$$.tmp"
}

# PID of our launcher recorded in DIR, if it is still that process (guards against PID reuse).
running_pid() {
  local dir="$1" pid
  [[ -f "$dir/neo4j.pid" ]] || return 1
  pid="$(cat "$dir/neo4j.pid")"
  if ! [[ "$pid" =~ ^[0-9]+$ ]] || ! alive "$pid"; then return 1; fi
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$main_class" || return 1
  echo "$pid"
}

# forget DIR PREV undoes a failed start: no pid, and the port of the last
# good start (PREV) stays recorded for the next one.
forget() {
  rm -f "$1/neo4j.pid"
  if [[ -n "$2" ]]; then echo "$2" >"$1/neo4j.port"; else rm -f "$1/neo4j.port"; fi
}

start() {
  local dir="$1" pid port prev
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  # A stop under way (another run's Ctrl-C, still writing its start-up
  # cache) would hand this run a server about to go: wait for it to end.
  local stopper
  while stopper="$(cat "$dir/neo4j.stopping" 2>/dev/null)" && [[ "$stopper" =~ ^[0-9]+$ ]] && alive "$stopper"; do
    sleep 0.2
  done
  if pid="$(running_pid "$dir")"; then
    log "already running (pid $pid)"
    echo "bolt://127.0.0.1:$(cat "$dir/neo4j.port")"
    return 0
  fi
  rm -f "$dir/neo4j.pid"
  prev="$(recorded_port "$dir/neo4j.port")"
  build
  # 2026.x upgrades a 5.26 store in place, but 5.26 cannot open a store 2026.x has written.
  local marker="$dir/data/.neo4j-line"
  if [[ "$LINE" == 5.26 && -f "$marker" && "$(cat "$marker")" == 2026 ]]; then
    die "$dir/data was written by Neo4j 2026.x and Neo4j 5.26 cannot open it; use a Java 21+ JDK (or NEO4J_LINE=2026), or delete $dir/data"
  fi
  local cp="$launcher_dir/target-$LINE/launcher.jar:$launcher_dir/target-$LINE/dependency/*"
  local heap="${NEO4J_HEAP:-1g}"
  # --add-opens: Neo4j's page cache and transaction log need reflective access to
  # DirectByteBuffer and FileDescriptor; without them it logs warnings and falls back.
  local -a opts=(
    -Xms"$heap" -Xmx"$heap"
    -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -XX:-OmitStackTraceInFastThrow
    -Djdk.nio.maxCachedBufferSize=1024 -Dio.netty.tryReflectionSetAccessible=true
    -Dfile.encoding=UTF-8
    --add-opens=java.base/java.nio=ALL-UNNAMED
    --add-opens=java.base/java.io=ALL-UNNAMED
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
    --enable-native-access=ALL-UNNAMED
    -Dmneme.pagecache="${NEO4J_PAGECACHE:-256m}"
  )
  # JDK 24+ warns on every start that Neo4j's bundled libraries use sun.misc.Unsafe.
  if ((JDK_MAJOR >= 24)); then opts+=(--sun-misc-unsafe-memory-access=allow); fi
  # Lucene (vector and fulltext indexes) uses SIMD through the Vector API when it is readable.
  if ((JDK_MAJOR >= 21)); then opts+=(--add-modules=jdk.incubator.vector); fi
  # Extra JVM flags, split on spaces (e.g. -XX:TieredStopAtLevel=1 halves start-up CPU).
  aot_opts "$dir" opts
  local -a extra=()
  read -ra extra <<<"${NEO4J_JAVA_OPTS:-}"
  opts+=("${extra[@]}")

  local timeout="${NEO4J_START_TIMEOUT:-120}" logf="$dir/neo4j.log" attempts=3 attempt deadline t0=$SECONDS
  if [[ -n "${NEO4J_PORT:-}" ]]; then attempts=1; fi
  # Abort a half-started server if we are interrupted while waiting.
  trap 'if [[ -n "${pid:-}" ]]; then kill_and_wait "$pid" 10; forget "$dir" "$prev"; fi; exit 130' INT TERM
  for ((attempt = 1; attempt <= attempts; attempt++)); do
    pid=""
    port="$(start_port "${NEO4J_PORT:-}" "$prev" "$attempt")"
    if port_in_use "$port"; then
      ((attempts > 1)) || die "port $port on 127.0.0.1 is already in use"
      if [[ "$port" == "$prev" ]]; then log "port $prev of the last start is taken, starting on another"; fi
      continue
    fi
    if [[ -f "$logf" ]]; then mv -f "$logf" "$logf.1"; fi
    # setsid: the server outlives this script and a Ctrl-C in the terminal that started it.
    setsid "$JDK_HOME/bin/java" "${opts[@]}" -cp "$cp" "$main_class" "$port" "$dir/data" \
      >"$logf" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$dir/neo4j.pid"
    echo "$port" >"$dir/neo4j.port"
    deadline=$((SECONDS + timeout))
    while :; do
      if grep -q '^READY ' "$logf"; then
        trap - INT TERM
        echo "$LINE" >"$marker"
        log "Neo4j $LINE (Java $JDK_MAJOR) ready in $((SECONDS - t0)) s, pid $pid, log $logf"
        if [[ -n "$prev" && "$port" != "$prev" ]]; then
          log "moved from port $prev: clients holding it must be given the new one"
          env_repoint "$dir" NEO4J_URI "bolt://127.0.0.1:$prev" "bolt://127.0.0.1:$port"
        fi
        echo "bolt://127.0.0.1:$port"
        return 0
      fi
      if ! alive "$pid"; then
        forget "$dir" "$prev"
        if grep -qiE 'address already in use|PortBindException' "$logf"; then
          if ((attempt < attempts)); then
            log "port $port was taken meanwhile, retrying with another port"
            continue 2
          fi
          tail -n 5 "$logf" >&2
          die "Neo4j could not bind 127.0.0.1:$port: port already in use (full log: $logf)"
        fi
        tail -n 40 "$logf" >&2
        # The launcher's one-line summary of the cause, in case the tail is all stack trace.
        grep -m1 '^FAILED' "$logf" >&2 || true
        die "Neo4j exited during start-up (log above, full log: $logf)"
      fi
      if ((SECONDS >= deadline)); then
        kill_and_wait "$pid" 10
        forget "$dir" "$prev"
        tail -n 40 "$logf" >&2
        die "Neo4j not ready after ${timeout}s (log above, full log: $logf)"
      fi
      sleep 0.2
    done
  done
  die "could not start Neo4j: port $port is in use (tried $attempts ports)"
}

stop() {
  local dir="$1" pid
  if [[ ! -d "$dir" ]]; then
    log "$dir does not exist; nothing to stop"
    return 0
  fi
  echo "$$" >"$dir/neo4j.stopping"
  if pid="$(running_pid "$dir")"; then
    kill_and_wait "$pid" "${NEO4J_STOP_TIMEOUT:-60}"
    log "stopped (pid $pid)"
  else
    log "not running"
  fi
  aot_keep "$dir"
  # neo4j.port stays: the next start takes the same port if it can.
  rm -f "$dir/neo4j.pid" "$dir/neo4j.stopping"
}

usage() { die "usage: $0 start DIR | stop DIR | build"; }

case "${1:-}" in
  start) [[ $# -eq 2 ]] || usage; start "$2" ;;
  stop) [[ $# -eq 2 ]] || usage; stop "$2" ;;
  build) [[ $# -eq 1 ]] || usage; build; echo "$launcher_dir/target-$LINE" ;;
  *) usage ;;
esac
