#!/usr/bin/env bash
# Rebuilds dist/ from the sources and fails when it is not what is committed: what `uses:` runs must be
# what the sources build. Run by check-dist.yml (and the same check ends .ci/run).
set -euo pipefail
cd "$(dirname "$0")/../.."

npm run package
if [ -n "$(git status --porcelain -- dist)" ]; then
  echo "dist/ is not what the sources build. Run 'npm run package' and commit dist/." >&2
  git status --porcelain -- dist >&2
  git diff --stat -- dist >&2
  exit 1
fi
echo "dist/ is what the sources build"
