#!/usr/bin/env bash
# Sets up, builds and runs the project's main job: every sample kernel of the manual on the
# reference interpreter, checked against its host reference, then one program explained.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
status=0
for sample in $(build/visa run --list | awk '{print $1}'); do
  build/visa run "$sample" --time || status=1
done
build/visa explain fetch_commit_permutation
build/visa map "B / 64, B % 32, B / 32 % 2" --axes A=8,B=512
exit $status
