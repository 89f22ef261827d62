#!/usr/bin/env bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
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
# Before the window: every task spinning (its shell, run by taskset, on
# CPU) and the slices weighing their tasks. The manager sends a slice's
# weight after the starts, at most once a second (kWeightInterval), each
# scaled among its siblings by one power of two. CPU 0 is divided between
# the two slices' ancestors that are siblings (the allocation slices, or
# the hash buckets above them): theirs must be in the ratio of the tasks'
# shares summed, fa's one of 1000 against fb's four of 250: equal (issue
# 49: summed before they are mapped to weights, so equal asks weigh equal).
spinning() {
    local t pid
    for t in fa/t fb/t0 fb/t1 fb/t2 fb/t3; do
        pid=$(task_field "${t%/*}" "${t#*/}" pid)
        [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == sh ]] || return 1
        [[ "$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f1)" == R ]] || return 1
    done
}
weight() { systemctl show -p CPUWeight --value "$1"; }
parent() { systemctl show -p Slice --value "$1"; }
ca=$sa cb=$sb
while [[ "$(parent "$ca")" != "$(parent "$cb")" ]]; do ca=$(parent "$ca") cb=$(parent "$cb"); done
weighed() {  # within 1% of each other
    local wa wb d
    wa=$(weight "$ca") wb=$(weight "$cb")
    [[ "$wa" =~ ^[0-9]+$ && "$wb" =~ ^[0-9]+$ ]] || return 1
    d=$((wa - wb))
    ((d < 0)) && d=$((-d))
    ((100 * d <= wb))
}
wait_until "every task spinning" 300 spinning
wait_until "$ca and $cb to weigh their tasks' sums" 300 weighed
# fa/t is alone in fa: its weight is its slice's, its scope has none (and
# no cpu cgroup); fb's four carry theirs (250 shares: 10).
[[ "$(weight fa-t.scope)" =~ ^[0-9]+$ ]] && fail "fa-t.scope, alone in fa, has CPUWeight $(weight fa-t.scope)"
assert_eq "$(task_field fa t cpu_weight_unit)" "$sa" "fa/t's weight carried by"
for i in 0 1 2 3; do
    assert_eq "$(weight "fb-t$i.scope")" 10 "fb-t$i.scope's CPUWeight"
    assert_eq "$(task_field fb "t$i" cpu_weight_unit)" "fb-t$i.scope" "fb/t$i's weight carried by"
done
ok "every task spinning; $ca weighs $(weight "$ca"), $cb $(weight "$cb")"
a0=$(usage "$sa") b0=$(usage "$sb")
sleep 6  # the measurement window: CPU shares show only over seconds of contention
a1=$(usage "$sa") b1=$(usage "$sb")
da=$((a1 - a0)) db=$((b1 - b0))
[[ $da -gt 0 && $db -gt 0 ]] || fail "no CPU used: fa $da us, fb $db us"
# Within 10% of 1:1, in integer percent.
ratio=$((100 * da / db))
echo "fa used $da us, fb $db us: fa/fb = $ratio%"
[[ $ratio -ge 90 && $ratio -le 110 ]] || fail "allocations not fair: fa/fb = $ratio% (fa $da us, fb $db us)"
ok "two allocations on one CPU: fa/fb = $ratio% (1000 shares in one task against 4 x 250)"
echo "alloc fairness ($TASKSCOPE_VARIANT): all checks passed"
