# shellcheck shell=bash
# Shared helpers for the scripts; sourced, never run. The sourcing
# script defines log() before it sources this file.

# A free loopback port: the kernel picks one for a socket bound to port 0.
free_port() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
    return
  fi
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 30000))
    if ! port_in_use "$p"; then echo "$p"; return; fi
  done
  die "could not find a free port"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# recorded_port FILE prints the port FILE holds, if it holds one.
recorded_port() {
  local p
  p="$(cat "$1" 2>/dev/null)" || return 0
  if [[ "$p" =~ ^[0-9]+$ ]]; then echo "$p"; fi
}

# start_port FIXED RECORDED ATTEMPT prints the port an attempt to start a
# server tries: FIXED when given; on the first attempt the port the server's
# last start recorded, because its clients still hold that address; else a
# free one.
start_port() {
  if [[ -n "$1" ]]; then
    echo "$1"
  elif [[ -n "$2" && "$3" == 1 ]]; then
    echo "$2"
  else
    free_port
  fi
}

# env_repoint DIR NAME OLD NEW makes DIR/env (written by up.sh) say NEW for
# NAME where it said OLD: a server that had to move keeps DIR/env true.
env_repoint() {
  local env="$1/env" name="$2" old="$3" new="$4" line found=no
  [[ -f "$env" && "$old" != "$new" ]] || return 0
  while IFS= read -r line; do
    if [[ "$line" == "export $name=$old" ]]; then line="export $name=$new" found=yes; fi
    printf '%s\n' "$line"
  done <"$env" >"$env.tmp"
  if [[ "$found" == yes ]]; then
    mv -f "$env.tmp" "$env"
    log "$env now says $name=$new"
  else
    rm -f "$env.tmp"
  fi
}

# Alive and not a zombie (a reparented child may linger unreaped in some containers).
alive() {
  local pid="$1" state
  [[ -r "/proc/$pid/stat" ]] || return 1
  state="$(sed 's/^.*) \(.\).*/\1/' "/proc/$pid/stat" 2>/dev/null)" || return 1
  [[ "$state" != Z ]]
}

# SIGTERM, then SIGKILL if the process outlives the timeout (seconds).
kill_and_wait() {
  local pid="$1" timeout="$2" deadline
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$((SECONDS + timeout))
  while alive "$pid"; do
    if ((SECONDS >= deadline)); then
      log "pid $pid still running after ${timeout}s, sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 0.5
      break
    fi
    sleep 0.2
  done
}

# fetch_wheel DIR PKG VERSION WHEEL SHA256 downloads one wheel from PyPI into
# DIR and checks its sha256. pip is the registry's own client; a throwaway
# venv in DIR gives one on any Debian. The sourcing script defines die().
fetch_wheel() {
  local dir="$1" pkg="$2" version="$3" wheel="$4" sha256="$5" got
  log "fetching $pkg==$version from PyPI..."
  python3 -m venv "$dir/venv" >/dev/null || die "python3 -m venv failed (apt-get install python3-venv)"
  "$dir/venv/bin/pip" download --quiet --no-deps --only-binary=:all: -d "$dir" "$pkg==$version" ||
    die "pip download $pkg==$version failed"
  [[ -s "$dir/$wheel" ]] || die "pip did not produce $wheel"
  got="$(sha256sum "$dir/$wheel" | cut -d' ' -f1)"
  [[ "$got" == "$sha256" ]] || die "$wheel has sha256 $got, expected $sha256"
}
