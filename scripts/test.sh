#!/usr/bin/env bash
# Sets up, builds and runs every test of the project.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
ctest --test-dir build --output-on-failure -j "$(nproc)"
