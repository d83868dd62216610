#!/usr/bin/env bash
# An mpirun launch that must fail quickly (VISA_MPI_TIMEOUT=5) with an error containing TEXT.
# Usage: expect_failure.sh TEXT MPIEXEC-ARGS...
set -uo pipefail
text=$1
shift
output=$(VISA_MPI_TIMEOUT=5 timeout 60 "$@" 2>&1)
code=$?
if [[ $code -eq 0 || $code -eq 124 ]]; then
  echo "FAIL: exit code $code (0: no failure, 124: a hang)"; echo "$output"; exit 1
fi
if ! grep -qF -- "$text" <<<"$output"; then
  echo "FAIL: no '$text' in:"; echo "$output"; exit 1
fi
grep -F -- "$text" <<<"$output" | head -1
