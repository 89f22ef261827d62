#!/usr/bin/env bash
# Configures and builds into build/ (BUILD_DIR overrides). Warnings are
# errors under CI. The flags and install layout are Debian's, as the .deb's
# build uses them (scripts/debian-flags.sh): the system tier packages this
# very build (packaging/build-deb.sh --prebuilt), so the code is compiled
# once and the tests run what the guests install.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
werror=OFF
[[ "${CI:-}" == true ]] && werror=ON
mapfile -t debian < <(cd "$root" && bash scripts/debian-flags.sh)
cmake -S "$root" -B "$build" -G Ninja "${debian[@]}" -DTASKSCOPE_WERROR=$werror >/dev/null
cmake --build "$build"
