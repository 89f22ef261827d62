#!/usr/bin/env bash
# bench/drain_ab.sh (a drain through taskscope against systemd alone
# draining the same units, issue 49) in ONE boot of the test bed (v2), with
# this build installed.
#   bench/drain-ab-in-guest.sh [N]   (default 2000)
# Env: BUILD_DIR (default build/), DRAIN_AB_MEM (MiB, default 8192).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
n=${1:-2000}
for b in taskscope-bench-layout taskscope-bench-fill; do
	[[ -x $build/bench/$b ]] || { echo "no $build/bench/$b: build first" >&2; exit 2; }
done
rm -rf "$build/stage"
DESTDIR="$build/stage" cmake --install "$build" >/dev/null
exec "$root/testbed/run.sh" --variant v2 --smp 2 --mem "${DRAIN_AB_MEM:-8192}" --timeout 5400 --share "$root" -- bash -c "
  tar -C '$build/stage' -cf - . | tar -C / -xf - --keep-directory-symlink && systemctl daemon-reload && systemctl reload dbus
  BENCH_DIR='$build/bench' bash '$root/bench/drain_ab.sh' $n
"
