#!/usr/bin/env bash
# Format and lint checks of CI: Prettier over the paths listed in .ci/prettier-paths (the whole tree
# when that file is absent), then ESLint over the whole tree.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f .ci/prettier-paths ]; then
  mapfile -t paths < <(grep -v '^\s*#' .ci/prettier-paths | grep -v '^\s*$')
else
  paths=(.)
fi
npx prettier --check "${paths[@]}"
npx eslint .
