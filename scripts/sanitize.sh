#!/usr/bin/env bash
# Builds the whole project with AddressSanitizer + UndefinedBehaviorSanitizer in its own build
# directory and runs the whole ctest suite under them. Code the JIT compiles at run time is not
# instrumented (LLVM emits it without sanitizer passes); everything else is.
# Usage: scripts/sanitize.sh [BUILD_DIR]   (default build-asan; CC / CXX pick the compiler, gcc by default)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build-asan}"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
scripts/setup.sh "$build_dir" -DVISA_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}"
# Any report stops the test that made it (UBSan is built with -fno-sanitize-recover), with a stack.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)" --timeout 3000
