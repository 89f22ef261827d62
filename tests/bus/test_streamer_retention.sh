#!/usr/bin/env bash
# What the streamer keeps of a task the manager forgets, on a private bus
# with a stand-in for the manager's task objects (manager_fake.cpp): at its
# start it drops the records (and the logs, with an allocation's last task)
# of tasks the manager no longer has; InterfacesRemoved of a Task1 object
# drops its record at once and the allocation's log directory with the
# last task; a forget while the streamer is down is caught up at its next
# start. And a DefaultIntervalMs set over the bus survives a restart.
source "$(dirname "$0")/lib.sh"
bus_start

S=org.taskscope.Streamer1
P=/org/taskscope/Streamer1
STREAMER="$TASKSCOPE_BUILD_DIR/src/stream/taskscope-streamer"
FAKE="$TASKSCOPE_BUILD_DIR/tests/bus/taskscope-bus-manager-fake"
DONE="$STATE_DIR/streamer/done"
LOGS="$BUS_TMP/logs"
fail() {
    echo "FAIL: $*"
    tail -n 20 "$BUS_TMP/streamer.log" 2>/dev/null
    exit 1
}
bctl() { busctl --address="$BUS_ADDRESS" "$@"; }
on_bus() { bctl list --no-legend 2>/dev/null | grep -q "^$1 "; }
start_streamer() {
    "$STREAMER" --bus-address "$BUS_ADDRESS" --spool-dir "$BUS_TMP/spool" --state-dir "$STATE_DIR/streamer" -v \
        2>>"$BUS_TMP/streamer.log" &
    STREAMER_PID=$!
    wait_for "the streamer to take its name" on_bus $S
}
stop_streamer() {
    kill -KILL "$STREAMER_PID"
    wait "$STREAMER_PID" 2>/dev/null || true
}
# A task whose logs an earlier streamer completed: its record and its files.
done_task() {
    mkdir -p "$DONE" "$LOGS/$1"
    echo "{\"alloc_id\":\"$1\",\"task\":\"$2\",\"log_dir\":\"$LOGS/$1\",\"max_files\":10,\"max_file_size_mb\":10,\"exited\":true}" \
        >"$DONE/$1-$2.scope.json"
    echo "$2" >"$LOGS/$1/$2.stdout.0"
    : >"$LOGS/$1/$2.stderr.0"
}
# The files the streamer keeps for allocation $1: records, the log
# directory and the logs (a task of done_task has 3: record, stdout, stderr).
files_of() { { ls "$DONE" | grep "^$1-" || true; find "$LOGS/$1" 2>/dev/null; } | grep -c . || true; }
gone() { [[ $(files_of "$1") == 0 ]]; }
record_gone() { [[ ! -e "$DONE/$1.json" ]]; }
forget() {
    echo "forget $1" >&"${MANAGER[1]}"
    local reply
    read -r reply <&"${MANAGER[0]}"
    [[ "$reply" == ok ]] || fail "the fake manager said '$reply'"
}

done_task a1 web
done_task a1 db
done_task a2 x
done_task a3 gone
coproc MANAGER { "$FAKE" "$BUS_ADDRESS" a1:web a1:db a2:x; }
read -r line <&"${MANAGER[0]}"
[[ "$line" == ready ]] || fail "the fake manager did not start: $line"

start_streamer
wait_for "the record of a task the manager no longer has to go" gone a3
echo "ok: at start, the record and logs of a task the manager no longer has went ($(files_of a3) files)"
[[ $(files_of a1) == 7 && $(files_of a2) == 4 ]] || fail "records or logs of known tasks went: a1 $(files_of a1), a2 $(files_of a2)"
echo "ok: the manager's tasks kept their records and logs"

forget a1-web.scope
wait_for "the record of a1-web to go" record_gone a1-web.scope
[[ -e "$LOGS/a1/web.stdout.0" ]] || fail "a1's logs went while a1-db remains"
out=$(bctl call $S $P $S ReadLogs ssssxb a1 web stdout start 0 false 2>&1) && fail "a forgotten task's logs were readable"
[[ "$out" == *"no logs are collected"* ]] || fail "ReadLogs of a forgotten task: $out"
echo "ok: forget a1-web: its record went, a1's logs stay for a1-db; ReadLogs: $out"
forget a1-db.scope
wait_for "a1's logs to go with its last task" gone a1
echo "ok: forget a1-db: a1's log directory went ($(files_of a1) files)"

stop_streamer
forget a2-x.scope
[[ $(files_of a2) == 4 ]] || fail "a2's files changed while no streamer ran"
start_streamer
wait_for "a2-x, forgotten while the streamer was down, to go" gone a2
echo "ok: forgotten while the streamer was down: gone at its start ($(files_of a2) files)"

I=org.taskscope.Stats1
bctl set-property $S $P $I DefaultIntervalMs t 2500
stop_streamer
start_streamer
[[ "$(bctl get-property $S $P $I DefaultIntervalMs)" == "t 2500" ]] ||
    fail "DefaultIntervalMs after a restart: $(bctl get-property $S $P $I DefaultIntervalMs)"
echo "ok: DefaultIntervalMs 2500 set over the bus survived kill -9 and a new start"
echo "bus retention: all checks passed"
