#!/usr/bin/env bash
# Device memory divides by the ranks (docs/multi_process.md, "Memory per rank"): the device pages
# rank 0 commits on N ranks, times N, are one process's (a count, not a time), for a chip shuffle
# of mpi_shuffle_bench (HBM, or staged through DM, whose moves each rank runs for its own chips).
# Usage: pages_divide.sh [--at-most] MPIEXEC N BENCH ARGS...
# --at-most: rank 0's pages times N may also be fewer than one process's (a workload whose whole
# ops on one process touch pages a rank's own chips' parts leave alone), never more.
set -euo pipefail
at_most=0
if [[ $1 == --at-most ]]; then at_most=1; shift; fi
mpiexec=$1 ranks=$2
shift 2
launch=("$mpiexec" --oversubscribe --allow-run-as-root --bind-to none)
pages() {  # rank 0's "device pages committed X MB"
  "${launch[@]}" -np "$1" "${@:2}" 2>&1 | sed -n 's/^rank 0 of [0-9]*: .*device pages committed \([0-9.]*\) MB.*/\1/p'
}
one=$(pages 1 "$@")
many=$(pages "$ranks" "$@")
if [[ -z $one || -z $many ]]; then
  echo "FAIL: no page figure (one process: '$one', $ranks ranks: '$many')"
  exit 1
fi
# The figures are printed to 0.1 MB: each may be off by 0.05.
awk -v one="$one" -v many="$many" -v r="$ranks" -v at_most="$at_most" 'BEGIN {
  d = many * r - one; if (d < 0 && at_most) d = 0; if (d < 0) d = -d
  if (d > 0.05 * (r + 1)) { printf "FAIL: rank 0 of %d commits %.1f MB of device pages, one process %.1f MB: not divided by the ranks\n", r, many, one; exit 1 }
  printf "rank 0 of %d commits %.2f MB of device pages, one process %.2f MB (/ %d = %.2f MB)\n", r, many, one, r, one / r
}'
