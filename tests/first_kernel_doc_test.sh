#!/usr/bin/env bash
# docs/first-kernel.md shows examples/first_kernel/my_kernels.cc whole: its ```cpp blocks, joined
# by one blank line, must be that file byte for byte (the file is compiled and run by the
# install_consumer test, so the tutorial's code is compiled and run too).
set -euo pipefail
source_dir=$1
doc="$source_dir/docs/first-kernel.md"
code="$source_dir/examples/first_kernel/my_kernels.cc"
extracted=$(awk '/^```cpp$/ { inside = 1; if (blocks++) print ""; next }
                 /^```$/ && inside { inside = 0; next }
                 inside { print }' "$doc")
if ! diff <(printf '%s\n' "$extracted") "$code"; then
  echo "docs/first-kernel.md and examples/first_kernel/my_kernels.cc differ (above: < doc, > file)"
  exit 1
fi
echo "docs/first-kernel.md holds examples/first_kernel/my_kernels.cc"
