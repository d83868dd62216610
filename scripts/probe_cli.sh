#!/usr/bin/env bash
# A hostile-input probe of the `visa` command line: every value flag of every subcommand (read
# from the binary's own --help, so a new flag is probed the day it is added) given empty, blank,
# negative, overflowing, non-numeric, huge, invalid-UTF-8 and unwritable-path values, every
# positional given the same, and every subcommand writing to a full standard output. Each case
# runs the real binary with a timeout and is classified:
#   error    non-zero exit with a message on standard error (what a mistake should give)
#   ok       exit 0 (the value was valid)
#   crash    a signal, an abort or a sanitizer report
#   hang     the timeout struck
#   silent   a non-zero exit with nothing said, or an empty value accepted with exit 0
# Prints the counts (and every crash, hang and silent case) and exits 1 if there is any.
# Usage: scripts/probe_cli.sh [VISA_BINARY] [TIMEOUT_SECONDS]   (default build/visa, 60)
set -uo pipefail
visa="${1:-build/visa}"
limit="${2:-60}"
[ -x "$visa" ] || { echo "probe_cli: no executable at $visa" >&2; exit 2; }
visa="$(realpath "$visa")"  # cases run in a scratch folder
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

sample=fetch_commit_permutation  # two ops: a run takes milliseconds on both backends
# A valid invocation of each subcommand, which each case then changes in one place.
declare -A base=(
  [map]="--axes A=8,B=16 A,B"
  [seq]="--axes A=8,B=8 --buf A,B"
  [run]="$sample"
  [explain]="$sample"
  [check]="$sample"
  [bench]="$sample --repeat 1 --max-interp-seconds 1 --threads 1"
  [fuzz-diff]="--programs 2 --time 2"
  [schedule]="$sample"
)
long=$(printf 'A%.0s' $(seq 1 20000))
values=("" " " "-1" "0" "18446744073709551616" "9223372036854775807" "-9223372036854775808"
        "nan" "inf" "1e400" "x" "--" "$long" $'\xff\xfe\xc3' "/nonexistent/dir/file" "/dev/full"
        "A=0" "A=-1,B=1" "A, A" "@/nonexistent" "1:0" "0:9223372036854775807")

declare -A count=()
findings=()
cases=0

# Runs one case: a description and the argument list. Output goes to files, so a case that prints
# gigabytes shows up as a hang rather than filling the terminal.
probe() {
  local what="$1"; shift
  local empty_value="$1"; shift
  cases=$((cases + 1))
  (cd "$work" && timeout -k 5 "$limit" "$visa" "$@" >"$work/out" 2>"$work/err" </dev/null)
  classify "$?" "$what" "$empty_value" "$work/err"
}

classify() {
  local rc="$1" what="$2" empty_value="$3" err="$4" kind
  if grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:|terminate called|Aborted|Check failed' "$err"; then
    kind=crash
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    kind=hang
  elif [ "$rc" -ge 128 ]; then
    kind=crash
  elif [ "$rc" -eq 1 ] && grep -q '^not equivalent' "$work/out"; then
    kind=ok  # `map --equiv` answers "not equivalent" with exit 1, as cmp and diff do
  elif [ "$rc" -ne 0 ]; then
    if [ -s "$err" ]; then kind=error; else kind=silent; fi
  elif [ "$empty_value" = yes ]; then
    kind=silent
  else
    kind=ok
  fi
  count[$kind]=$(( ${count[$kind]:-0} + 1 ))
  if [ "$kind" = crash ] || [ "$kind" = hang ] || [ "$kind" = silent ]; then
    findings+=("$kind (exit $rc): $what: $(head -c 300 "$err" | tr '\n' ' ')")
  fi
}

# The value flags of a subcommand: option lines of its --help that name a type after the flag.
value_flags() {
  "$visa" "$1" --help | sed -nE 's/^ +(-[a-zA-Z],)?(--[a-z][a-z-]*) +(TEXT|INT|UINT|FLOAT).*/\2/p'
}
switch_flags() {
  "$visa" "$1" --help | sed -nE 's/^ +(-[a-zA-Z],)?(--[a-z][a-z-]*)( +(Excludes|Needs):.*)?$/\2/p' |
    grep -v -- '--help'
}

for sub in "${!base[@]}"; do
  read -r -a args <<<"${base[$sub]}"
  for flag in $(value_flags "$sub"); do
    for v in "${values[@]}"; do
      empty=no; [ -z "${v// /}" ] && empty=yes
      probe "$sub $flag '${v:0:40}'" "$empty" "$sub" "${args[@]}" "$flag" "$v"
    done
    probe "$sub $flag (no value)" no "$sub" "${args[@]}" "$flag"
  done
  for flag in $(switch_flags "$sub"); do
    probe "$sub $flag $flag" no "$sub" "${args[@]}" "$flag" "$flag"
  done
  # Positionals: the first word of the base invocation that is not a flag or a flag's value.
  if [ "$sub" != seq ] && [ "$sub" != fuzz-diff ]; then
    for v in "${values[@]}"; do
      empty=no; [ -z "${v// /}" ] && empty=yes
      rest=("${args[@]}"); rest[${#rest[@]}-1]="$v"
      [ "$sub" = bench ] && rest=("$v" "${args[@]:1}")
      [ "$sub" = map ] && rest=("${args[@]:0:2}" "$v")
      probe "$sub positional '${v:0:40}'" "$empty" "$sub" "${rest[@]}"
    done
  fi
  probe "$sub --no-such-flag" no "$sub" "${args[@]}" --no-such-flag
  # A full standard output must fail the command, not exit 0 with the result lost.
  cases=$((cases + 1))
  (cd "$work" && timeout -k 5 "$limit" "$visa" "$sub" "${args[@]}" >/dev/full 2>"$work/err" </dev/null)
  rc=$?
  if [ "$rc" -eq 0 ]; then
    count[silent]=$(( ${count[silent]:-0} + 1 )); findings+=("silent (exit 0): $sub > /dev/full")
  else
    classify "$rc" "$sub > /dev/full" no "$work/err"
  fi
done
probe "no-such-subcommand" no no-such-subcommand
probe "(no arguments)" no

echo "probe_cli: $cases cases: ${count[error]:-0} error, ${count[ok]:-0} ok, ${count[crash]:-0} crash," \
     "${count[hang]:-0} hang, ${count[silent]:-0} silent"
for f in "${findings[@]}"; do echo "  $f"; done
[ ${#findings[@]} -eq 0 ]
