#!/bin/bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# Proves the bed itself: systemd is PID 1, the system is up, the cgroup layout
# matches the variant, and systemd can place a scope with a memory limit.
set -euo pipefail

# Run by hand (not via guest-suite.sh) the variant comes from the kernel command line.
if [ -n "${TASKSCOPE_VARIANT:-}" ]; then
	variant=$TASKSCOPE_VARIANT
elif grep -qw 'systemd.unified_cgroup_hierarchy=0' /proc/cmdline; then
	variant=v1
else
	variant=v2
fi
echo "variant: $variant"

check() { echo "check: $*"; }
fail() { echo "FAIL: $*"; exit 1; }

check "PID 1 is systemd"
pid1=$(ps -p 1 -o comm=)
echo "  pid 1: $pid1"
[ "$pid1" = systemd ] || fail "PID 1 is '$pid1'"

check "system is running or degraded"
state=$(systemctl is-system-running || true)
echo "  state: $state"
case "$state" in running | degraded) ;; *) fail "system state '$state'" ;; esac

fstype=$(stat -fc %T /sys/fs/cgroup)
case "$variant" in
v2)
	check "/sys/fs/cgroup is cgroup2fs with cpuset cpu memory pids"
	echo "  fs type: $fstype"
	[ "$fstype" = cgroup2fs ] || fail "/sys/fs/cgroup is $fstype"
	controllers=$(cat /sys/fs/cgroup/cgroup.controllers)
	echo "  controllers: $controllers"
	# Whether systemd mounted it with favordynmods (docs/architecture.md, "The node's share").
	echo "  mount options: $(awk '$2 == "/sys/fs/cgroup" {print $4}' /proc/self/mounts)"
	for c in cpuset cpu memory pids; do
		[[ " $controllers " == *" $c "* ]] || fail "controller $c missing"
	done
	;;
v1)
	check "/sys/fs/cgroup is tmpfs with a v1 memory hierarchy"
	echo "  fs type: $fstype"
	[ "$fstype" = tmpfs ] || fail "/sys/fs/cgroup is $fstype"
	[ -d /sys/fs/cgroup/memory ] || fail "/sys/fs/cgroup/memory missing"
	echo "  hierarchies: $(ls /sys/fs/cgroup | tr '\n' ' ')"
	;;
*) fail "unknown variant $variant" ;;
esac

check "systemd-run --scope lands in testbed.slice/run-*.scope"
cg=$(systemd-run --quiet --scope --slice=testbed.slice -p MemoryMax=64M cat /proc/self/cgroup)
echo "$cg" | sed 's/^/  /'
grep -q 'testbed.slice/run-' <<<"$cg" || fail "scope not under testbed.slice"

echo "PASS"
