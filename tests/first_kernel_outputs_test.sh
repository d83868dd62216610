#!/usr/bin/env bash
# The outputs docs/first-kernel.md prints are what its commands print: every ```console block
# holds `$ build-kernels/my_kernels ARGS` lines, each followed by its exact standard output; this
# runs each command with build-kernels/my_kernels replaced by the given executable and compares.
# Usage: first_kernel_outputs_test.sh MY_KERNELS_EXECUTABLE DOC
set -euo pipefail
exe=$1 doc=$2
failures=0 commands=0
check() {  # $1: the command line as the doc writes it, $2: the output it shows
  local command=${1//build-kernels\/my_kernels/$exe} got
  commands=$((commands + 1))
  got=$(bash -c "$command" 2>/dev/null) || true
  if [[ "$got" != "$2" ]]; then
    echo "docs/first-kernel.md: \`$1\` printed:"
    printf '%s\n' "$got"
    echo "the doc shows:"
    printf '%s\n' "$2"
    failures=$((failures + 1))
  fi
}
inside=0 command="" expected=""
while IFS= read -r line; do
  if [[ $inside == 0 ]]; then
    [[ "$line" == '```console' ]] && inside=1
    continue
  fi
  if [[ "$line" == '```' || "$line" == '$ '* ]]; then
    [[ -n "$command" ]] && check "$command" "$expected"
    command="" expected=""
    if [[ "$line" == '```' ]]; then inside=0; else command=${line#\$ }; fi
    continue
  fi
  expected+="${expected:+$'\n'}$line"
done < "$doc"
if [[ $commands == 0 ]]; then echo "no \`\`\`console block with commands in $doc"; exit 1; fi
if [[ $failures != 0 ]]; then echo "$failures of $commands outputs differ"; exit 1; fi
echo "docs/first-kernel.md: the outputs of its $commands commands are what they print"
