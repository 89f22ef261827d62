#!/usr/bin/env bash
# Configures and builds into build/ (BUILD_DIR overrides). Warnings are
# errors under CI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
werror=OFF
[[ "${CI:-}" == true ]] && werror=ON
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTASKSCOPE_WERROR=$werror >/dev/null
cmake --build "$build"
