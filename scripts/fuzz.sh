#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs the mapping-parser fuzzer.
# Usage: scripts/fuzz.sh [SECONDS]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
CC=clang CXX=clang++ VISA_TARGET=mapping_parser_fuzz scripts/setup.sh build-fuzz -DVISA_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
mkdir -p build-fuzz/corpus
cp tests/fuzz/corpus/* build-fuzz/corpus/ 2>/dev/null || true
build-fuzz/tests/mapping_parser_fuzz build-fuzz/corpus -max_total_time="$seconds" -max_len=256 -timeout=10 \
  -print_final_stats=1 -artifact_prefix=build-fuzz/
