#!/usr/bin/env bash
# actionlint over .github/workflows/ and over every workflow example of the READMEs and docs/ (written
# out whole by scripts/ci/readme-yaml.ts). Needs actionlint on PATH: `go install
# github.com/rhysd/actionlint/cmd/actionlint@v1.7.12`, or a release binary. Run by ci.yml.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! command -v actionlint > /dev/null; then
  echo "actionlint is not on PATH: go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12" >&2
  exit 1
fi
examples="$(mktemp -d)"
trap 'rm -rf "$examples"' EXIT
node scripts/ci/readme-yaml.ts --out "$examples"
actionlint -color .github/workflows/*.yml
# The examples are fragments a user pastes: lint them as workflows, their shell scripts included.
actionlint -color "$examples"/*.yml
