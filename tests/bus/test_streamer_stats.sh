#!/usr/bin/env bash
# org.taskscope.Stats1 on a private bus: served beside Streamer1 on the
# same object, introspectable, named errors for an unknown task and for
# intervals out of range, the default interval as a read-write property;
# the streamer does not start the manager through bus activation, and
# notices it when it comes. No systemd here, so no task runs: the sampling
# itself is proven by tests/system/test_streamer_stats.sh.
source "$(dirname "$0")/lib.sh"
bus_start

S=org.taskscope.Streamer1
P=/org/taskscope/Streamer1
I=org.taskscope.Stats1
CTL="$TASKSCOPE_BUILD_DIR/src/cli/taskscopectl"
STREAMER="$TASKSCOPE_BUILD_DIR/src/stream/taskscope-streamer"
bctl() { busctl --address="$BUS_ADDRESS" "$@"; }
fail() { echo "FAIL: $*"; [[ -f "$BUS_TMP/streamer.log" ]] && tail -n 20 "$BUS_TMP/streamer.log"; exit 1; }
# Runs busctl and prints "ERROR <name>" on failure (busctl prints only the message).
expect_bus_error() {
    local want=$1 out
    shift
    out=$(dbus-send --bus="$BUS_ADDRESS" --print-reply --dest=$S "$@" 2>&1) && fail "succeeded: $* -> $out"
    [[ "$out" == "Error $want:"* ]] || fail "expected $want from $*, got: $out"
    echo "ok: $want (${out#Error $want: })"
}

out=$("$STREAMER" --bus-address "$BUS_ADDRESS" --spool-dir "$BUS_TMP/spool" --state-dir "$STATE_DIR/bad" \
    --stats-interval-ms 5 2>&1) && fail "a 5 ms default interval was accepted"
[[ "$out" == *"--stats-interval-ms 5 ms is out of range"* ]] || fail "bad --stats-interval-ms said: $out"
echo "ok: --stats-interval-ms 5 refused: ${out##*: }"

"$STREAMER" --bus-address "$BUS_ADDRESS" --spool-dir "$BUS_TMP/spool" --state-dir "$STATE_DIR/streamer" \
    --stats-interval-ms 2000 -v 2>"$BUS_TMP/streamer.log" &
for ((i = 0; i < 100; i++)); do
    bctl list --no-legend 2>/dev/null | grep -q "^$S " && break
    sleep 0.1  # the poll's pace
done
bctl list --no-legend | grep -q "^$S " || fail "the streamer did not take its name"
echo "ok: streamer on the bus"

intro=$(bctl introspect $S $P)
for member in org.taskscope.Streamer1 ReadLogs LogsComplete org.taskscope.Stats1 GetTaskStats GetAllStats \
    GetAllocationStats GetAllAllocationStats SetTaskInterval Samples DefaultIntervalMs MinIntervalMs MaxIntervalMs \
    SampledTasks CgroupVersion; do
    grep -q -- "$member" <<<"$intro" || fail "introspection lacks $member"
done
echo "ok: one object serves org.taskscope.Streamer1 and org.taskscope.Stats1"
grep -q 'Samples *signal *a(ssttttttdddttttttttt)' <<<"$intro" || fail "Samples has another signature"
grep -q 'GetAllocationStats *method *s *(sastttttttdddttttttttt)' <<<"$intro" ||
    fail "GetAllocationStats has another signature: $(grep GetAllocationStats <<<"$intro")"

[[ "$(bctl get-property $S $P $I DefaultIntervalMs)" == "t 2000" ]] || fail "DefaultIntervalMs is not 2000"
[[ "$(bctl get-property $S $P $I MinIntervalMs)" == "t 100" ]] || fail "MinIntervalMs"
[[ "$(bctl get-property $S $P $I SampledTasks)" == "u 0" ]] || fail "SampledTasks"
version=$(bctl get-property $S $P $I CgroupVersion)
[[ "$version" == 's "v1"' || "$version" == 's "v2"' ]] || fail "CgroupVersion: $version"
echo "ok: properties (DefaultIntervalMs 2000 from the option, CgroupVersion $version)"

