#!/usr/bin/env bash
# Local redis-server for dev and tests, on a free 127.0.0.1 port.
#
#   scripts/redis.sh start DIR [--aof]   start (installs Debian's redis-server if missing),
#                                        print redis://127.0.0.1:PORT last
#   scripts/redis.sh stop DIR            SHUTDOWN-like SIGTERM, wait, SIGKILL after REDIS_STOP_TIMEOUT
#
# DIR gets redis.pid, redis.port, redis.log and, with --aof, appendonlydir/ (kept across restarts).
# Without --aof nothing is persisted. A start after a stop takes the port in redis.port again
# while it is free, so clients reconnect; on another port it rewrites REDIS_URL in DIR/env.
# Env: REDIS_PORT (fixed port), REDIS_START_TIMEOUT (30 s), REDIS_STOP_TIMEOUT (30 s).
set -euo pipefail

log() { printf 'redis.sh: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ensure_redis() {
  if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then return 0; fi
  command -v apt-get >/dev/null 2>&1 || die "redis-server not found and no apt-get to install it"
  [[ "$(id -u)" == 0 ]] || die "redis-server not found; install it: sudo apt-get install -y redis-server"
  log "installing redis-server with apt-get..."
  local out
  if ! out="$( (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server) 2>&1)"; then
    printf '%s\n' "$out" | tail -n 20 >&2
    die "apt-get install redis-server failed"
  fi
  command -v redis-server >/dev/null 2>&1 || die "redis-server still not found after apt-get install"
}

# PID recorded in DIR, if it is still a redis-server (guards against PID reuse).
running_pid() {
  local dir="$1" pid
  [[ -f "$dir/redis.pid" ]] || return 1
  pid="$(cat "$dir/redis.pid")"
  if ! [[ "$pid" =~ ^[0-9]+$ ]] || ! alive "$pid"; then return 1; fi
  grep -q redis-server "/proc/$pid/cmdline" 2>/dev/null || return 1
  echo "$pid"
}

# forget DIR PREV undoes a failed start: no pid, and the port of the last
# good start (PREV) stays recorded for the next one.
forget() {
  rm -f "$1/redis.pid"
  if [[ -n "$2" ]]; then echo "$2" >"$1/redis.port"; else rm -f "$1/redis.port"; fi
}

start() {
  local dir="$1" aof="$2" pid port prev
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if pid="$(running_pid "$dir")"; then
    log "already running (pid $pid)"
    echo "redis://127.0.0.1:$(cat "$dir/redis.port")"
    return 0
  fi
  rm -f "$dir/redis.pid"
  prev="$(recorded_port "$dir/redis.port")"
  ensure_redis
  # No RDB snapshots; --aof gives durability across restarts, otherwise nothing is kept.
  local -a persist=(--save '' --appendonly no)
  if [[ "$aof" == yes ]]; then persist=(--save '' --appendonly yes --appendfsync everysec); fi

  local timeout="${REDIS_START_TIMEOUT:-30}" logf="$dir/redis.log" attempts=3 attempt deadline
  if [[ -n "${REDIS_PORT:-}" ]]; then attempts=1; fi
  trap 'if [[ -n "${pid:-}" ]]; then kill_and_wait "$pid" 5; forget "$dir" "$prev"; fi; exit 130' INT TERM
  for ((attempt = 1; attempt <= attempts; attempt++)); do
    pid=""
    port="$(start_port "${REDIS_PORT:-}" "$prev" "$attempt")"
    if port_in_use "$port"; then
      ((attempts > 1)) || die "port $port on 127.0.0.1 is already in use"
      if [[ "$port" == "$prev" ]]; then log "port $prev of the last start is taken, starting on another"; fi
      continue
    fi
    if [[ -f "$logf" ]]; then mv -f "$logf" "$logf.1"; fi
    # Foreground under setsid rather than --daemonize: we know the PID at once and a
    # failed bind shows up as an exited process instead of a silent daemon death.
    setsid redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" \
      --daemonize no --logfile '' --loglevel notice "${persist[@]}" \
      >"$logf" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$dir/redis.pid"
    echo "$port" >"$dir/redis.port"
    deadline=$((SECONDS + timeout))
    while :; do
      if [[ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" == PONG ]]; then
        trap - INT TERM
        log "redis ready on port $port (pid $pid, aof=$aof, log $logf)"
        if [[ -n "$prev" && "$port" != "$prev" ]]; then
          log "moved from port $prev: clients holding it must be given the new one"
          env_repoint "$dir" REDIS_URL "redis://127.0.0.1:$prev" "redis://127.0.0.1:$port"
        fi
        echo "redis://127.0.0.1:$port"
        return 0
      fi
      if ! alive "$pid"; then
        forget "$dir" "$prev"
        if grep -qi 'address already in use' "$logf"; then
          if ((attempt < attempts)); then
            log "port $port was taken meanwhile, retrying with another port"
            continue 2
          fi
          die "redis-server could not bind 127.0.0.1:$port: port already in use (full log: $logf)"
        fi
        tail -n 20 "$logf" >&2
        die "redis-server exited during start-up (log above, full log: $logf)"
      fi
      if ((SECONDS >= deadline)); then
        kill_and_wait "$pid" 5
        forget "$dir" "$prev"
        tail -n 20 "$logf" >&2
        die "redis-server did not answer PING within ${timeout}s (full log: $logf)"
      fi
      sleep 0.1
    done
  done
  die "could not start redis-server: port $port is in use (tried $attempts ports)"
}

stop() {
  local dir="$1" pid
  if [[ ! -d "$dir" ]]; then
    log "$dir does not exist; nothing to stop"
    return 0
  fi
  # SIGTERM makes redis flush the AOF and exit cleanly (same as SHUTDOWN).
  if pid="$(running_pid "$dir")"; then
    kill_and_wait "$pid" "${REDIS_STOP_TIMEOUT:-30}"
    log "stopped (pid $pid)"
  else
    log "not running"
  fi
  # redis.port stays: the next start takes the same port if it can.
  rm -f "$dir/redis.pid"
}

usage() { die "usage: $0 start DIR [--aof] | stop DIR"; }

case "${1:-}" in
  start)
    [[ $# -eq 2 || ($# -eq 3 && "${3:-}" == --aof) ]] || usage
    aof=no
    if [[ "${3:-}" == --aof ]]; then aof=yes; fi
    start "$2" "$aof"
    ;;
  stop) [[ $# -eq 2 ]] || usage; stop "$2" ;;
  *) usage ;;
esac
