#!/usr/bin/env bash
# Install what Mneme's servers need when it is missing: a JDK and Maven for the
# embedded Neo4j launcher (redis.sh installs redis-server itself). Go must
# already be on the machine: the module needs Go 1.26.
set -euo pipefail

log() { printf 'deps.sh: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

command -v go >/dev/null 2>&1 || die "go not found: install Go 1.26 or newer"

missing=()
command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if ((${#missing[@]} > 0)); then
  command -v apt-get >/dev/null 2>&1 || die "missing ${missing[*]} and no apt-get to install them"
  [[ "$(id -u)" == 0 ]] || die "missing ${missing[*]}: sudo apt-get install -y ${missing[*]}"
  log "installing ${missing[*]} with apt-get..."
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
