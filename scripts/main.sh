#!/usr/bin/env bash
# Sets up, builds and runs the project's main job: the mapping explorer on the manual's examples.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
set -x
build/visa map "B / 64, B % 32, B / 32 % 2" --axes A=8,B=512
build/visa map "B / 64, B % 64" --axes A=8,B=512 --equiv "B"
build/visa map "C, D # 64" --axes C=13,D=61
build/visa map "A, B' = 4" --axes "A=4,B=4,B'=B-A" --enumerate
