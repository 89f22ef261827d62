#!/usr/bin/env bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# Task stats from taskscope-streamer (org.taskscope.Stats1) on the real
# kernel: a task burning one core shows ~100% of one core and one burning
# two ~200%; a task holding 200 MiB shows it as RSS, as the cgroup's own
# files (v2, or the v1 hierarchies) say; a task set to 3 s is sampled every
# ~3 s while the others go on every second, one Samples signal per tick; 0
# stops sampling; the per-task interval survives restarts of the manager
# and the streamer; unknown tasks and callers without the right get named
# errors.
source "$(dirname "$0")/lib.sh"

S=org.taskscope.Streamer1
P=/org/taskscope/Streamer1
SI=org.taskscope.Stats1
A=st$$
T=$(mktemp -d /tmp/stats.XXXXXX)
MIB=$((1024 * 1024))

cleanup() {
    for t in burn two mem idle; do
        $CTL stop --grace 0 $A $t >/dev/null 2>&1 || true
        $CTL forget $A $t >/dev/null 2>&1 || true
    done
    busctl set-property $S $P $SI DefaultIntervalMs t 1000 2>/dev/null || true
    [[ -n "${monitor:-}" ]] && kill "$monitor" 2>/dev/null || true
    rm -rf "$T"
}
trap cleanup EXIT

systemctl start taskscope-manager taskscope-streamer
stats_json() { $CTL --json stats $A "$1" 2>/dev/null; }
stat_of() { stats_json "$1" | jq -r "$2"; }
has_percent() { stats_json "$1" | jq -e '.cpu.percent != null' >/dev/null; }
rss_over() { stats_json "$1" | jq -e ".memory.rss != null and .memory.rss > $2" >/dev/null; }
# The task's directory in the hierarchy of a v1 controller, or the v2 one.
cg_dir() {
    local cg
    cg=$(task_field $A "$1" cgroup)
    if [[ "$TASKSCOPE_VARIANT" == v1 ]]; then echo "/sys/fs/cgroup/$2$cg"; else echo "/sys/fs/cgroup$cg"; fi
}
# The median of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "none" }'; }
in_band() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "none" && v >= lo && v <= hi) }'; }

assert_eq "$(busctl get-property $S $P $SI CgroupVersion | awk '{print $2}' | tr -d '"')" "$TASKSCOPE_VARIANT" \
    "Stats1 CgroupVersion"
assert_eq "$(busctl get-property $S $P $SI DefaultIntervalMs)" "t 1000" "default interval"

$CTL run $A burn -- /bin/sh -c 'while :; do :; done' >/dev/null
$CTL run $A two -- /bin/sh -c 'while :; do :; done & while :; do :; done' >/dev/null
# tail keeps the whole newline-free input while it waits for its end.
$CTL run $A mem -- /bin/sh -c '{ head -c 200M /dev/zero; exec sleep 3600; } | tail -n 1' >/dev/null
$CTL run $A idle -- /bin/sleep 3600 >/dev/null
ok "started burn (1 core), two (2 cores), mem (200 MiB), idle"

# --- CPU: percent of one core ---------------------------------------------
wait_until "a CPU percent for burn" 300 has_percent burn
wait_until "a CPU percent for two" 300 has_percent two
timeout 6 $CTL --json stats --watch >"$T/cpu.jsonl" || true
burn=$(jq -r "select(.alloc_id == \"$A\" and .task == \"burn\" and .cpu.percent != null) | .cpu.percent" "$T/cpu.jsonl" | median)
two=$(jq -r "select(.alloc_id == \"$A\" and .task == \"two\" and .cpu.percent != null) | .cpu.percent" "$T/cpu.jsonl" | median)
in_band "$burn" 60 140 || fail "burn: median CPU $burn%, want ~100% (60-140) of one core; samples: $(grep -c '"burn"' "$T/cpu.jsonl")"
ok "burn uses $burn% (one core = 100%)"
in_band "$two" 130 270 || fail "two: median CPU $two%, want ~200% (130-270)"
ok "two uses $two% (two cores = 200%)"
# The percent is the CPU time over the wall time between two samples.
jq -s -r "[.[] | select(.alloc_id == \"$A\" and .task == \"burn\")] | .[-2:] |
    ((.[1].cpu.total_us - .[0].cpu.total_us) / (.[1].timestamp_us - .[0].timestamp_us) * 100 | floor | tostring)
    + \" \" + (.[1].cpu.percent | floor | tostring)" "$T/cpu.jsonl" >"$T/check"
read -r from_counters reported <"$T/check"
((from_counters - reported <= 15 && reported - from_counters <= 15)) ||
    fail "burn's percent $reported% does not match its counters ($from_counters%)"
ok "burn's percent matches its cpu usage counters ($from_counters% vs $reported%)"
user=$(stat_of burn '.cpu.user_us')
[[ "$user" =~ ^[0-9]+$ ]] && ((user > 0)) || fail "burn has no user CPU time: $user"
ok "user CPU time of burn: $user us"
$CTL stop --grace 0 $A burn >/dev/null || true
$CTL stop --grace 0 $A two >/dev/null || true

