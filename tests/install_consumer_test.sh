#!/usr/bin/env bash
# Installs this build into a scratch prefix and builds examples/first_kernel against it with
# find_package(visa), as a user outside the repository does, then runs the consumer's kernels.
# A broken export (a missing header, target or dependency) fails here.
# Usage: install_consumer_test.sh BUILD_DIR SOURCE_DIR CXX_COMPILER [COMPILER_LAUNCHER]
set -euo pipefail
build_dir=$1 source_dir=$2 cxx=$3 launcher=${4:-}
# A fixed scratch directory (emptied first) keeps compiler caches warm between runs.
scratch="$build_dir/install-consumer"
rm -rf "$scratch"
mkdir -p "$scratch"
cmake --install "$build_dir" --prefix "$scratch/prefix" >/dev/null
cmake -S "$source_dir/examples/first_kernel" -B "$scratch/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" -DCMAKE_CXX_COMPILER="$cxx" \
  ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher"} >/dev/null
# The example's own default build type (Release), as a user who sets none gets it.
grep -q '^CMAKE_BUILD_TYPE:STRING=Release$' "$scratch/build/CMakeCache.txt" ||
  { echo "the example's default build type is not Release"; exit 1; }
cmake --build "$scratch/build" -j 2
"$source_dir/tests/first_kernel_outputs_test.sh" "$scratch/build/my_kernels" "$source_dir/docs/first-kernel.md"
exec "$source_dir/examples/first_kernel/run_example.sh" "$scratch/build/my_kernels"
