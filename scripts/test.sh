#!/usr/bin/env bash
# Sets up, builds and runs every test of the project.
set -euo pipefail
cd "$(dirname "$0")/.."
# -Werror: the build has no warnings, and a new one fails CI (one of them was a real dangling reference).
scripts/setup.sh build -DVISA_WERROR=ON
ctest --test-dir build --output-on-failure -j "$(nproc)"
