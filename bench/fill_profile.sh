#!/usr/bin/env bash
# Where filling a node spends its CPU: node_fill.sh's start phase (N tasks
# with logs, P starts in flight) with a probe every 30 s of the CPU seconds
# used so far by PID 1, dbus-daemon, the manager, the streamer and
# journald, beside the number of task scopes. Per-start costs that grow
# with the tasks already running show up as growing differences between
# probes. Root, installed .deb, PID 1 systemd (the test bed guest):
#   BENCH_FILL_BIN=build/bench/taskscope-bench-fill bash bench/fill_profile.sh [N] [P]
# The tasks are left running (node_fill.sh goes on from there).
set -euo pipefail
N=${1:-4000}
P=${2:-64}
FILL=${BENCH_FILL_BIN:-taskscope-bench-fill}
cpu() { awk '{printf "%.1f", ($14+$15)/100}' "/proc/$1/stat" 2>/dev/null || echo "?"; }
pid_of() { systemctl show -p MainPID --value "$1"; }
probe() {
    echo "probe $(date +%s) scopes=$(find /sys/fs/cgroup/nomad.slice -maxdepth 1 -name '*.scope' | wc -l)" \
        "pid1=$(cpu 1) dbus=$(cpu "$(pid_of dbus)") manager=$(cpu "$(pid_of taskscope-manager)")" \
        "streamer=$(cpu "$(pid_of taskscope-streamer)") journald=$(cpu "$(pid_of systemd-journald)")"
}

systemctl reset-failed taskscope-manager taskscope-streamer 2>/dev/null || true
systemctl restart taskscope-manager taskscope-streamer
sleep 2
probe
(while sleep 30; do probe; done) &
prober=$!
trap 'kill $prober 2>/dev/null' EXIT
"$FILL" start "$N" "$P" || true
kill $prober
probe
