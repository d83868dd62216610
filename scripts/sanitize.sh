#!/usr/bin/env bash
# Builds what a hostile or careless user reaches under AddressSanitizer + UndefinedBehaviorSanitizer
# in its own build directory, and runs it: the `visa` CLI and its command tests, every sample
# through `visa check --all` (interpreter and JIT), the fuzz targets' replays of their seeds and
# kept findings, the hostile-input probe of every flag (scripts/probe_cli.sh), the API-misuse tests
# and the JIT differential test. Only those targets are built (the libraries they link and one
# executable each), not the whole suite, so a run fits beside other work on a 2-core machine (under
# 45 minutes). Code the JIT compiles at run time is not instrumented (LLVM emits it without
# sanitizer passes); everything else is.
# Usage: scripts/sanitize.sh [BUILD_DIR]   (default build-asan; CC / CXX pick the compiler, gcc by default)
# VISA_SANITIZE_JOBS sets the build's and ctest's parallelism (default: nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build-asan}"
jobs="${VISA_SANITIZE_JOBS:-$(nproc)}"
# The tests that matter under the sanitizers: the CLI's (every command and flag a user types), the
# misuse probes of the kernel API, the uninitialized-read and launch checks, and the differential.
tests=(cli_hygiene_test cli_json_test cli_schedule_memset_test fuzz_diff_command_test map_command_test
       schedule_command_test seq_command_test hardening_test handle_misuse_test launch_live_tensor_test
       jit_uninitialized_read_test jit_differential_test)
replays=(mapping_parser_fuzz_replay kernel_api_fuzz_replay cli_args_fuzz_replay weights_files_fuzz_replay)
start=$(date +%s)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# Build type Sanitize has no flags of its own: -O1 (the sanitizers' advice) with line tables (-g1,
# enough for the stacks in reports). At RelWithDebInfo's -O2 the cold build took 64 minutes here.
cmake -S . -B "$build_dir" -G Ninja -DVISA_SANITIZE=ON -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_FLAGS="-O1 -g1" \
  "${launcher[@]}" >/dev/null
cmake --build "$build_dir" -j "$jobs" --target visa "${tests[@]}" "${replays[@]}"
echo "sanitize: built in $(( $(date +%s) - start )) s"
# Any report stops the process that made it (UBSan is built with -fno-sanitize-recover), with a stack.
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
for t in "${tests[@]}"; do
  echo "== $t"
  "$build_dir"/tests/"$t" --gtest_brief=1 || { echo "sanitize: $t FAILED"; status=1; }
done
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 3000 -R '^fuzz_replay[.]' || status=1
echo "sanitize: tests done at $(( $(date +%s) - start )) s"
# What `visa check --all` checks (every sample but the slow ones), one process per sample, $jobs at a
# time: under the sanitizers one process checking them in turn took 55 minutes here.
samples=$("$build_dir"/visa run --list --json | awk -F'"' '/"name":/ {name = $4} /"slow": false/ {print name}')
echo "sanitize: checking $(wc -w <<<"$samples") samples, $jobs at a time"
xargs -P "$jobs" -n 1 "$build_dir"/visa check <<<"$samples" || status=1
echo "sanitize: every sample checked at $(( $(date +%s) - start )) s (status $status)"
# The hostile-input probe of every command-line flag, on the sanitized binary: a report is a crash.
bash scripts/probe_cli.sh "$build_dir"/visa 300 || status=1
echo "sanitize: probe_cli done at $(( $(date +%s) - start )) s (status $status)"
exit $status
