#!/usr/bin/env bash
# Format and lint checks of CI: Prettier over the whole tree (.prettierignore lists the generated
# files), then ESLint over the whole tree, then the Dockerfile with dockerfile-utils (the validator
# behind VS Code's Dockerfile support). `npm run format` fixes what Prettier reports;
# `npx dockerfile-utils format -s 2 Dockerfile` prints the Dockerfile formatted.
set -euo pipefail
cd "$(dirname "$0")/.."
npx prettier --check .
npx eslint .
npx dockerfile-utils lint Dockerfile
