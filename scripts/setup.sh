#!/usr/bin/env bash
# Installs what the project needs from Debian (only what is missing) and builds it.
# Usage: scripts/setup.sh [BUILD_DIR] [extra cmake args...]   (VISA_TARGET=name builds one target)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
          llvm-19-dev libabsl-dev libeigen3-dev libgtest-dev libgmock-dev
          libbenchmark-dev libcli11-dev libtbb-dev zlib1g-dev libzstd-dev libedit-dev libxml2-dev libffi-dev
          nlohmann-json3-dev librsvg2-bin libopenmpi-dev openmpi-bin
          chromium)  # headless, for the schedule viewer's browser test (tests/schedule_viewer_browser_test.sh)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_dir="${1:-build}"
shift || true
# ccache, when the machine has it, makes a rebuild after a branch switch a matter of links.
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build_dir" -G Ninja "${launcher[@]}" "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" ${VISA_TARGET:+--target $VISA_TARGET}
