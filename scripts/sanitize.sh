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
       jit_uninitialized_read_test jit_differential_test api_misuse_probe_test)
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
# Everything to run is one pool of jobs, $jobs at a time, longest first: the test binaries, the fuzz
# replays, one `visa check` per sample (what `visa check --all` checks: every sample but the slow
# ones) and the command-line probe. Run in phases (the tests one by one, then the samples) one core
# idled for minutes behind the differential test and the run ended on whichever long sample started
# last. The order is the previous run's wall times ($times, longest first; a job not timed yet goes
# first); each job's wall and CPU seconds are written there again, and summed per phase at the end.
times="$build_dir/sanitize_times.tsv"
pool="$build_dir/sanitize_jobs"  # each job's output (NAME.log) and the times so far, readable while it runs
rm -rf "$pool" && mkdir -p "$pool"
{
  for t in "${tests[@]}"; do printf 'test\t%s\t%s\n' "$t" "$build_dir/tests/$t --gtest_brief=1"; done
  for r in "${replays[@]}"; do
    printf 'replay\t%s\t%s\n' "$r" "ctest --test-dir $build_dir --output-on-failure --timeout 3000 -R '^fuzz_replay[.]${r%_replay}\$'"
  done
  # llama_tiny_decode and llama_tiny_generate run GenerateRun (samples/models/llama_samples.cc), the
  # prefill and the traced decode program's launches over the KV cache, at the tiny configuration;
  # llama_small_generate runs the same code at a smaller one. Checked under the sanitizers they are
  # the same instrumented paths at 6 times the cost (68 CPU seconds each in the normal build, against
  # 20), so they are checked only by `visa check --all` in the normal build.
  samples=$("$build_dir"/visa run --list --json | awk -F'"' '/"name":/ {name = $4} /"slow": false/ {print name}' |
    grep -vxE 'llama_tiny_decode|llama_tiny_generate')
  for s in $samples; do printf 'sample\t%s\t%s\n' "$s" "$build_dir/visa check $s"; done
  # The hostile-input probe of every command-line flag, on the sanitized binary: a report is a crash.
  printf 'probe\t%s\t%s\n' probe_cli "bash scripts/probe_cli.sh $build_dir/visa 300"
} >"$pool/jobs"
echo "sanitize: $(wc -l <"$pool/jobs") jobs ($(grep -c '^sample' "$pool/jobs") samples), $jobs at a time"
# Longest first by the last run's wall seconds; unknown jobs count as longest.
# A build directory with no times yet starts from those of the last measured run, kept in the
# repository (scripts/sanitize_times.tsv); without an order the longest jobs could start last.
[ -f "$times" ] || times_from=scripts/sanitize_times.tsv
awk -F'\t' 'FILENAME == ARGV[1] {wall[$2] = $3; next} {print (($2 in wall) ? wall[$2] : 1e9) "\t" $0}' \
  <(cat "${times_from:-$times}" 2>/dev/null || true) "$pool/jobs" | sort -t$'\t' -k1,1 -g -r | cut -f2- >"$pool/ordered"
: >"$pool/times"
run_job() {  # phase name command...: runs one job, appends "phase name wall user sys rc" to the times
  local phase=$1 name=$2 log="$pool/$2.log"
  shift 2
  local rc=0
  /usr/bin/time -f "%e %U %S" -o "$log.time" bash -c "$*" >"$log" 2>&1 || rc=$?
  printf '%s\t%s\t%s\t%s\n' "$phase" "$name" "$(tr ' ' '\t' <"$log.time" | tail -1)" "$rc" >>"$pool/times"
  if [ "$rc" -ne 0 ]; then echo "sanitize: $phase $name FAILED (exit $rc)"; cat "$log"; else echo "sanitize: $phase $name ok"; fi
  return "$rc"
}
export -f run_job
export pool
status=0
tr '\t\n' '\0\0' <"$pool/ordered" | xargs -0 -n 3 -P "$jobs" bash -c 'run_job "$@"' _ || status=1
# The table the next run orders by: phase, name, wall, user, sys, exit status.
awk -F'\t' '{print $1 "\t" $2 "\t" $3 "\t" $4 "\t" $5 "\t" $6}' "$pool/times" | sort -t$'\t' -k3,3 -g -r >"$times"
awk -F'\t' '{n[$1]++; w[$1] += $3; c[$1] += $4 + $5} END {for (p in n) printf "sanitize: phase %-7s %3d jobs, %7.0f s wall summed, %7.0f s CPU\n", p, n[p], w[p], c[p]}' "$times"
echo "sanitize: the five longest jobs:"; head -5 "$times"
echo "sanitize: done at $(( $(date +%s) - start )) s (status $status)"
exit $status