expect_bus_error org.taskscope.Error.NoSuchTask $P $I.GetTaskStats string:a1 string:web
expect_bus_error org.taskscope.Error.NoSuchTask $P $I.SetTaskInterval string:a1 string:web int64:1000
expect_bus_error org.taskscope.Error.NoSuchAllocation $P $I.GetAllocationStats string:a1
expect_bus_error org.taskscope.Error.InvalidArgument $P org.freedesktop.DBus.Properties.Set \
    string:$I string:DefaultIntervalMs variant:uint64:5
expect_bus_error org.taskscope.Error.InvalidArgument $P org.freedesktop.DBus.Properties.Set \
    string:$I string:DefaultIntervalMs variant:uint64:999999999999
[[ "$(bctl get-property $S $P $I DefaultIntervalMs)" == "t 2000" ]] || fail "a refused value changed the default"
bctl set-property $S $P $I DefaultIntervalMs t 3000
[[ "$(bctl get-property $S $P $I DefaultIntervalMs)" == "t 3000" ]] || fail "setting DefaultIntervalMs"
echo "ok: DefaultIntervalMs set to 3000"
bctl call $S $P $I GetAllStats | grep -qx 'a(ssttttttdddttttttttt) 0' || fail "GetAllStats is not empty"
echo "ok: GetAllStats empty"
bctl call $S $P $I GetAllAllocationStats | grep -qx 'a(sastttttttdddttttttttt) 0' || fail "GetAllAllocationStats"
echo "ok: GetAllAllocationStats empty"

# The CLI: the table, JSON, and one clear line for an unknown task.
"$CTL" stats | grep -q '^ALLOC  *TASK  *CPU' || fail "taskscopectl stats prints no table"
[[ "$("$CTL" --json stats)" == "[]" ]] || fail "taskscopectl --json stats"
out=$("$CTL" stats a1 web 2>&1) && fail "stats of an unknown task succeeded"
[[ $(wc -l <<<"$out") == 1 && "$out" == *"org.taskscope.Error.NoSuchTask"* ]] || fail "CLI said: $out"
echo "ok: taskscopectl stats: $out"
"$CTL" stats --alloc | grep -q '^ALLOC  *TASKS  *CPU .* SLICE$' || fail "taskscopectl stats --alloc prints no table"
[[ "$("$CTL" --json stats --alloc)" == "[]" ]] || fail "taskscopectl --json stats --alloc"
out=$("$CTL" stats --alloc a1 2>&1) && fail "stats --alloc of an unknown allocation succeeded"
[[ $(wc -l <<<"$out") == 1 && "$out" == *"org.taskscope.Error.NoSuchAllocation"* ]] || fail "CLI said: $out"
echo "ok: taskscopectl stats --alloc: $out"
out=$("$CTL" stats --alloc --watch 2>&1) && fail "stats --alloc --watch succeeded"
[[ "$out" == *"takes no --watch"* ]] || fail "stats --alloc --watch said: $out"
out=$("$CTL" stats --interval 5 2>&1) && fail "--interval 5 succeeded"
[[ "$out" == *InvalidArgument* ]] || fail "CLI --interval 5 said: $out"
echo "ok: taskscopectl stats --interval 5: $out"

# The streamer asked the bus, not the manager, whether the manager runs.
pgrep -f -- "--state-dir $STATE_DIR --shim" >/dev/null && fail "the streamer started the manager"
echo "ok: the manager was not bus-activated by the streamer"
call /org/taskscope/Manager1 org.taskscope.Manager1.ListTasks >/dev/null
for ((i = 0; i < 100; i++)); do
    grep -q "taskscope-manager runs 0 tasks" "$BUS_TMP/streamer.log" && break
    sleep 0.1  # the poll's pace
done
grep -q "taskscope-manager runs 0 tasks" "$BUS_TMP/streamer.log" || fail "the streamer did not list the manager's tasks"
echo "ok: the streamer listed the tasks of the manager once it appeared"
echo "bus stats API: all checks passed"
