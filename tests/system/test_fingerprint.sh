#!/bin/bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# taskscope-fingerprint on a real node (systemd as PID 1) must say what the
# guest's own /proc and /sys say. Env: TASKSCOPE_VARIANT (v2|v1) names the
# cgroup regime the guest was booted with; TASKSCOPE_BUILD_DIR is the build
# tree, used when the package is not installed.
set -euo pipefail

variant=${TASKSCOPE_VARIANT:?TASKSCOPE_VARIANT must be v2 or v1}
case "$variant" in
v2 | v1) ;;
*)
	echo "FAIL: TASKSCOPE_VARIANT is '$variant', expected v2 or v1" >&2
	exit 1
	;;
esac

bin=/usr/bin/taskscope-fingerprint
if [ ! -x "$bin" ]; then
	bin=${TASKSCOPE_BUILD_DIR:?neither /usr/bin/taskscope-fingerprint nor TASKSCOPE_BUILD_DIR}/src/fingerprint/taskscope-fingerprint
fi
[ -x "$bin" ] || {
	echo "FAIL: no taskscope-fingerprint binary at $bin" >&2
	exit 1
}
echo "using $bin (variant $variant)"

json=$("$bin") || {
	echo "FAIL: $bin exited with $?" >&2
	exit 1
}
echo "$json"

jq -e 'type == "object" and all(.[]; type == "string")' <<<"$json" >/dev/null || {
	echo "FAIL: output is not a flat object of strings" >&2
	exit 1
}
echo "ok: output is a flat object of string attributes"

attr() {
	jq -er --arg k "$1" '.[$k] // error("attribute \($k) is missing")' <<<"$json"
}

check() { # name expected
	local actual
	actual=$(attr "$1") || {
		echo "FAIL: attribute $1 is missing" >&2
		exit 1
	}
	if [ "$actual" != "$2" ]; then
		echo "FAIL: $1: the guest says '$2', taskscope-fingerprint says '$actual'" >&2
		exit 1
	fi
	echo "ok: $1 = $actual"
}

# Number of CPUs in a kernel CPU list ("0-3,6" -> 5).
count_cpus() {
	local list=${1//[[:space:]]/} n=0 part
	local -a parts
	[ -n "$list" ] || {
		echo 0
		return
	}
	IFS=, read -ra parts <<<"$list"
	for part in "${parts[@]}"; do
		if [[ $part == *-* ]]; then
			n=$((n + ${part#*-} - ${part%-*} + 1))
		else
			n=$((n + 1))
		fi
	done
	echo "$n"
}

bool() { if "$@"; then echo true; else echo false; fi; }

# The regime: only a cgroup2 mount at /sys/fs/cgroup itself is v2.
fstype=$(awk '$2 == "/sys/fs/cgroup" { t = $3 } END { print t }' /proc/self/mounts)
if [ "$variant" = v2 ]; then
	[ "$fstype" = cgroup2 ] || {
		echo "FAIL: variant v2 but /sys/fs/cgroup is '$fstype' in the guest" >&2
		exit 1
	}
else
	[ "$fstype" != cgroup2 ] || {
		echo "FAIL: variant v1 but /sys/fs/cgroup is cgroup2 in the guest" >&2
		exit 1
	}
fi
check unique.cgroups.version "$variant"
check os.cgroups.version "${variant#v}"
check unique.cgroup.mountpoint /sys/fs/cgroup

if [ "$variant" = v2 ]; then
	controllers=$(tr -s ' \n' '\n' </sys/fs/cgroup/cgroup.controllers | sed '/^$/d' | LC_ALL=C sort | paste -sd, -)
	freezer=$(bool test -e /sys/fs/cgroup/init.scope/cgroup.freeze -o -e /sys/fs/cgroup/system.slice/cgroup.freeze)
	cpuset=$(bool grep -qw cpuset /sys/fs/cgroup/cgroup.controllers)
	usable=$(cat /sys/fs/cgroup/cpuset.cpus.effective 2>/dev/null || cat /sys/devices/system/cpu/online)
else
	v1=$(awk '$3 == "cgroup" { print $4 }' /proc/self/mounts | tr , '\n' |
		{ grep -xE 'blkio|cpu|cpuacct|cpuset|devices|freezer|hugetlb|memory|misc|net_cls|net_prio|perf_event|pids|rdma' || true; } |
		LC_ALL=C sort -u)
	controllers=$(paste -sd, - <<<"$v1")
	freezer=$(bool grep -qx freezer <<<"$v1")
	cpuset=$(bool grep -qx cpuset <<<"$v1")
	cpuset_dir=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpuset(,|$)/ { print $2; exit }' /proc/self/mounts)
	usable=$(cat "$cpuset_dir/cpuset.effective_cpus" 2>/dev/null || cat "$cpuset_dir/cpuset.cpus")
fi
check cgroups.controllers "$controllers"
check cgroups.freezer "$freezer"
check cgroups.cpuset "$cpuset"

usable=${usable//[[:space:]]/}
check cpu.totalcores "$(count_cpus "$(cat /sys/devices/system/cpu/present)")"
check cpu.onlinecores "$(count_cpus "$(cat /sys/devices/system/cpu/online)")"
check cpu.usablecores "$(count_cpus "$usable")"
check cpu.usable_cpuset "$usable"
# Nothing is reserved for the system without configuration.
check cpu.reservablecores "$(count_cpus "$usable")"

compute=$(attr cpu.totalcompute)
if ! [[ $compute =~ ^[1-9][0-9]*$ ]]; then
	echo "FAIL: cpu.totalcompute is '$compute', expected a positive number of MHz" >&2
	exit 1
fi
echo "ok: cpu.totalcompute = $compute"

mem_kib=$(awk '$1 == "MemTotal:" { print $2 }' /proc/meminfo)
check memory.totalbytes "$((mem_kib * 1024))"
check kernel.version "$(uname -r)"

# The bus property is the package version ("252.39-1~deb12u1"); systemctl
# prints "systemd 252 (252.39-1~deb12u1)". Their leading numbers must agree.
systemctl_major=$(systemctl --version | sed -n '1s/^systemd \([0-9]\+\).*/\1/p')
property=$(attr systemd.version) || {
	echo "FAIL: systemd.version is missing although systemd is PID 1" >&2
	exit 1
}
if [ -z "$systemctl_major" ] || [ "${property%%[!0-9]*}" != "$systemctl_major" ]; then
	echo "FAIL: systemd.version is '$property' but systemctl says systemd '$systemctl_major'" >&2
	exit 1
fi
echo "ok: systemd.version = $property (systemctl: $systemctl_major)"

echo "PASS: fingerprint matches the $variant guest"
