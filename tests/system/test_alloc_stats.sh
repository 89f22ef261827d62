#!/usr/bin/env bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# Per-allocation totals (issue 31) from taskscope-streamer: an allocation
# in a slice is read as its slice's one cgroup. Checks, with loose bounds
# (TCG): an allocation of two busy tasks shows tasks=2, its slice, memory
# within a sane band of systemd's MemoryCurrent of that slice, and a CPU
# percent near the sum of its tasks'; an allocation of one task shows
# tasks=1; everyone may read them; an unknown allocation gets the named
# error; an allocation goes with its last task. Then (issue 49) an
# allocation addressed by its ID alone: taskscopectl alloc status, stats,
# stop and forget of an allocation of two tasks, and an unknown ID named.
source "$(dirname "$0")/lib.sh"

S=org.taskscope.Streamer1
P=/org/taskscope/Streamer1
SI=org.taskscope.Stats1
A=sa$$
B=sb$$
C=sc$$

cleanup() {
    set +e
    for t in $A/b1 $A/b2 $B/idle $C/c1 $C/c2; do
        $CTL stop --grace 0 "${t%/*}" "${t#*/}" >/dev/null 2>&1
        $CTL forget "${t%/*}" "${t#*/}" >/dev/null 2>&1
    done
}
trap cleanup EXIT
systemctl start taskscope-manager taskscope-streamer

alloc_json() { $CTL --json stats --alloc "$1" 2>/dev/null; }
has_alloc_percent() { alloc_json "$1" | jq -e '.cpu.percent != null' >/dev/null; }
busy='while :; do :; done'
$CTL run $A b1 -- /bin/sh -c "$busy" >/dev/null
$CTL run $A b2 -- /bin/sh -c "$busy" >/dev/null
$CTL run $B idle -- /bin/sleep 600 >/dev/null
ok "started $A (two busy tasks) and $B (one idle task)"
slice=$(task_field $A b1 alloc_slice)
[[ "$slice" == nomad-share-b??-$A.slice ]] || fail "alloc_slice of $A/b1: $slice"

