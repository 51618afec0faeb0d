#!/usr/bin/env bash
# Refresh the panel's third-party browser files in web/static from the npm
# registry, at pinned versions checked against pinned sha256 sums. The
# fetched files are committed, so a fresh clone builds without this script;
# run it only to change a version (and its sum).
set -euo pipefail

log() { printf 'assets.sh: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

top=$(cd "$(dirname "$0")/.." && pwd)
out="$top/web/static"
registry=${NPM_REGISTRY:-https://registry.npmjs.org}

# name version sha256-of-tarball file-in-tarball:file-in-web/static ...
pins=(
  "uplot 1.6.32 4b8a8191e425658e3ea8c8c1314b0fc679c861ee3a1af2b20c7b16ba50b5133d package/dist/uPlot.iife.min.js:uplot.min.js package/dist/uPlot.min.css:uplot.min.css package/LICENSE:uplot.LICENSE"
  "cytoscape 3.34.4 0d02363d99d805ce8d91fdecab7b2a8cb91ee280d67f309ce44c161d117b4679 package/dist/cytoscape.min.js:cytoscape.min.js package/LICENSE:cytoscape.LICENSE"
)

command -v curl >/dev/null 2>&1 || die "curl is required"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for pin in "${pins[@]}"; do
  read -r name version sum files <<<"$pin"
  tgz="$tmp/$name-$version.tgz"
  log "fetching $name@$version"
  curl -fsSL -o "$tgz" "$registry/$name/-/$name-$version.tgz"
  got=$(sha256sum "$tgz" | cut -d' ' -f1)
  [[ "$got" == "$sum" ]] || die "$name@$version: sha256 $got, want $sum"
  tar -xzf "$tgz" -C "$tmp"
  for f in $files; do
    cp "$tmp/${f%%:*}" "$out/${f##*:}"
  done
  rm -rf "$tmp/package"
done
log "web/static refreshed"
