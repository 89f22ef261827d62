#!/usr/bin/env bash
# The manager's systemd client against a stand-in systemd (systemd_fake.cpp)
# whose jobs end in a chosen order: a JobRemoved that arrives before the
# reply to StartTransientUnit must still complete the start (interest is
# registered before the call), the usual order too, and a failed job
# leaves nothing behind. No cgroups: the fake only keeps books.
source "$(dirname "$0")/lib.sh"
bus_start

M=/org/taskscope/Manager1
I=org.taskscope.Manager1
FAKE_PID=""

fake() {
    [[ -n "$FAKE_PID" ]] && { kill "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null || true; }
    exec {fake_fd}< <("$TASKSCOPE_BUILD_DIR/tests/bus/taskscope-bus-systemd-fake" "$BUS_ADDRESS" "$1" \
        2>>"$BUS_TMP/fake.log" & echo "pid $!")
    read -r line <&"$fake_fd"
    FAKE_PID=${line#pid }
    read -r line <&"$fake_fd"
    [[ "$line" == ready ]] || { echo "FAIL: fake systemd said '$line'"; cat "$BUS_TMP/fake.log"; exit 1; }
}
stop_fake() { [[ -n "$FAKE_PID" ]] && kill "$FAKE_PID" 2>/dev/null || true; }
trap 'stop_fake; bus_cleanup' EXIT

field() {
    busctl --address="$BUS_ADDRESS" --json=short call $I $M $I GetTask ss "$1" "$2" | jq -r ".data[0] | fromjson | .$3"
}
spec='string:{"command":"/bin/sleep","args":["300"],"logs":false}'

# Started before the manager: it asks systemd's version when it starts.
fake removed-before-reply
grep -q 'array \[' <<<"$(call $M $I.ListTasks)" || { echo "FAIL: ListTasks"; exit 1; }

t0=$(date +%s%N)
out=$(call $M $I.StartTask string:a1 string:early "$spec")
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[[ "$out" == *"object path"* ]] || { echo "FAIL: start with JobRemoved before the reply: $out"; exit 1; }
(( ms < 10000 )) || { echo "FAIL: start with JobRemoved before the reply took $ms ms (a job wait timed out?)"; exit 1; }
[[ "$(field a1 early state)" == running ]] || { echo "FAIL: a1/early is $(field a1 early state)"; exit 1; }
echo "ok: JobRemoved before the reply: started in $ms ms"

# The task ends: its shim's record is collected, and TaskExited says so.
fail() { echo "FAIL: $*"; exit 1; }
busctl --address="$BUS_ADDRESS" monitor --match "type='signal',interface='$I',member='TaskExited'" \
    --match "$MONITOR_MATCH" >"$BUS_TMP/exits.monitor" 2>/dev/null &
monitor=$!
monitor_sync "$BUS_TMP/exits.monitor"
pid=$(field a1 early pid)
kill -KILL "$pid"
wait_signal "TaskExited of a1/early" "$BUS_TMP/exits.monitor" 'STRING "early";'
kill $monitor 2>/dev/null || true
[[ "$(field a1 early state)" == exited && "$(field a1 early signal)" == 9 ]] ||
    { echo "FAIL: a1/early after SIGKILL: $(field a1 early state), signal $(field a1 early signal)"; exit 1; }
echo "ok: its exit is collected (signal 9)"

fake removed-after-reply
out=$(call $M $I.StartTask string:a1 string:usual "$spec")
[[ "$out" == *"object path"* ]] || { echo "FAIL: start in the usual order: $out"; exit 1; }
echo "ok: JobRemoved after the reply"
kill -KILL "$(field a1 usual pid)"

# systemd busy with two starts: the manager answers reads at once, shows
# both tasks starting, and each start answers when its job ends.
fake held
mgr_async() { dbus-send --bus="$BUS_ADDRESS" --print-reply --reply-timeout=20000 --dest=$I $M $I.StartTask "$@" \
    >"$BUS_TMP/start.$2.out" 2>&1; }
mgr_async string:a2 string:one "$spec" &
one=$!
mgr_async string:a2 string:two "$spec" &
two=$!
for ((i = 0; i < 100; i++)); do [[ "$(field a2 two state 2>/dev/null)" == starting ]] && break; sleep 0.05; done  # bounded poll; the sleep is its pace
worst=0
for ((i = 0; i < 20; i++)); do
    t0=$(date +%s%N)
    call $M $I.ListTasks >/dev/null
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    (( ms > worst )) && worst=$ms
done
[[ "$(field a2 one state)" == starting && "$(field a2 two state)" == starting ]] ||
    { echo "FAIL: while systemd works: a2/one $(field a2 one state), a2/two $(field a2 two state)"; exit 1; }
(( worst < 1000 )) || { echo "FAIL: ListTasks took $worst ms while starts waited for systemd"; exit 1; }
echo "ok: two starts wait for systemd; 20 ListTasks meanwhile, the slowest ${worst} ms (busctl included)"
busctl --address="$BUS_ADDRESS" call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.taskscope.Test1 FinishJobs >/dev/null
wait $one $two || { echo "FAIL: held starts: $(cat "$BUS_TMP"/start.*.out)"; exit 1; }
[[ "$(field a2 one state)" == running && "$(field a2 two state)" == running ]] || { echo "FAIL: held starts did not run"; exit 1; }
echo "ok: both started when their jobs ended"
kill -KILL "$(field a2 one pid)" "$(field a2 two pid)"

# Many calls at once, as a scheduler retrying sends them: ten starts of one
# task while systemd holds its job. One wins and waits for the job; the
# other nine are refused at once with TaskExists and change nothing.
for ((k = 0; k < 10; k++)); do
    dbus-send --bus="$BUS_ADDRESS" --print-reply --reply-timeout=20000 --dest=$I $M $I.StartTask \
        string:a3 string:same "$spec" >"$BUS_TMP/same.$k.out" 2>&1 &
    same[k]=$!
done
refused=0
for ((i = 0; i < 100; i++)); do
    refused=$(cat "$BUS_TMP"/same.*.out 2>/dev/null | grep -c "org.taskscope.Error.TaskExists" || true)
    ((refused == 9)) && break
    sleep 0.05  # the poll's pace
done
((refused == 9)) || { echo "FAIL: $refused of 9 extra starts refused: $(cat "$BUS_TMP"/same.*.out)"; exit 1; }
[[ "$(field a3 same state)" == starting ]] || { echo "FAIL: a3/same is $(field a3 same state)"; exit 1; }
busctl --address="$BUS_ADDRESS" call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.taskscope.Test1 FinishJobs >/dev/null
for k in "${same[@]}"; do wait "$k" || true; done
won=$(cat "$BUS_TMP"/same.*.out | grep -c "object path" || true)
((won == 1)) || { echo "FAIL: $won starts of a3/same answered with a task"; exit 1; }
[[ "$(field a3 same state)" == running ]] || { echo "FAIL: a3/same did not run"; exit 1; }
echo "ok: ten starts of one task at once: one task, nine TaskExists while its job was held"
kill -KILL "$(field a3 same pid)"

fake failed
expect_error org.taskscope.Error.SystemdFailed $M $I.StartTask string:a1 string:broken "$spec"
expect_error org.taskscope.Error.NoSuchTask $M $I.GetTask string:a1 string:broken
[[ -e "$STATE_DIR/tasks/a1-broken.scope.json" ]] && { echo "FAIL: a failed job left a record"; exit 1; }
echo "ok: a failed job leaves no task and no record"
echo "manager jobs: all checks passed"
