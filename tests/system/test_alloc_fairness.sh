#!/usr/bin/env bash
# variants: v2 v1
# Allocations are fair (issue 31): two allocations busy on one CPU, one with
# a single task asking 1000 shares, one with four tasks asking 250 each,
# get CPU within 10% of 1:1 (each allocation's slice weighs the sum of its
# running tasks' weights; Nomad's own layout gives the four 37% more).
# Read from the two allocation slices' CPU counters over a few seconds.
source "$(dirname "$0")/lib.sh"

cleanup() {
    set +e
    for t in fa/t fb/t0 fb/t1 fb/t2 fb/t3; do
        $CTL stop --grace 0 "${t%/*}" "${t#*/}" >/dev/null 2>&1
        $CTL forget "${t%/*}" "${t#*/}" >/dev/null 2>&1
    done
}
trap cleanup EXIT
systemctl start taskscope-manager

# Every task spins on CPU 0 only, so the two allocations compete for it.
busy() {  # busy ALLOC TASK SHARES
    $CTL run --spec "{\"resources\":{\"cpu_shares\":$3}}" "$1" "$2" -- \
        /usr/bin/taskset -c 0 /bin/sh -c 'while :; do :; done' >/dev/null
}
busy fa t 1000
for i in 0 1 2 3; do busy fb "t$i" 250; done
sa=$(task_field fa t alloc_slice)
sb=$(task_field fb t0 alloc_slice)
[[ -n "$sa" && -n "$sb" && "$sa" != "$sb" ]] || fail "allocation slices '$sa' and '$sb'"
ok "fa in $sa (CPUWeight $(systemctl show -p CPUWeight --value "$sa")), fb in $sb (CPUWeight $(systemctl show -p CPUWeight --value "$sb"))"

# CPU time of a slice in microseconds, from its own counter.
usage() {
    local cg
    cg=$(systemctl show -p ControlGroup --value "$1")
    if [[ "$TASKSCOPE_VARIANT" == v1 ]]; then
        echo $(($(cat "/sys/fs/cgroup/cpu,cpuacct$cg/cpuacct.usage") / 1000))
    else
        awk '$1 == "usage_usec" {print $2}' "/sys/fs/cgroup$cg/cpu.stat"
    fi
}
sleep 2  # every task spinning
a0=$(usage "$sa") b0=$(usage "$sb")
sleep 6
a1=$(usage "$sa") b1=$(usage "$sb")
da=$((a1 - a0)) db=$((b1 - b0))
[[ $da -gt 0 && $db -gt 0 ]] || fail "no CPU used: fa $da us, fb $db us"
# Within 10% of 1:1, in integer percent.
ratio=$((100 * da / db))
echo "fa used $da us, fb $db us: fa/fb = $ratio%"
[[ $ratio -ge 90 && $ratio -le 110 ]] || fail "allocations not fair: fa/fb = $ratio% (fa $da us, fb $db us)"
ok "two allocations on one CPU: fa/fb = $ratio% (1000 shares in one task against 4 x 250)"
echo "alloc fairness ($TASKSCOPE_VARIANT): all checks passed"
