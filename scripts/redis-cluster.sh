#!/usr/bin/env bash
# A local Redis Cluster of three masters (no replicas) on loopback, for tests.
#
#   scripts/redis-cluster.sh start DIR   start three cluster-mode redis-servers and join them;
#                                        print the addresses last, comma-separated
#                                        (the value of REDIS_CLUSTER_ADDRS)
#   scripts/redis-cluster.sh stop DIR    stop them (SIGTERM, SIGKILL after REDIS_STOP_TIMEOUT)
#
# DIR gets node1..node3/ (redis.pid, redis.port, redis.log, nodes.conf) and addrs. Nothing
# is persisted: a restart makes a new, empty cluster. Each node also needs its cluster bus
# port (port + 10000) free. Env: REDIS_START_TIMEOUT (30 s), REDIS_STOP_TIMEOUT (30 s).
set -euo pipefail

log() { printf 'redis-cluster.sh: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

nodes=3

node_pid() {
  local d="$1" pid
  [[ -f "$d/redis.pid" ]] || return 1
  pid="$(cat "$d/redis.pid")"
  [[ "$pid" =~ ^[0-9]+$ ]] && alive "$pid" && grep -q redis-server "/proc/$pid/cmdline" 2>/dev/null || return 1
  echo "$pid"
}

# A free port whose cluster bus port is free too.
cluster_port() {
  local p
  for _ in $(seq 50); do
    p="$(free_port)"
    if ((p + 10000 <= 65535)) && ! port_in_use $((p + 10000)); then echo "$p"; return; fi
  done
  die "could not find a free port with a free bus port"
}

start() {
  local dir="$1" i d pid port addrs=() deadline
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null ||
    die "redis-server and redis-cli are needed (scripts/redis.sh start installs them)"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [[ -f "$dir/addrs" ]] && node_pid "$dir/node1" >/dev/null; then
    log "already running"
    cat "$dir/addrs"
    return 0
  fi
  trap 'stop "$dir"; exit 130' INT TERM
  for ((i = 1; i <= nodes; i++)); do
    d="$dir/node$i"
    mkdir -p "$d"
    rm -f "$d/nodes.conf" "$d/redis.pid" "$d/redis.port"
    port="$(cluster_port)"
    setsid redis-server --bind 127.0.0.1 --port "$port" --dir "$d" --daemonize no --logfile '' \
      --loglevel warning --save '' --appendonly no \
      --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 5000 \
      >"$d/redis.log" 2>&1 </dev/null &
    echo $! >"$d/redis.pid"
    echo "$port" >"$d/redis.port"
    addrs+=("127.0.0.1:$port")
  done
  deadline=$((SECONDS + ${REDIS_START_TIMEOUT:-30}))
  for ((i = 1; i <= nodes; i++)); do
    d="$dir/node$i"
    until [[ "$(redis-cli -p "$(cat "$d/redis.port")" ping 2>/dev/null)" == PONG ]]; do
      node_pid "$d" >/dev/null || { tail -n 20 "$d/redis.log" >&2; stop "$dir"; die "node $i exited during start-up"; }
      ((SECONDS < deadline)) || { stop "$dir"; die "node $i did not answer PING in time"; }
      sleep 0.1
    done
  done
  if ! out="$(redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes 2>&1)"; then
    printf '%s\n' "$out" | tail -n 20 >&2
    stop "$dir"
    die "redis-cli --cluster create failed"
  fi
  # The cluster answers once every slot is served and every node agrees.
  until [[ "$(redis-cli -p "${addrs[0]##*:}" cluster info 2>/dev/null | tr -d '\r' | grep '^cluster_state:')" == cluster_state:ok ]] &&
    redis-cli --cluster check "${addrs[0]}" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || { stop "$dir"; die "the cluster did not become ready in time"; }
    sleep 0.2
  done
  trap - INT TERM
  (IFS=,; echo "${addrs[*]}") >"$dir/addrs"
  log "cluster ready: $(cat "$dir/addrs")"
  cat "$dir/addrs"
}

stop() {
  local dir="$1" i d pid
  [[ -d "$dir" ]] || { log "$dir does not exist; nothing to stop"; return 0; }
  for ((i = 1; i <= nodes; i++)); do
    d="$dir/node$i"
    if pid="$(node_pid "$d")"; then
      kill_and_wait "$pid" "${REDIS_STOP_TIMEOUT:-30}"
    fi
    rm -f "$d/redis.pid" "$d/redis.port" "$d/nodes.conf"
  done
  rm -f "$dir/addrs"
  log "stopped"
}

case "${1:-}" in
  start) [[ $# -eq 2 ]] || die "usage: $0 start DIR | stop DIR"; start "$2" ;;
  stop) [[ $# -eq 2 ]] || die "usage: $0 start DIR | stop DIR"; stop "$2" ;;
  *) die "usage: $0 start DIR | stop DIR" ;;
esac
