#!/usr/bin/env bash
# How many CPUWeight changes (SetUnitProperties) the manager asks of
# systemd while a node fills with N one-task allocations (P calls in
# flight) and drains again, per task, for each bucket fan-out given. On
# cgroup v2 each change rewrites the slice's cpu.max too, and the kernel
# checks that write against every task group on the node (bench/README,
# "Why PID 1's cost per start grows with the node"), so on a full node
# each one costs about as much as a start's own share of that walk.
# Runs where the .deb is installed and PID 1 is systemd (the test bed guest):
#   BENCH_FILL_BIN=build/bench/taskscope-bench-fill bash bench/weight_calls.sh [N] [P] [FANOUTS]
# FANOUTS: comma-separated `bucket_fanout` values (default 64,4); a small
# fan-out puts many starts a second into each bucket, as a fast node does
# with the default 64.
set -euo pipefail
n=${1:-400}
p=${2:-32}
fanouts=${3:-64,4}
fill=${BENCH_FILL_BIN:-taskscope-bench-fill}
conf=/etc/taskscope/manager.json.d/90-weight-calls.json
log=$(mktemp)
trap 'rm -f "$log" "$conf"' EXIT

calls() { grep -c '"member":"SetUnitProperties"' "$log" || true; }
pid1_ms() { awk '/^usage_usec/ {printf "%d", $2 / 1000}' /sys/fs/cgroup/init.scope/cpu.stat; }

mkdir -p /etc/taskscope/manager.json.d
for f in ${fanouts//,/ }; do
	systemctl stop taskscope-manager taskscope-streamer 2>/dev/null || true
	rm -rf /var/lib/taskscope /run/taskscope /var/lib/taskscope-streamer
	echo "{\"bucket_fanout\": $f}" >"$conf"
	systemctl start taskscope-manager
	# Every method call to PID 1 named SetUnitProperties, one JSON line each.
	busctl monitor --json=short --match "type='method_call',destination='org.freedesktop.systemd1',member='SetUnitProperties'" >"$log" 2>/dev/null &
	mon=$!
	sleep 1
	t0=$(pid1_ms)
	s0=$(date +%s%N)
	BENCH_FILL_PER_ALLOC=1 "$fill" start "$n" "$p" | tail -1
	fill_s=$((($(date +%s%N) - s0) / 1000000))
	sleep 2 # the last weights (sent at most a second after their change)
	c1=$(calls)
	t1=$(pid1_ms)
	s0=$(date +%s%N)
	BENCH_FILL_PER_ALLOC=1 "$fill" drain "$n" "$p" >/dev/null || true
	drain_s=$((($(date +%s%N) - s0) / 1000000))
	sleep 2
	c2=$(calls)
	t2=$(pid1_ms)
	kill "$mon" 2>/dev/null || true
	wait "$mon" 2>/dev/null || true
	awk -v f="$f" -v n="$n" -v c1="$c1" -v c2="$c2" -v fs="$fill_s" -v ds="$drain_s" -v t0="$t0" -v t1="$t1" -v t2="$t2" 'BEGIN {
		printf "bucket_fanout %d, %d tasks: fill %.1f s (%.1f/s), %d weight calls (%.2f per task), PID 1 %.1f ms per task; ", f, n, fs / 1000, n * 1000 / fs, c1, c1 / n, (t1 - t0) / n
		printf "drain %.1f s, %d weight calls (%.2f per task), PID 1 %.1f ms per task\n", ds / 1000, c2 - c1, (c2 - c1) / n, (t2 - t1) / n
	}'
done
