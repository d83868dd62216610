#!/usr/bin/env bash
# `visa ARGS...` under `mpiexec -np N` must print what one process prints, and every op's output
# bytes must be the same bit for bit (the output digest of VISA_MPI_REPORT=1, against a one-rank run).
# Usage: same_as_one_process.sh [--digest-only] MPIEXEC N VISA ARGS...
# (--digest-only: the printed lines hold timings, so only the bytes are compared).
set -euo pipefail
digest_only=0
if [[ $1 == --digest-only ]]; then digest_only=1; shift; fi
mpiexec=$1 ranks=$2 visa=$3
shift 3
launch=("$mpiexec" --oversubscribe --allow-run-as-root --bind-to none)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$visa" "$@" >"$work/one.out"
VISA_MPI_REPORT=1 "${launch[@]}" -np 1 "$visa" "$@" >/dev/null 2>"$work/one.err"
VISA_MPI_REPORT=1 "${launch[@]}" -np "$ranks" "$visa" "$@" >"$work/many.out" 2>"$work/many.err"
if ((!digest_only)) && ! diff "$work/one.out" "$work/many.out"; then
  echo "FAIL: the output on $ranks ranks differs from one process's (above)"
  exit 1
fi
one=$(grep -o 'output digest [0-9a-f]*' "$work/one.err" || true)
many=$(grep -o 'output digest [0-9a-f]*' "$work/many.err" || true)
if [[ -z "$one" || "$one" != "$many" ]]; then
  echo "FAIL: one rank: '$one', $ranks ranks: '$many'"
  cat "$work/many.err"
  exit 1
fi
# Pipelines by chip (the default): where the test expects them (VISA_MPI_EXPECT_SPLIT=1) some
# pipeline must have run by chip; with the opt-out (VISA_MPI_SPLIT_PIPELINES=0) none may have.
if [[ ${VISA_MPI_SPLIT_PIPELINES:-} != 0 && ${VISA_MPI_EXPECT_SPLIT:-} == 1 ]] &&
  grep -q 'ran 0 pipelines for its own chips alone' "$work/many.err"; then
  echo "FAIL: pipelines split by chip (the default) but rank 0 split no pipeline"
  grep '^mpi:' "$work/many.err"
  exit 1
fi
if [[ ${VISA_MPI_SPLIT_PIPELINES:-} == 0 ]] && ! grep -q 'ran 0 pipelines for its own chips alone' "$work/many.err"; then
  echo "FAIL: VISA_MPI_SPLIT_PIPELINES=0 but rank 0 split some pipeline"
  grep '^mpi:' "$work/many.err"
  exit 1
fi
cat "$work/many.out"
grep '^mpi:' "$work/many.err"