# --- Memory: 200 MiB of anonymous memory ---------------------------------------
# All 200 MiB are in tail's buffers once head is done; wait for that.
wait_until "mem to hold 200 MiB" 600 rss_over mem $((200 * MIB - 1))
rss=$(stat_of mem '.memory.rss')
((rss >= 200 * MIB && rss <= 240 * MIB)) || fail "mem RSS $rss bytes, want ~200 MiB"
ok "mem RSS $((rss / MIB)) MiB"
usage=$(stat_of mem '.memory.usage')
peak=$(stat_of mem '.memory.peak')
((usage >= rss && peak >= usage)) || fail "mem usage $usage, peak $peak, rss $rss: want rss <= usage <= peak"
ok "mem usage $((usage / MIB)) MiB, peak $((peak / MIB)) MiB"
[[ "$(stat_of mem '.pids')" -ge 2 ]] || fail "mem has fewer than 2 pids: $(stat_of mem '.pids')"
ok "mem pids $(stat_of mem '.pids')"

# The values are the cgroup's own files, of this variant (tail is idle: they hold still).
if [[ "$TASKSCOPE_VARIANT" == v1 ]]; then
    file_rss=$(awk '$1 == "total_rss" {print $2}' "$(cg_dir mem memory)/memory.stat")
    file_usage=$(cat "$(cg_dir mem memory)/memory.usage_in_bytes")
    file_pids=$(cat "$(cg_dir mem pids)/pids.current")
    kmem_file="$(cg_dir mem memory)/memory.kmem.usage_in_bytes"
else
    file_rss=$(awk '$1 == "anon" {print $2}' "$(cg_dir mem)/memory.stat")
    file_usage=$(cat "$(cg_dir mem)/memory.current")
    file_pids=$(cat "$(cg_dir mem)/pids.current")
    kmem_file=""
fi
# A fresh sample after the reads above: one the streamer took (its
# timestamp is the tick's start, before it reads) after them.
read_us=$(date +%s%6N)
wait_until "a sample of mem taken after the reads above" 300 \
    bash -c "(( \$($CTL --json stats $A mem | jq .timestamp_us) > $read_us ))"
rss=$(stat_of mem '.memory.rss')
usage=$(stat_of mem '.memory.usage')
d=$((rss > file_rss ? rss - file_rss : file_rss - rss))
((d <= 2 * MIB)) || fail "RSS $rss differs from the cgroup file's $file_rss"
d=$((usage > file_usage ? usage - file_usage : file_usage - usage))
((d <= 4 * MIB)) || fail "usage $usage differs from the cgroup file's $file_usage"
assert_eq "$(stat_of mem '.pids')" "$file_pids" "pids = pids.current"
ok "RSS and usage match the $TASKSCOPE_VARIANT cgroup files ($file_rss, $file_usage)"
if [[ -n "$kmem_file" ]]; then
    if [[ -e "$kmem_file" ]]; then
        [[ "$(stat_of mem '.memory.kernel')" != null ]] || fail "memory.kmem.usage_in_bytes exists, kernel memory unmeasured"
    else
        [[ "$(stat_of mem '.memory.kernel')" == null ]] || fail "no kmem file, yet kernel memory measured"
    fi
    ok "kernel memory from memory.kmem.usage_in_bytes: $(stat_of mem '.memory.kernel')"
else
    [[ "$(stat_of mem '.memory.kernel')" != null ]] || fail "v2 kernel memory unmeasured"
    ok "kernel memory from memory.stat: $(stat_of mem '.memory.kernel')"
fi

# --- Intervals: idle every 3 s, mem on the 1 s default, one signal per tick ------
$CTL stats --interval 3000 $A idle
stdbuf -oL busctl monitor --json=short --match "type='signal',interface='$SI',member='Samples'" --match "$MONITOR_MATCH" \
    >"$T/monitor.json" 2>/dev/null &
monitor=$!
monitor_sync "$T/monitor.json"
sleep 1  # kept: a measurement window, the Samples count below spans ~11 s (this second and the 10 s watch)
timeout 10 $CTL --json stats --watch >"$T/watch.jsonl" || true
kill "$monitor" 2>/dev/null || true
wait "$monitor" 2>/dev/null || true
monitor=""
spacing() {  # spacing TASK: the gaps between its samples, in ms
    jq -r "select(.alloc_id == \"$A\" and .task == \"$1\") | .timestamp_us" "$T/watch.jsonl" |
        awk 'NR > 1 { printf "%d\n", ($1 - prev) / 1000 } { prev = $1 }'
}
idle_n=$(jq -r "select(.alloc_id == \"$A\" and .task == \"idle\") | .task" "$T/watch.jsonl" | wc -l)
mem_n=$(jq -r "select(.alloc_id == \"$A\" and .task == \"mem\") | .task" "$T/watch.jsonl" | wc -l)
((idle_n >= 3 && idle_n <= 4)) || fail "idle (3 s) was sampled $idle_n times in 10 s; gaps: $(spacing idle | tr '\n' ' ')"
((mem_n >= 8 && mem_n <= 11)) || fail "mem (1 s) was sampled $mem_n times in 10 s; gaps: $(spacing mem | tr '\n' ' ')"
for gap in $(spacing idle); do ((gap >= 2500 && gap <= 3500)) || fail "idle: a gap of $gap ms, want ~3000"; done
for gap in $(spacing mem); do ((gap >= 500 && gap <= 1500)) || fail "mem: a gap of $gap ms, want ~1000"; done
ok "idle every ~3 s ($(spacing idle | tr '\n' ' ')ms), mem every ~1 s ($(spacing mem | tr '\n' ' ')ms)"
assert_eq "$(jq -r "select(.task == \"idle\") | .interval_ms" "$T/watch.jsonl" | sort -u)" 3000 "interval_ms in idle's samples"
signals=$(jq -s 'map(select(.member == "Samples")) | length' "$T/monitor.json")
carried=$(jq -s '[.[] | select(.member == "Samples") | .payload.data[0] | length] | add // 0' "$T/monitor.json")
((signals >= 9 && signals <= 13)) || fail "$signals Samples signals in ~11 s, want one per 1 s tick"
((carried > signals)) || fail "$carried samples in $signals signals: idle's ticks were not shared"
ok "$signals Samples signals carried $carried samples: idle's ticks are mem's ticks"

