#!/usr/bin/env bash
# Format and lint checks of CI: Prettier over the whole tree (.prettierignore lists the generated
# files), then ESLint over the whole tree. `npm run format` fixes what Prettier reports.
set -euo pipefail
cd "$(dirname "$0")/.."
npx prettier --check .
npx eslint .
