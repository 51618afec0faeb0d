#!/usr/bin/env bash
# pyenv.sh: creates (or reuses) the Python virtual environment in which the
# Python client's and the Python example's tests run: the client from
# clients/python with httpx, pytest and pytest-asyncio from PyPI. Prints the
# environment's directory on its last line. The environment is rebuilt when
# the client's files or this script change.
#
#   MNEME_PYENV   where the environment lives (default: under ~/.cache/mneme)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
client="$root/clients/python"
venv=${MNEME_PYENV:-${XDG_CACHE_HOME:-$HOME/.cache}/mneme/pyenv-$(printf '%s' "$root" | sha1sum | cut -c1-10)}

command -v python3 >/dev/null || { echo "pyenv.sh: python3 is missing (apt-get install python3 python3-venv)" >&2; exit 1; }

stamp=$( (cat "$0"; find "$client" -type f \( -name '*.py' -o -name '*.toml' -o -name '*.typed' \) -not -path '*/tests/*' \
	-not -path '*/__pycache__/*' | sort | xargs cat) | sha1sum | cut -c1-40)
if [[ -x "$venv/bin/python" && -f "$venv/.mneme-stamp" && $(cat "$venv/.mneme-stamp") == "$stamp" ]]; then
	echo "$venv"
	exit 0
fi

echo "pyenv.sh: building $venv" >&2
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
python3 -m venv "$venv" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$client[test]" >&2
"$venv/bin/python" -c 'import mneme_client, httpx, pytest, pytest_asyncio' >&2
echo "$stamp" >"$venv/.mneme-stamp"
echo "$venv"
