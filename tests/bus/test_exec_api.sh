#!/usr/bin/env bash
# org.taskscope.Exec1 on a private bus, beside org.taskscope.Streamer1 on
# the streamer's object, with the real manager (bus-activated) answering
# for tasks: introspection, and a named error for every kind of bad input,
# with nothing started. There is no systemd here, so no task runs.
source "$(dirname "$0")/lib.sh"
bus_start

S=/org/taskscope/Streamer1
X=org.taskscope.Exec1
CTL="$TASKSCOPE_BUILD_DIR/src/cli/taskscopectl"

mkdir -p "$STATE_DIR/streamer" "$BUS_TMP/streamer-spool"
"$TASKSCOPE_BUILD_DIR/src/stream/taskscope-streamer" --bus-address "$BUS_ADDRESS" \
    --spool-dir "$BUS_TMP/streamer-spool" --state-dir "$STATE_DIR/streamer" -v 2>"$BUS_TMP/streamer.log" &
STREAMER_PID=$!
trap 'kill $STREAMER_PID 2>/dev/null || true; bus_cleanup' EXIT
for ((i = 0; i < 100; i++)); do
    busctl --address="$BUS_ADDRESS" status org.taskscope.Streamer1 >/dev/null 2>&1 && break
    sleep 0.1  # the poll's pace
done

xcall() {
    local out
    if out=$(dbus-send --bus="$BUS_ADDRESS" --print-reply --dest=org.taskscope.Streamer1 $S "$@" 2>&1); then
        printf '%s\n' "$out"
    else
        printf 'ERROR %s\n' "${out#Error }"
    fi
}
x_error() {
    local want=$1
    shift
    local got
    got=$(xcall "$@")
    [[ "$got" == "ERROR $want:"* ]] || { echo "FAIL: expected $want from $*, got: $got"; exit 1; }
    echo "ok: $want (${got#ERROR $want: })"
}

intro=$(busctl --address="$BUS_ADDRESS" introspect org.taskscope.Streamer1 $S)
for member in org.taskscope.Exec1 StartExec ResizeExec WaitExec ExecOnce ExecExited \
    org.taskscope.Streamer1 ReadLogs LogsComplete; do
    grep -q "$member" <<<"$intro" || { echo "FAIL: introspection lacks $member"; echo "$intro"; exit 1; }
done
echo "ok: $S introspects with both org.taskscope.Exec1 and org.taskscope.Streamer1"

# dbus-send cannot build a{ss}; busctl can, and names the error the same way.
bcall() { busctl --address="$BUS_ADDRESS" call org.taskscope.Streamer1 $S $X "$@" 2>&1; }
b_error() {
    local want=$1 out
    shift
    if out=$(bcall "$@"); then echo "FAIL: $* succeeded: $out"; exit 1; fi
    # busctl prints only the message; the name comes from the verbose log.
    out=$(SYSTEMD_LOG_LEVEL=debug busctl --address="$BUS_ADDRESS" call org.taskscope.Streamer1 $S $X "$@" 2>&1 || true)
    grep -q "org.taskscope.Error.$want" <<<"$out" || { echo "FAIL: expected $want from $*, got: $out"; exit 1; }
    echo "ok: $want from $1"
}

b_error NoSuchTask StartExec ssasa{ss}bqq nosuch task 1 /bin/true 0 false 0 0
b_error NoSuchTask ExecOnce ssasa{ss}uu nosuch task 1 /bin/true 0 1000 100
b_error InvalidArgument StartExec ssasa{ss}bqq a1 web 0 0 false 0 0
b_error InvalidArgument StartExec ssasa{ss}bqq a1 web 1 "" 0 false 0 0
b_error InvalidArgument StartExec ssasa{ss}bqq a1 web 1 /bin/sh 0 true 0 80
b_error InvalidArgument StartExec ssasa{ss}bqq a1 web 1 /bin/sh 0 true 24 5000
b_error InvalidArgument StartExec ssasa{ss}bqq a1 web 1 /bin/sh 1 "A=B" x false 0 0
b_error InvalidArgument ExecOnce ssasa{ss}uu a1 web 1 /bin/true 0 0 100
b_error InvalidArgument ExecOnce ssasa{ss}uu a1 web 1 /bin/true 0 1000 999999999
b_error NoSuchSession ResizeExec tqq 42 24 80
b_error InvalidArgument ResizeExec tqq 42 0 80
b_error NoSuchSession WaitExec t 42

out=$("$CTL" exec nosuch task -- /bin/true 2>&1) && { echo "FAIL: exec into an unknown task succeeded"; exit 1; }
[[ "$out" == *NoSuchTask* ]] || { echo "FAIL: CLI said: $out"; exit 1; }
echo "ok: taskscopectl exec into an unknown task: $out"
out=$("$CTL" exec --timeout 1000 nosuch task -- /bin/true 2>&1) && { echo "FAIL: exec --timeout into an unknown task succeeded"; exit 1; }
[[ "$out" == *NoSuchTask* ]] || { echo "FAIL: CLI said: $out"; exit 1; }
echo "ok: taskscopectl exec --timeout into an unknown task: $out"

kill -0 $STREAMER_PID || { echo "FAIL: the streamer died"; cat "$BUS_TMP/streamer.log"; exit 1; }
echo "bus Exec1 API: all checks passed"
