#!/usr/bin/env bash
# Issue 31's figures on a node at native speed: run inside the container of
# ../shared/native (the benches in /opt/bench, taskscope's .deb installed),
# as in-ct.sh runs its phases. Each phase prints as it goes.
#   bash /opt/bench/native_issue31.sh PHASES [SECONDS]
# PHASES, letters in this order:
#   s  StartTask against systemd-run --scope, 30 rounds each: one
#      allocation back to back; a new allocation per task on an idle PID 1;
#      the same after 256 allocations (taskscope-bench-start)
#   p  the same one-allocation rounds with the manager at debug level, and
#      each start's step profile (where a slow start's time went)
#   f  a drain of 10,000 one-task allocations with stop_window 64, then 0,
#      a new task started every 2 s meanwhile (node_drain.sh)
#   l  PID 1's CPU per start as 10,000 one-task allocations fill the node,
#      systemd alone (taskscope-bench-layout), 64 buckets, then 16x16
#   t  the same fill through StartTask, PID 1's CPU every 5 s
#   k  the kernel alone: how long a write to a slice's cgroup.subtree_control
#      takes right after a child cgroup was removed, and once it settled
# SECONDS (default 400): everything is cut to end by then.
set -uo pipefail
phases=${1:?phases}
end=$(($(date +%s) + ${2:-400}))
B=$(cd "$(dirname "$0")" && pwd)
export PATH=$B:$PATH
left() { echo $((end - $(date +%s))); }
sec() { echo; echo "=== $* ($(left) s left)"; }
# limited CAP CMD...: CMD limited to CAP seconds, or to what is left
limited() {
	local cap=$1 t
	shift
	t=$(left)
	((t > cap)) && t=$cap
	((t < 5)) && { echo "[skipped: no time left]"; return 0; }
	timeout -k 5 "$t" stdbuf -oL -eL "$@"
	echo "[rc=$? (limit $t s)]"
}
# every 5 s: scopes under nomad.slice and PID 1's CPU seconds, until killed
monitor() {
	local hz
	hz=$(getconf CLK_TCK)
	while sleep 5; do
		echo "  [mon] scopes $(find /sys/fs/cgroup/nomad.slice -name '*.scope' 2>/dev/null | wc -l);" \
			"PID 1 CPU $(awk -v hz="$hz" '{printf "%.1f", ($14 + $15) / hz}' /proc/1/stat) s"
	done
}
verbose_manager() { # on|off
	local d=/etc/systemd/system/taskscope-manager.service.d exe
	mkdir -p $d
	if [[ $1 == on ]]; then
		exe=$(systemctl show -P ExecStart taskscope-manager | sed -n 's/.*path=\([^ ;]*\).*/\1/p')
		printf '[Service]\nExecStart=\nExecStart=%s -v\n' "$exe" >$d/90-native-verbose.conf
	else
		rm -f $d/90-native-verbose.conf
	fi
	systemctl daemon-reload
	systemctl restart taskscope-manager
}

[[ $phases == *s* ]] && for args in "" "--new-alloc --settle" "--new-alloc --warm --settle"; do
	sec "(s) taskscope-bench-start 30 $args"
	limited 60 taskscope-bench-start 30 $args
done
if [[ $phases == *p* ]]; then
	sec "(p) taskscope-bench-start 30, each start's profile"
	verbose_manager on
	limited 60 taskscope-bench-start 30
	journalctl -u taskscope-manager --no-pager -o cat | grep 'Start of bench/' |
		sed 's/.*Start of \([^ ]*\) .*systemd job \([0-9.]*\).*total \([0-9.]*\) ms/\1: systemd job \2 ms, total \3 ms/'
	verbose_manager off
fi
if [[ $phases == *f* ]]; then
	sec "(f) node_drain.sh 10000 64,0"
	monitor &
	mon=$!
	BENCH_FILL_BIN=$B/taskscope-bench-fill limited 400 bash "$B/node_drain.sh" 10000 64,0 32
	kill $mon
fi
[[ $phases == *l* ]] && for lay in nested:64 nested:16x16; do
	sec "(l) taskscope-bench-layout 10000 single $lay --step 1000"
	limited 150 taskscope-bench-layout 10000 single $lay --step 1000
	systemctl stop probe.slice >/dev/null 2>&1
	sleep 2
done
if [[ $phases == *t* ]]; then
	sec "(t) 10000 one-task allocations through StartTask"
	monitor &
	mon=$!
	BENCH_FILL_PER_ALLOC=1 limited 200 taskscope-bench-fill start 10000 32
	kill $mon
	BENCH_FILL_PER_ALLOC=1 limited 120 taskscope-bench-fill stop 10000 32
fi
if [[ $phases == *k* ]]; then
	sec "(k) a write to cgroup.subtree_control after a child's removal (microseconds)"
	p=/sys/fs/cgroup/native-k
	mkdir -p $p
	for mode in right-after settled; do
		ts=()
		for i in $(seq 15); do
			echo "+cpu +memory +pids" >$p/cgroup.subtree_control
			mkdir $p/c
			sleep 100 &
			echo $! >$p/c/cgroup.procs
			kill -9 $! && wait $! 2>/dev/null
			rmdir $p/c
			[[ $mode == settled ]] && sleep 1
			t0=$(date +%s%N)
			echo "+cpu +memory +pids" >$p/cgroup.subtree_control
			ts+=($((($(date +%s%N) - t0) / 1000)))
		done
		echo "  $mode: ${ts[*]}"
	done
	rmdir $p
fi
sec "end"
