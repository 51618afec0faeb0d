#!/usr/bin/env bash
# Fetch the long-conversation evaluation data from the PyPI package that
# ships it (cri-benchmark, MIT: the CRI benchmark's persona-1-base, one
# conversation of 2,862 turns in 665 sessions over 289 days, with the
# message ids that carry each belief change and each conflict) and keep it in
# a cache directory. memeval -longconv DIR reads it; nothing else of the
# package is used. Prints the data directory.
#
#   scripts/longconv.sh
#   MNEME_LONGCONV_DIR=/path scripts/longconv.sh
set -euo pipefail

log() { printf 'longconv.sh: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

pkg=cri-benchmark
version=0.1.2
wheel=cri_benchmark-0.1.2-py3-none-any.whl
sha256=0fbbe852a4bfe0032649bc7142a41bb54ae451e827174b9d142be45db87d88c2
dataset=persona-1-base

cache="${MNEME_LONGCONV_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mneme/longconv}"
dest="$cache/cri-$version"
if [[ -s "$dest/$dataset/conversations.jsonl" && -s "$dest/$dataset/ground_truth.json" && -f "$dest/.complete" ]]; then
  echo "$dest"
  exit 0
fi

command -v python3 >/dev/null 2>&1 || die "python3 not found (scripts/deps.sh installs it)"
mkdir -p "$cache"
work="$(mktemp -d "$cache/.fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT

fetch_wheel "$work" "$pkg" "$version" "$wheel" "$sha256"

python3 - "$work/$wheel" "$work/out" "$dataset" <<'PY'
import sys, zipfile
wheel, out, dataset = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    names = [f"cri/datasets/{dataset}/{f}" for f in ("conversations.jsonl", "ground_truth.json", "metadata.json")]
    names.append("cri_benchmark-0.1.2.dist-info/licenses/LICENSE")
    for name in names:
        z.extract(name, out)
PY
mkdir -p "$work/data"
mv "$work/out/cri/datasets/$dataset" "$work/data/$dataset"
mv "$work/out/cri_benchmark-0.1.2.dist-info/licenses/LICENSE" "$work/data/LICENSE"
printf '%s==%s %s\n' "$pkg" "$version" "$sha256" >"$work/data/.complete"
rm -rf "$dest"
mv "$work/data" "$dest"
log "data in $dest"
echo "$dest"
