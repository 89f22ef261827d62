#!/usr/bin/env bash
# bench/fork_bomb.sh (issue 48) in one boot of the test bed (v2), on this
# build's stage install: both phases, protected and unprotected, against
# the same guest.
#   bench/bomb-in-guest.sh [STARTS] [PHASES]
# Env: BOMB_SMP (guest vCPUs, default 2), BOMB_MEM (MB, default 4096).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
[[ -x $build/bench/taskscope-bench-reads ]] || { echo "no $build/bench/taskscope-bench-reads: build first" >&2; exit 2; }
rm -rf "$build/stage"
DESTDIR="$build/stage" cmake --install "$build" >/dev/null
exec "$root/testbed/run.sh" --variant v2 --smp "${BOMB_SMP:-2}" --mem "${BOMB_MEM:-4096}" --timeout 3000 --share "$root" -- bash -c "
  set -e
  tar -C '$build/stage' -cf - . | tar -C / -xf - --keep-directory-symlink && systemctl daemon-reload && systemctl reload dbus
  systemctl start taskscope-manager
  bash '$root/bench/fork_bomb.sh' ${1:-50} '$build/bench/taskscope-bench-reads' '${2:-protected unprotected}'"
