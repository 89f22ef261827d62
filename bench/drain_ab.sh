#!/usr/bin/env bash
# A drain through taskscope against systemd alone draining the same units
# (issue 49), one after the other on this node (root, where the .deb is
# installed and PID 1 is systemd: the test bed's guest, through
# bench/drain-ab-in-guest.sh, or a native container). First systemd alone:
# taskscope-bench-layout fills the node with N one-task allocations in the
# nested layout, units as taskscope makes them (accounting on, scopes
# delegated with no controller and, as a lone task's, without a CPU
# weight), then stops every scope through systemd (StopUnit, 32 in flight,
# as busctl would) and every allocation slice (--stop-drain). Then
# taskscope: bench/node_drain.sh, the same N filled through StartTask (logs
# on) and drained as Nomad drains a node, StopTask and ForgetTask each (32
# calls in flight, stop_window 64, the default). Each side starts a new task
# (a new allocation) every 2 s during its drain and compares it with starts
# on the full node before.
#   BENCH_DIR=DIR bash bench/drain_ab.sh [N]   (default 2000; DIR holds
#   taskscope-bench-layout and taskscope-bench-fill, default build/bench)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${BENCH_DIR:-$here/../build/bench}
n=${1:-2000}
echo "node: $(nproc) CPUs, systemd $(systemctl --version | awk 'NR==1 {print $2}'), $n tasks"
echo '=== systemd alone (taskscope-bench-layout --stop-drain)'
timeout --signal=INT 2400 "$bin/taskscope-bench-layout" "$n" single nested:64 --level 32 --step "$n" \
	--bare-scopes --as-taskscope --stop-drain || echo "  run ended with $?"
systemctl stop probe.slice 2>/dev/null || true
until [ "$(systemctl list-units --all --no-legend --plain 'probe*' 2>/dev/null | wc -l)" -eq 0 ]; do sleep 5; done
sleep 10  # PID 1 quiet again before the second side
echo '=== taskscope (bench/node_drain.sh, stop_window 64)'
BENCH_FILL_BIN="$bin/taskscope-bench-fill" timeout 2400 bash "$here/node_drain.sh" "$n" 64 32 || echo "  run ended with $?"
