#!/usr/bin/env bash
# A node drain through taskscope (issue 31), on the node itself: the test
# bed's guest (bench/drain-in-guest.sh runs this there) or a native
# container (../shared/native). For each stop_window given, the manager
# starts afresh with that window, the node is filled with N one-task
# allocations (logs on) and drained the way Nomad drains it, every task
# stopped and forgotten (taskscope-bench-fill drain) while a new task is
# started every 2 s. Prints how long systemd took to collect everything,
# and the median, p90 and max of those starts (the bench's last line).
#   BENCH_FILL_BIN=PATH bash bench/node_drain.sh [N] [WINDOWS] [P]
# N: tasks (default 10000). WINDOWS: stop_window values, comma separated
# (default 64,0; 0 sends every stop at once). P: calls in flight (32).
# DRAIN_VERBOSE=1: the manager logs at debug level (journald unthrottled),
# and the step profile of each start during the drain is printed at the
# end (where its time went: prepare, record on disk, systemd job...).
# DRAIN_PID1_DEBUG=1: PID 1 logs at debug level during the drain, and a
# table per second of uptime says how many method calls it read and how
# many scopes it collected (stop 42: it reads none while it collects).
set -euo pipefail
n=${1:-10000}
windows=${2:-64,0}
p=${3:-32}
fill=${BENCH_FILL_BIN:-taskscope-bench-fill}
conf=/etc/taskscope/manager.json.d/90-drain-bench.json
# CPU seconds of the cgroups that share the node's CPUs during a drain
# (cgroup v2's cpu.stat, which outlives the processes: shims and tasks
# come and go)
cpu_groups=(init.scope system.slice/taskscope-manager.service system.slice/taskscope-streamer.service
	system.slice/taskscope-shims.scope system.slice/dbus.service system.slice/systemd-journald.service nomad.slice)
cpu_snapshot() {
	local g
	for g in "${cpu_groups[@]}"; do
		awk '/^usage_usec/ {print $2}' "/sys/fs/cgroup/$g/cpu.stat" 2>/dev/null || echo 0
	done
}

mkdir -p /etc/taskscope/manager.json.d
source "$(dirname "$0")/manager_verbose.sh"
[[ ${DRAIN_VERBOSE:-0} == 1 ]] && manager_verbose on
for w in ${windows//,/ }; do
	echo "=== stop_window $w, $n one-task allocations, $p calls in flight"
	systemctl stop taskscope-manager taskscope-streamer 2>/dev/null || true
	rm -rf /var/lib/taskscope /run/taskscope /var/lib/taskscope-streamer
	echo "{\"stop_window\": $w}" >"$conf"
	systemctl start taskscope-manager
	BENCH_FILL_PER_ALLOC=1 "$fill" start "$n" "$p" | tail -3
	[[ ${DRAIN_PID1_DEBUG:-0} == 1 ]] && systemd-analyze log-level debug
	mapfile -t cpu0 < <(cpu_snapshot)
	t0=$(date +%s%N)
	BENCH_FILL_PER_ALLOC=1 "$fill" drain "$n" "$p" || true
	mapfile -t cpu1 < <(cpu_snapshot)
	wall=$((($(date +%s%N) - t0) / 1000000))
	line="CPU used during the drain ($((wall / 1000)) s of wall time, $(nproc) CPUs):"
	for i in "${!cpu_groups[@]}"; do
		line+=" ${cpu_groups[$i]##*/} $(awk -v a="${cpu0[$i]:-0}" -v b="${cpu1[$i]:-0}" 'BEGIN {printf "%.1f", (b - a) / 1e6}') s;"
	done
	echo "$line"
	if [[ ${DRAIN_PID1_DEBUG:-0} == 1 ]]; then
		systemd-analyze log-level info
		echo "--- PID 1 during the drain, per second of uptime: method calls read, scopes collected"
		journalctl _PID=1 -o short-monotonic --no-pager |
			awk -F'[][]' '/Got message type=method_call/{m[int($2)]++; s[int($2)]=1} /: Collecting\./{c[int($2)]++; s[int($2)]=1} END{for (t in s) print t, m[t]+0, c[t]+0}' | sort -n
	fi
	if [[ ${DRAIN_VERBOSE:-0} == 1 ]]; then
		echo "--- step profiles of the starts during the drain (manager's debug log)"
		journalctl -u taskscope-manager -o short-monotonic --no-pager | grep 'Start of drainprobe' || true
	fi
done
rm -f "$conf"
