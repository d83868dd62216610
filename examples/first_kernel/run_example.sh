#!/usr/bin/env bash
# Runs the example's kernels through its own command line (what the install test checks).
set -euo pipefail
exe=$1
"$exe"
