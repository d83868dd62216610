#!/usr/bin/env bash
# Runs the example's kernels the ways docs/first-kernel.md shows (what the install test checks):
# by hand on both backends, then through visa's command line over the example's own kernels.
set -euo pipefail
exe=$1
"$exe" tutorial
"$exe" run --list
"$exe" run my_permute
"$exe" run my_halves --backend jit
"$exe" check --all
"$exe" explain my_halves | tail -1
# Every --json output parses (checked where python3 is installed; tests/cli_json_test.cc parses
# the same outputs in any case).
command -v python3 >/dev/null || { echo "example: ok (JSON not checked: no python3)"; exit 0; }
for args in "run my_permute --json" "check --all --json" "explain my_halves --json" "run --list --json"; do
  "$exe" $args | python3 -c 'import json, sys; json.load(sys.stdin)' || { echo "not JSON: $args"; exit 1; }
done
echo "example: ok"
