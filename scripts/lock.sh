#!/usr/bin/env bash
# Refreshes the lock files that `make demo` and `make test` install from (`make lock`).
#   requirements/lock.txt     every package of the extras below, pinned, with sha256 hashes (pip-compile)
#   requirements/no-deps.txt  packages installed without their declared dependencies, pinned, with hashes
# Pins already in the lock are kept; UPGRADE=1 moves every package to its newest allowed release.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
EXTRAS="${EXTRAS:-dense,serve,judges,test,ray,graph,colbert,docs,lsp,dev}"
# Extras stay on their pins (google-auth[requests]==...): pip 23 refuses an extra that no line pins
# under --require-hashes once a newer release of the package exists.
# PyLate declares pins that pull a CUDA build of torch and an older sentence-transformers; its
# runtime needs are in the colbert extra, so it goes in on its own.
NO_DEPS=("pylate==1.6.0")
upgrade=()
[ "${UPGRADE:-0}" = 1 ] && upgrade=(--upgrade)
"$VENV/bin/pip-compile" -q --generate-hashes --allow-unsafe --no-strip-extras --no-emit-index-url \
  --no-emit-find-links "${upgrade[@]}" --extra "$EXTRAS" -o requirements/lock.txt pyproject.toml
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
{
  echo "# Installed with --no-deps after requirements/lock.txt; refreshed by scripts/lock.sh (make lock)."
  for spec in "${NO_DEPS[@]}"; do
    "$VENV/bin/pip" download -q --no-deps --only-binary=:all: -d "$tmp/$spec" "$spec"
    for f in "$tmp/$spec"/*; do
      echo "$spec \\"
      echo "    --hash=sha256:$(sha256sum "$f" | cut -d' ' -f1)"
    done
  done
} > requirements/no-deps.txt
echo "requirements/lock.txt: $(grep -c '^[A-Za-z0-9]' requirements/lock.txt) packages; requirements/no-deps.txt: ${#NO_DEPS[@]}"
