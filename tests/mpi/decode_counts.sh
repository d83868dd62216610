#!/usr/bin/env bash
# The exchanges of one decode launch under mpirun are counts, not times (docs/multi_process.md,
# "Time per decode token"): mpi_llama_bench prints rank 0's for the last decode launch, and each
# must stay within its bound. Before the `mpidecode` session every op was a round trip through
# rank 0 (139 per launch of the 1-layer model), every launch gathered the embedding and RoPE tables
# (1.6 MB received), and nothing bounded them.
# Usage: decode_counts.sh MPIEXEC N BENCH ARGS... (the bench's last-launch line on rank 0, and the
# JIT's paths on the last rank)
set -euo pipefail
mpiexec=$1 ranks=$2
shift 2
launch=("$mpiexec" --oversubscribe --allow-run-as-root --bind-to none)
out=$(VISA_BENCH_JIT_STATS=1 "${launch[@]}" -x VISA_BENCH_JIT_STATS -np "$ranks" "$@" 2>&1)
line=$(grep '^rank 0 of [0-9]*, last decode launch:' <<<"$out" || true)
if [[ -z $line ]]; then
  echo "FAIL: no last decode launch line from rank 0:"; echo "$out"; exit 1
fi
echo "$line"
# count NAME: the number before NAME in the line.
count() { sed -n "s/.* \([0-9][0-9]*\) $1.*/\1/p" <<<"$line"; }
fail=0
check() {  # check NAME VALUE OP BOUND WHY
  if ! (( $2 $3 $4 )); then echo "FAIL: $1 = $2, expected $3 $4 ($5)"; fail=1; fi
}
ops=$(count 'ops agreed') trips=$(count 'round trips') gathers=$(count 'tensors gathered')
bytes=$(sed -n 's/.*(\([0-9][0-9]*\) bytes received).*/\1/p' <<<"$line")
made=$(count 'parts made') kept=$(count 'parts kept and run again') split=$(count 'pipelines split')
check 'ops agreed' "$ops" '>' 0 'every op is compared'
check 'round trips' "$trips" '<=' 14 'one per op that exchanges data and per read-back, not one per op'
check 'round trips' "$((trips * 5))" '<=' "$ops" 'most ops are noted, not waited for'
check 'tensors gathered' "$gathers" '<=' 6 'chip 0 row numbers and the logits; not tables that stay on their chips'
check 'bytes received in gathers' "$bytes" '<=' 16384 'a few row numbers and the logits'
check 'parts made' "$made" '==' 0 'every per-chip part of a decode launch after the first is kept'
check 'parts kept' "$kept" '>=' "$split" 'each split pipeline runs its parts again'
# The last rank holds no chip 0: every pipeline it runs is a part on a chip view of chip c > 0. Its
# contractions must take the JIT's fused path (jit/fused_contraction.cc took no TRF view before:
# the parts' staged walk held 222 MB of stream images for the prefill's Q projection alone).
last=$((ranks - 1))
fused=$(sed -n "s/^rank $last jit: pipelines fused \([0-9]*\),.*/\1/p" <<<"$out")
check "rank $last's fused pipelines" "${fused:-0}" '>' 0 'contraction parts on chip views fuse'
exit $fail
