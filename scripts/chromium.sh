#!/usr/bin/env bash
# Install Debian's headless-capable chromium when it is missing, for the
# panel's browser test (web/browser_test.go), and print its path.
set -euo pipefail

log() { printf 'chromium.sh: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

find_chromium() {
  local c
  for c in chromium chromium-browser; do
    if command -v "$c" >/dev/null 2>&1; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}

if path=$(find_chromium); then
  printf '%s\n' "$path"
  exit 0
fi
command -v apt-get >/dev/null 2>&1 || die "chromium is missing and there is no apt-get to install it"
[[ "$(id -u)" == 0 ]] || die "chromium is missing: sudo apt-get install -y chromium"
log "installing chromium with apt-get..."
apt-get update -qq >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
path=$(find_chromium) || die "apt-get installed chromium but no chromium binary is on PATH"
printf '%s\n' "$path"