# 0 stops sampling; the last sample stays readable.
$CTL stats --interval 0 $A idle
last=$(stat_of idle '.timestamp_us')
timeout 4 $CTL --json stats --watch $A idle >"$T/off.jsonl" || true
[[ ! -s "$T/off.jsonl" ]] || fail "idle was sampled with interval 0: $(cat "$T/off.jsonl")"
assert_eq "$(stat_of idle '.timestamp_us')" "$last" "idle's last sample after interval 0"
ok "interval 0 stops sampling; the last sample stays"

# --- Restarts: the view and the intervals survive --------------------------------
systemctl restart taskscope-manager
before=$(stat_of mem '.timestamp_us')
wait_until "mem to be sampled after the manager restarted" 100 \
    bash -c "(( \$($CTL --json stats $A mem | jq .timestamp_us) > $before ))"
assert_eq "$(busctl get-property $S $P $SI SampledTasks)" "u 2" "tasks sampled after the manager restarted"
assert_eq "$(stat_of idle '.timestamp_us')" "$last" "idle still off after the manager restarted"
$CTL stats --interval 3000 $A idle
systemctl restart taskscope-streamer
wait_until "mem to be sampled after the streamer restarted" 300 has_percent mem
wait_until "idle to be sampled after the streamer restarted" 300 bash -c "$CTL --json stats $A idle >/dev/null 2>&1"
assert_eq "$(stat_of idle '.interval_ms')" 3000 "idle's interval after the streamer restarted"
assert_eq "$(stat_of mem '.interval_ms')" 1000 "mem's interval after the streamer restarted"
ok "per-task intervals survive restarts of the manager and the streamer"
$CTL stats --interval default $A idle
wait_until "idle back on the default" 100 bash -c "[[ \$($CTL --json stats $A idle | jq .interval_ms) == 1000 ]]"
ok "--interval default puts idle back on the default"

# --- Bad input and rights -------------------------------------------------------
out=$($CTL stats nosuch task 2>&1) && fail "stats of an unknown task succeeded"
[[ "$out" == *org.taskscope.Error.NoSuchTask* ]] || fail "unknown task said: $out"
ok "unknown task: $out"
out=$(dbus-send --system --print-reply --dest=$S $P $SI.SetTaskInterval string:$A string:idle int64:10 2>&1) &&
    fail "a 10 ms interval was accepted"
[[ "$out" == *org.taskscope.Error.InvalidArgument* ]] || fail "10 ms said: $out"
ok "10 ms interval: $out"
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups \
    dbus-send --system --print-reply --dest=$S $P $SI.GetTaskStats string:$A string:mem 2>&1) ||
    fail "nobody cannot read stats: $out"
ok "nobody may read stats"
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups \
    dbus-send --system --print-reply --dest=$S $P $SI.SetTaskInterval string:$A string:mem int64:5000 2>&1) &&
    fail "nobody changed an interval"
[[ "$out" == *AccessDenied* ]] || fail "nobody's SetTaskInterval said: $out"
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups busctl set-property $S $P $SI DefaultIntervalMs t 5000 2>&1) &&
    fail "nobody changed the default interval"
assert_eq "$(busctl get-property $S $P $SI DefaultIntervalMs)" "t 1000" "default interval after nobody tried"
ok "only root changes intervals"

# --- Ended tasks leave ----------------------------------------------------------
$CTL stop --grace 0 $A mem >/dev/null || true
wait_until "mem to leave the stats" 100 bash -c "! $CTL stats $A mem >/dev/null 2>&1"
out=$($CTL stats $A mem 2>&1) || true
[[ "$out" == *NoSuchTask* ]] || fail "stats of an ended task: $out"
ok "an ended task leaves the stats"
$CTL stats | quiet_grep " idle " || fail "the table lacks idle"
ok "table: $($CTL stats | grep " idle ")"
echo "streamer stats: all checks passed"
