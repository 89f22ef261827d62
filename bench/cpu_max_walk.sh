#!/usr/bin/env bash
# The kernel's cost of one write to a cgroup's cpu.max, as the node holds
# more cgroups with the cpu controller (issue 31: why PID 1's CPU per start
# grows with the node natively). Run on the node as root (the test bed's
# guest, or a native container); prints microseconds per write of cpu.max
# and, for comparison, of cpu.weight, at each count of cgroups.
#   bash bench/cpu_max_walk.sh [COUNTS] [WRITES]
# COUNTS: comma-separated cgroup counts (default 0,2000,5000,10000,20000).
# WRITES: writes timed per file and count (default 300).
#
# Why it may grow: cgroup v2's cpu.max write ends in tg_set_cfs_bandwidth(),
# which first checks the whole hierarchy's quotas, __cfs_schedulable():
# walk_tg_tree() from the root task group, every task group on the node,
# whatever the value written ("max" too). cpu.weight's write,
# sched_group_set_shares(), touches only its own group's per-CPU entities.
# (Linux kernel/sched/core.c.) systemd writes cpu.max each time it applies
# a unit's CPU settings with the cpu controller on, "max <period>" when no
# quota is set (systemd src/core/cgroup.c, cgroup_apply_unified_cpu_quota()),
# so each start pays one walk per new cgroup: the scope, and a new
# allocation's slice.
set -euo pipefail
counts=${1:-0,2000,5000,10000,20000}
writes=${2:-300}
# Our own cgroups go in a delegated scope of our own: systemd takes the
# controllers from a cgroup it does not know when it re-realizes the root.
if [[ ${CPU_MAX_WALK_IN_SCOPE:-0} != 1 ]]; then
	exec systemd-run --quiet --scope -p Delegate=yes \
		env CPU_MAX_WALK_IN_SCOPE=1 bash "$0" "$counts" "$writes"
fi
own=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
mkdir "$own/leaf"
echo $$ >"$own/leaf/cgroup.procs"
echo "+cpu" >"$own/cgroup.subtree_control"
mkdir "$own/probe" "$own/many"
echo "+cpu" >"$own/many/cgroup.subtree_control"
total_cpu=$(find /sys/fs/cgroup -name cpu.weight 2>/dev/null | wc -l)
echo "cgroups with the cpu controller on the node before: $total_cpu; $(nproc) CPUs; kernel $(uname -r)"
per_write() {  # FILE VALUE: microseconds per write, over $writes writes
	local t0 i
	t0=$(date +%s%N)
	for ((i = 0; i < writes; i++)); do echo "$2" >"$1"; done
	echo $((($(date +%s%N) - t0) / writes / 1000))
}
made=0
echo "cgroups made | cpu.max write (us) | cpu.weight write (us) | ratio"
for c in ${counts//,/ }; do
	while ((made < c)); do
		mkdir "$own/many/g$made"
		made=$((made + 1))
	done
	m=$(per_write "$own/probe/cpu.max" "max 100000")
	w=$(per_write "$own/probe/cpu.weight" 100)
	echo "$c | $m | $w | $(awk -v m="$m" -v w="$w" 'BEGIN {printf "%.1f", (w > 0 ? m / w : 0)}')"
done
for ((i = 0; i < made; i++)); do rmdir "$own/many/g$i"; done
rmdir "$own/many" "$own/probe"
