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
#   k  the kernel alone: how long a write to a cgroup's subtree_control
#      takes right after a child cgroup was removed, and once it settled;
#      how long moving a process into a cgroup takes right after another
#      move, and after 0.3 s of quiet (the first move after a quiet spell
#      waits for an RCU grace period unless cgroup2 has favordynmods)
#   w  the kernel's cost of one write to cpu.max as the cgroups with the
#      cpu controller grow to 20,000 (cpu_max_walk.sh: the write walks every
#      task group), then phase l's 64-bucket fill again with scopes that
#      ask no CPU weight (--bare-scopes: one cpu cgroup per allocation, not
#      two), to compare with l's; and the CPUWeight changes per start
#      and per drained task of a 3,000-task fill and drain (weight_calls.sh)
# SECONDS (default 400): everything is cut to end by then. The bench
# programs are found on PATH (in /opt/bench, beside this script, natively).
set -uo pipefail
phases=${1:?phases}
end=$(($(date +%s) + ${2:-400}))
B=$(cd "$(dirname "$0")" && pwd)
export PATH=$B:$PATH
source "$B/native_phases.sh"
# every 5 s: scopes under nomad.slice and PID 1's CPU seconds, until killed
monitor() {
	local hz
	hz=$(getconf CLK_TCK)
	while sleep 5; do
		echo "  [mon] scopes $(find /sys/fs/cgroup/nomad.slice -name '*.scope' 2>/dev/null | wc -l);" \
			"PID 1 CPU $(awk -v hz="$hz" '{printf "%.1f", ($14 + $15) / hz}' /proc/1/stat) s"
	done
}
source "$B/manager_verbose.sh"

[[ $phases == *s* ]] && for args in "" "--new-alloc --settle" "--new-alloc --warm --settle"; do
	sec "(s) taskscope-bench-start 30 $args"
	limited 60 taskscope-bench-start 30 $args
done
if [[ $phases == *p* ]]; then
	sec "(p) taskscope-bench-start 30, each start's profile"
	manager_verbose on
	limited 60 taskscope-bench-start 30
	journalctl -u taskscope-manager --no-pager -o cat | grep 'Start of bench/' |
		sed 's/.*Start of \([^ ]*\) .*systemd job \([0-9.]*\).*total \([0-9.]*\) ms/\1: systemd job \2 ms, total \3 ms/'
	manager_verbose off
fi
if [[ $phases == *f* ]]; then
	sec "(f) node_drain.sh 10000 64,0"
	monitor &
	mon=$!
	BENCH_FILL_BIN=$(command -v taskscope-bench-fill) limited 400 bash "$B/node_drain.sh" 10000 64,0 32
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
# Phase k, run in a scope systemd delegates to it: a cgroup of our own
# beside systemd's would have its controllers taken away whenever systemd
# realizes the root again.
kernel_phase() {
	local own p mode i ts t0 pid
	own=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
	mkdir "$own/leaf" && echo $$ >"$own/leaf/cgroup.procs"
	echo "+cpu +memory +pids" >"$own/cgroup.subtree_control"
	p=$own/k
	mkdir $p
	echo "  a write to cgroup.subtree_control (microseconds):"
	for mode in right-after-a-removal settled; do
		ts=()
		for i in $(seq 15); do
			echo "+cpu +memory +pids" >$p/cgroup.subtree_control
			mkdir $p/c
			sleep 100 &
			pid=$!
			echo $pid >$p/c/cgroup.procs
			kill -9 $pid && wait $pid 2>/dev/null
			rmdir $p/c
			[[ $mode == settled ]] && sleep 1
			t0=$(date +%s%N)
			echo "+cpu +memory +pids" >$p/cgroup.subtree_control
			ts+=($((($(date +%s%N) - t0) / 1000)))
		done
		echo "    $mode: ${ts[*]}"
	done
	echo "  moving a process into a new cgroup (microseconds):"
	mkdir $p/h
	for mode in back-to-back after-quiet; do
		ts=()
		for i in $(seq 15); do
			mkdir $p/m$i
			sleep 100 &
			pid=$!
			[[ $mode == back-to-back ]] && echo $pid >$p/h/cgroup.procs
			[[ $mode == after-quiet ]] && sleep 0.3
			t0=$(date +%s%N)
			echo $pid >$p/m$i/cgroup.procs
			ts+=($((($(date +%s%N) - t0) / 1000)))
			kill -9 $pid && wait $pid 2>/dev/null
			rmdir $p/m$i
		done
		echo "    $mode: ${ts[*]}"
	done
	rmdir $p/h $p
}
if [[ $phases == *k* ]]; then
	sec "(k) the kernel alone: cgroup writes right after a change, and after a quiet spell"
	echo "  cgroup2 mount options: $(awk '$2 == "/sys/fs/cgroup" {print $4}' /proc/mounts)"
	limited 120 systemd-run --quiet --scope -p Delegate=yes bash -c "$(declare -f kernel_phase); kernel_phase"
	echo "  systemd: a slice's cgroup.subtree_control with a scope in it, and once the scope is gone"
	systemd-run --quiet --scope --slice=nativek.slice -p CPUWeight=50 -p MemoryMax=100M sleep 2 &
	sleep 1
	echo "    with the scope: $(cat /sys/fs/cgroup/nativek.slice/cgroup.subtree_control)"
	wait
	sleep 2
	echo "    scope gone: '$(cat /sys/fs/cgroup/nativek.slice/cgroup.subtree_control)'"
	systemctl stop nativek.slice
fi
if [[ $phases == *w* ]]; then
	sec "(w) cpu_max_walk.sh, then taskscope-bench-layout 10000 single nested:64 --bare-scopes"
	limited 200 bash "$B/cpu_max_walk.sh" 0,2000,5000,10000,20000 300
	limited 150 taskscope-bench-layout 10000 single nested:64 --step 1000 --bare-scopes
	systemctl stop probe.slice >/dev/null 2>&1
	# The weight changes a start costs at native speed (each one more walk):
	# paced to one a second per slice since stop 45.
	BENCH_FILL_BIN=$(command -v taskscope-bench-fill) limited 120 bash "$B/weight_calls.sh" 3000 32 64
fi
sec "end"
