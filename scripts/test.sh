#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs all three
# tiers (unit, bus, system). Extra arguments go to ctest, e.g. -L unit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bash "$root/scripts/install-deps.sh"
bash "$root/scripts/build.sh"
# -j2: unit and bus tests run beside the guest boots, which lock each
# other out (RESOURCE_LOCK testbed) since each wants both host cores.
exec ctest --test-dir "$build" --output-on-failure -j2 "$@"