# Two samples of the slice give the percentages.
wait_until "a CPU percent for allocation $A" 300 has_alloc_percent $A
j=$(alloc_json $A)
assert_eq "$(jq -r .tasks <<<"$j")" 2 "tasks of $A"
assert_eq "$(jq -r '.slices | join(",")' <<<"$j")" "$slice" "slices of $A"
assert_eq "$(jq -r .alloc_id <<<"$j")" "$A" "alloc_id"
$CTL stats --alloc | quiet_grep "^$A  *2 .* $slice\$" || fail "the table has no row for $A: $($CTL stats --alloc)"
ok "taskscopectl stats --alloc shows $A with 2 tasks in $slice"
wait_until "a sample of allocation $B" 300 bash -c "$CTL --json stats --alloc $B >/dev/null 2>&1"
assert_eq "$($CTL --json stats --alloc $B | jq -r .tasks)" 1 "tasks of $B"
assert_eq "$($CTL --json stats --alloc | jq -r "map(select(.alloc_id == \"$A\" or .alloc_id == \"$B\")) | length")" 2 \
    "allocations listed"

# Memory: one read of the slice, beside systemd's own reading of it
# (memory.current on v2, memory.usage_in_bytes on v1), a moment apart.
ours=$(alloc_json $A | jq -r .memory.usage)
theirs=$(systemctl show -P MemoryCurrent "$slice")
[[ "$ours" =~ ^[0-9]+$ && "$theirs" =~ ^[0-9]+$ ]] || fail "memory usage: ours '$ours', systemd's '$theirs'"
awk -v a="$ours" -v b="$theirs" 'BEGIN { d = a - b; if (d < 0) d = -d; slack = b / 2; if (slack < 4194304) slack = 4194304; exit !(d <= slack) }' ||
    fail "memory usage of $A: ours $ours, systemd's MemoryCurrent of $slice $theirs"
ok "memory usage of $A: $ours, systemd's MemoryCurrent $theirs"

# CPU: the slice's percent against its tasks' (the same ticks, so nearly
# the same window); a few tries, since two reads may straddle a tick.
cpu_matches() {
    local alloc tasks
    alloc=$(alloc_json $A | jq -r '.cpu.percent // "none"')
    tasks=$($CTL --json stats | jq -r "[.[] | select(.alloc_id == \"$A\") | .cpu.percent // 0] | add")
    echo "allocation $alloc%, its tasks' sum $tasks%"
    awk -v a="$alloc" -v t="$tasks" 'BEGIN { exit !(a != "none" && a > 30 && a >= t * 0.6 - 20 && a <= t * 1.4 + 20) }'
}
alloc_ts() { alloc_json $A | jq -r .timestamp_us; }
sampled_since() { [[ "$(alloc_ts)" != "$1" ]]; }
matched=""
for ((try = 0; try < 5; try++)); do
    if line=$(cpu_matches); then
        matched=1
        break
    fi
    echo "  not yet: $line"
    # The next try reads the next sample of the allocation (the one read may be older).
    wait_until "a new sample of $A" 300 sampled_since "$(alloc_ts)"
done
[[ -n "$matched" ]] || fail "CPU of $A is not near its tasks' sum: $line"
ok "CPU of $A: $line"

# Everyone may read them (the bus policy names each read method).
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
out=$(as_nobody dbus-send --system --print-reply --dest=$S $P $SI.GetAllocationStats string:$A 2>&1) ||
    fail "nobody cannot read allocation stats: $out"
grep -q "\"$slice\"" <<<"$out" || fail "nobody's GetAllocationStats: $out"
out=$(as_nobody dbus-send --system --print-reply --dest=$S $P $SI.GetAllAllocationStats 2>&1) ||
    fail "nobody cannot list allocation stats: $out"
ok "nobody may read allocation stats"

# An unknown allocation: the named error (dbus-send prints its name; busctl only its message).
out=$(dbus-send --system --print-reply --dest=$S $P $SI.GetAllocationStats string:nosuch$$ 2>&1) &&
    fail "GetAllocationStats of an unknown allocation succeeded: $out"
grep -q "org.taskscope.Error.NoSuchAllocation" <<<"$out" || fail "unknown allocation: $out"
out=$(busctl call $S $P $SI GetAllocationStats s nosuch$$ 2>&1) && fail "busctl succeeded: $out"
ok "unknown allocation: org.taskscope.Error.NoSuchAllocation ($out)"

# The allocation goes with its last task.
$CTL stop --grace 0 $B idle >/dev/null
wait_until "$B to leave the streamer" 300 bash -c "! $CTL --json stats --alloc $B >/dev/null 2>&1"
ok "allocation $B went with its last task"

# Issue 49: an allocation by its ID alone. c2 ignores SIGTERM (the
# disposition survives the exec), so alloc stop waits for its kill after
# the grace.
$CTL run $C c1 -- /bin/sleep 600 >/dev/null
$CTL run $C c2 -- /bin/sh -c 'trap "" TERM; exec /bin/sleep 600' >/dev/null
cslice=$(task_field $C c1 alloc_slice)
[[ "$cslice" == nomad-share-b??-$C.slice ]] || fail "alloc_slice of $C/c1: $cslice"
assert_eq "$(task_field $C c2 alloc_slice)" "$cslice" "alloc_slice of $C/c2"
out=$($CTL alloc status $C)
echo "$out"
quiet_grep -x "slice: $cslice" <<<"$out" || fail "alloc status $C shows no slice $cslice"
for t in c1 c2; do
    quiet_grep -E "^$t +running +$(task_field $C $t pid) +-$" <<<"$out" || fail "alloc status $C shows no running $t"
done
j=$($CTL --json alloc status $C)
assert_eq "$(jq -r '.slices | join(",")' <<<"$j")" "$cslice" "slices in alloc status --json"
assert_eq "$(jq -r '[.tasks[] | .task + "=" + .alloc_slice] | sort | join(" ")' <<<"$j")" \
    "c1=$cslice c2=$cslice" "tasks and their alloc_slice in alloc status --json"
$CTL --json alloc list | jq -e --arg a $C 'any(.[]; .alloc_id == $a and .tasks == 2 and .running == 2)' >/dev/null ||
    fail "alloc list: $($CTL alloc list)"
ok "taskscopectl alloc status $C: both tasks, running, in $cslice"

wait_until "a sample of allocation $C" 300 bash -c "$CTL --json alloc stats $C >/dev/null 2>&1"
j=$($CTL --json alloc stats $C)
jq -e '.tasks == 2 and .memory.usage > 0 and (.cpu.total_us | type) == "number" and .pids >= 2' <<<"$j" >/dev/null ||
    fail "alloc stats --json $C: $j"
line=$($CTL alloc stats $C)
[[ "$line" =~ ^$C:\ tasks\ 2,\ cpu\ .*,\ memory\ [0-9.]+(B|KiB|MiB|GiB),\ pids\ [0-9]+$ ]] ||
    fail "alloc stats $C: $line"
ok "taskscopectl alloc stats $C: $line"

out=$($CTL alloc forget $C 2>&1) && fail "alloc forget of running tasks succeeded: $out"
quiet_grep -E "c1, c2|c2, c1" <<<"$out" || fail "alloc forget of running tasks names none: $out"
assert_eq "$(task_field $C c1 state) $(task_field $C c2 state)" "running running" "states after a refused alloc forget"

rc=0
out=$($CTL alloc stop --grace 1000 $C) || rc=$?
echo "$out"
assert_eq "$rc" 0 "exit status of alloc stop $C"
quiet_grep -E "^c1: exited: code " <<<"$out" || fail "alloc stop printed no exit of c1: $out"
quiet_grep -E "^c2: exited: code .*signal 9" <<<"$out" || fail "alloc stop printed no kill of c2: $out"
assert_eq "$(task_field $C c1 state) $(task_field $C c2 state)" "exited exited" "states after alloc stop"
$CTL alloc stop $C >/dev/null || fail "alloc stop of an allocation already stopped failed"
ok "taskscopectl alloc stop $C stopped both tasks"

$CTL alloc forget $C || fail "alloc forget $C failed"
busctl --json=short call $I $M $I ListTasks | jq -e --arg a $C '[.data[0][] | select(.[0] == $a)] | length == 0' >/dev/null ||
    fail "ListTasks still has tasks of $C: $(mgr ListTasks)"
wait_until "$cslice to go" 100 bash -c "! systemctl is-active --quiet $cslice"
ok "taskscopectl alloc forget $C forgot both tasks; $cslice is $(systemctl is-active $cslice || true)"

rc=0
out=$($CTL alloc status nosuch$$ 2>&1) || rc=$?
[[ $rc -ne 0 ]] || fail "alloc status of an unknown allocation exited 0: $out"
quiet_grep "nosuch$$" <<<"$out" || fail "alloc status of an unknown allocation does not name it: $out"
ok "unknown allocation: exit $rc, $out"
