#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (build-fuzz, -DVISA_FUZZ=ON) and runs each of them in
# turn for SECONDS: the mapping parser, the kernel API on the interpreter, the CLI's arguments.
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]   (default 60 seconds each, every target)
# Each target keeps its growing corpus in build-fuzz/corpus/NAME (seeded from tests/fuzz/corpus)
# and writes crashes, timeouts and OOMs to build-fuzz/artifacts/NAME-*. VISA_FUZZ_KNOWN=1 also
# feeds inputs that reach findings already reported (see the targets' first comments).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
# Every target is a tests/fuzz/*_fuzz.cc file (as tests/CMakeLists.txt finds them): the list is not
# kept by hand, so a new target (weights_files_fuzz was left out) runs by default.
if ((${#targets[@]} == 0)); then
  for source in tests/fuzz/*_fuzz.cc; do
    name="${source##*/}"
    targets+=("${name%.cc}")
  done
fi
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
# -O1 with line tables, as scripts/sanitize.sh builds (its cold build: 16 minutes instead of 64 at -O2).
CC=clang CXX=clang++ VISA_TARGET="${targets[*]}" scripts/setup.sh build-fuzz -DVISA_FUZZ=ON \
  -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_FLAGS="-O1 -g1" "${launcher[@]}"
mkdir -p build-fuzz/artifacts
status=0
for target in "${targets[@]}"; do
  name="${target%_fuzz}"
  seeds=tests/fuzz/corpus/"$name"
  [ -d "$seeds" ] || seeds=tests/fuzz/corpus
  mkdir -p build-fuzz/corpus/"$name"
  dict=()
  [ -f tests/fuzz/"$name".dict ] && dict=(-dict=tests/fuzz/"$name".dict)
  stamp=$(mktemp)
  echo "== $target: ${seconds}s"
  # -fork=1 -ignore_crashes=1 keeps fuzzing after a finding, so one run reports them all.
  build-fuzz/tests/"$target" build-fuzz/corpus/"$name" "$seeds" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=512 -print_final_stats=1 -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
    -ignore_ooms=1 -artifact_prefix=build-fuzz/artifacts/"$name"- "${dict[@]}" || status=1
  found=$(find build-fuzz/artifacts -name "$name-*" -newer "$stamp" | wc -l)
  rm -f "$stamp"
  echo "== $target: $found new artifact(s) in build-fuzz/artifacts"
  ((found == 0)) || status=1
done
exit $status
