#!/usr/bin/env bash
# Sets up, builds and runs the project's main job: the manual's GEMM on the JIT, checked element by
# element against the reference interpreter; then every sample kernel on the JIT against its host
# reference, and the GEMM's derived configuration explained.
set -euo pipefail
cd "$(dirname "$0")/.."
# The main job needs only `visa`: the tests and benchmarks are built by scripts/test.sh.
VISA_TARGET=visa scripts/setup.sh build
status=0
build/visa run gemm --backend jit --time || status=1
build/visa check gemm || status=1
for sample in $(build/visa run --list | awk '{print $1}'); do
  [ "$sample" = gemm ] && continue
  build/visa run "$sample" --backend jit --time || status=1
done
build/visa explain gemm
exit $status
