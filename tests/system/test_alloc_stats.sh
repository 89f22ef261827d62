#!/usr/bin/env bash
# variants: v2 v1
# Per-allocation totals (issue 31) from taskscope-streamer: an allocation
# in a slice is read as its slice's one cgroup. Checks, with loose bounds
# (TCG): an allocation of two busy tasks shows tasks=2, its slice, memory
# within a sane band of systemd's MemoryCurrent of that slice, and a CPU
# percent near the sum of its tasks'; an allocation of one task shows
# tasks=1; everyone may read them; an unknown allocation gets the named
# error; an allocation goes with its last task.
source "$(dirname "$0")/lib.sh"

S=org.taskscope.Streamer1
P=/org/taskscope/Streamer1
SI=org.taskscope.Stats1
A=sa$$
B=sb$$

cleanup() {
    set +e
    for t in $A/b1 $A/b2 $B/idle; do
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
