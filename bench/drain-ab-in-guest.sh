#!/usr/bin/env bash
# A drain through taskscope against systemd alone draining the same units
# (issue 49), in ONE boot of the test bed (v2), so that the figures compare
# on equal terms. First systemd alone: taskscope-bench-layout fills the node
# with N one-task allocations in the nested layout, units as taskscope makes
# them (accounting on, scopes delegated with no controller and, as a lone
# task's, without a CPU weight), then stops every scope through systemd
# (StopUnit, 32 in flight, as busctl would) and every allocation slice
# (--stop-drain). Then taskscope: bench/node_drain.sh, the same N filled
# through StartTask (logs on) and drained as Nomad drains a node, StopTask
# and ForgetTask each (32 calls in flight, stop_window 64, the default).
# Each side starts a new task (a new allocation) every 2 s during its
# drain and compares it with starts on the full node before.
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
  set -u
  tar -C '$build/stage' -cf - . | tar -C / -xf - --keep-directory-symlink && systemctl daemon-reload && systemctl reload dbus
  echo \"guest: \$(nproc) CPUs, systemd \$(systemctl --version | awk 'NR==1 {print \$2}'), $n tasks\"
  echo '=== systemd alone (taskscope-bench-layout --stop-drain)'
  timeout --signal=INT 2400 '$build/bench/taskscope-bench-layout' $n single nested:64 --level 32 --step $n \
    --bare-scopes --as-taskscope --stop-drain || echo \"  run ended with \$?\"
  systemctl stop probe.slice 2>/dev/null || true
  until [ \"\$(systemctl list-units --all --no-legend --plain 'probe*' 2>/dev/null | wc -l)\" -eq 0 ]; do sleep 5; done
  sleep 10
  echo '=== taskscope (bench/node_drain.sh, stop_window 64)'
  BENCH_FILL_BIN='$build/bench/taskscope-bench-fill' timeout 2400 bash '$root/bench/node_drain.sh' $n 64 32 || echo \"  run ended with \$?\"
"
