#!/usr/bin/env bash
# Exec sessions through the real streamer and taskscopectl on a private
# bus, with the manager and systemd stood in for (exec_fakes.cpp): the
# "task" is a local sleep, and nothing is moved between cgroups. Proves
# the API's plumbing (fds passed, exit codes, resize, the one-shot deadline
# and cap, sessions ending with their caller); what systemd and the
# kernel do is for tests/system/test_streamer_exec.sh.
source "$(dirname "$0")/lib.sh"
bus_start

S=/org/taskscope/Streamer1
X=org.taskscope.Exec1
CTL="$TASKSCOPE_BUILD_DIR/src/cli/taskscopectl"
fail() { echo "FAIL: $*"; exit 1; }
ok() { echo "ok: $*"; }
assert_eq() { [[ "$1" == "$2" ]] || fail "$3: got '$1', want '$2'"; ok "$3 = $2"; }

pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    bus_cleanup
}
trap cleanup EXIT

sleep 1000 &
TASK_PID=$!
pids+=($TASK_PID)
# The task's process spec as the manager saves it: our identity, cwd /tmp.
printf '%s\0' --uid "$(id -u)" --gid "$(id -g)" --cwd /tmp >"$BUS_TMP/process-spec"
exec {fakes_fd}< <("$TASKSCOPE_BUILD_DIR/tests/bus/taskscope-bus-exec-fakes" "$BUS_ADDRESS" a1 web $TASK_PID \
    "$BUS_TMP/attached" "$BUS_TMP/process-spec" 2>"$BUS_TMP/fakes.log" & echo "pid $!")
read -r line <&"$fakes_fd"
pids+=(${line#pid })
read -r line <&"$fakes_fd"
[[ "$line" == ready ]] || fail "the fakes did not start: $(cat "$BUS_TMP/fakes.log")"

mkdir -p "$STATE_DIR/streamer" "$BUS_TMP/streamer-spool"
"$TASKSCOPE_BUILD_DIR/src/stream/taskscope-streamer" --bus-address "$BUS_ADDRESS" --max-exec-sessions 4 \
    --shim "$TASKSCOPE_BUILD_DIR/src/shim/bin/taskscope-shim" \
    --spool-dir "$BUS_TMP/streamer-spool" --state-dir "$STATE_DIR/streamer" -v 2>"$BUS_TMP/streamer.log" &
STREAMER_PID=$!
pids+=($STREAMER_PID)
for ((i = 0; i < 100; i++)); do
    busctl --address="$BUS_ADDRESS" status org.taskscope.Streamer1 >/dev/null 2>&1 && break
    sleep 0.1  # the poll's pace
done

set +e
out=$("$CTL" exec a1 web -- sh -c 'echo $FROM_TASK; pwd; echo err >&2; exit 7' 2>"$BUS_TMP/err")
rc=$?
set -e
assert_eq "$rc" 7 "exit code through exec"
assert_eq "$out" $'yes\n/tmp' "the task's env and cwd"
assert_eq "$(cat "$BUS_TMP/err")" err "stderr apart"
grep -q '^a1-web.scope [0-9]*$' "$BUS_TMP/attached" || fail "no AttachProcessesToUnit: $(cat "$BUS_TMP/attached")"
ok "the child was handed to systemd for a1-web.scope"

assert_eq "$("$CTL" exec a1 web echo -n no dashes)" "no dashes" "a command without --"
assert_eq "$("$CTL" exec -i a1 web -- echo -t -i x)" "-t -i x" "options after -- are the command's"
set +e
"$CTL" exec a1 web -- sh -c 'kill -KILL $$'
rc=$?
set -e
assert_eq "$rc" 137 "killed by SIGKILL: 128+9"

assert_eq "$(echo hello | "$CTL" exec -i a1 web -- cat)" hello "-i relays stdin"
assert_eq "$(echo hello | "$CTL" exec a1 web -- cat)" "" "without -i the command reads end of file"
assert_eq "$(head -c 3000000 /dev/zero | "$CTL" exec -i a1 web -- wc -c)" 3000000 "3 MB through stdin"

out=$("$CTL" exec -t a1 web -- tty </dev/null | tr -d '\r')
[[ "$out" == /dev/pts/* ]] || fail "exec -t: tty said '$out'"
ok "exec -t without a terminal: tty is $out"
assert_eq "$("$CTL" exec -t a1 web -- stty size </dev/null | tr -d '\r')" "24 80" "default window"
assert_eq "$(LINES=30 COLUMNS=100 "$CTL" exec -t a1 web -- stty size </dev/null | tr -d '\r')" "30 100" \
    "window from LINES and COLUMNS"
assert_eq "$(printf 'abc\n' | "$CTL" exec -t a1 web -- sh -c 'read x; echo got-$x' | tr -d '\r' | tail -n1)" \
    got-abc "-t relays stdin into the terminal"

# A terminal for the CLI (script), its window changed from outside (stty -F
# sends it SIGWINCH), and the session resized over the bus directly.
mkfifo "$BUS_TMP/keys"
script -qfec "stty rows 20 cols 70; $CTL exec -t a1 web -- sh -c 'stty size; read x; stty size; read x; stty size'" \
    /dev/null <"$BUS_TMP/keys" >"$BUS_TMP/screen" 2>&1 &
pids+=($!)
exec {keys}>"$BUS_TMP/keys"
sessions() { busctl --address="$BUS_ADDRESS" get-property org.taskscope.Streamer1 $S $X Sessions; }
for ((i = 0; i < 100; i++)); do [[ "$(sessions)" == 'a(tssb) 1 '* ]] && break; sleep 0.1; done  # bounded poll; the sleep is its pace
read -r _ _ id _ <<<"$(sessions)"
[[ "$id" =~ ^[0-9]+$ ]] || fail "no running session in Sessions: $(sessions)"
ok "Sessions lists the running session $id: $(sessions)"
for ((i = 0; i < 100; i++)); do grep -q '20 70' "$BUS_TMP/screen" && break; sleep 0.1; done  # bounded poll; the sleep is its pace
grep -q '20 70' "$BUS_TMP/screen" || fail "the CLI's window was not the command's: $(cat -v "$BUS_TMP/screen")"
ok "the command's terminal starts with the CLI's window (20 70)"
cli=$(pgrep -f -n "^$CTL exec -t a1 web")
stty -F "$(readlink /proc/$cli/fd/0)" rows 33 cols 99
# The command's own terminal, to see the resize arrive before it reads the size.
command_tty() { readlink /proc/"$(pgrep -n -f '^sh -c stty size; read x')"/fd/0; }
for ((i = 0; i < 100; i++)); do [[ "$(stty -F "$(command_tty)" size 2>/dev/null)" == "33 99" ]] && break; sleep 0.1; done  # bounded poll; the sleep is its pace
printf '\n' >&$keys
for ((i = 0; i < 100; i++)); do grep -q '33 99' "$BUS_TMP/screen" && break; sleep 0.1; done  # bounded poll; the sleep is its pace
grep -q '33 99' "$BUS_TMP/screen" || fail "SIGWINCH did not resize: $(cat -v "$BUS_TMP/screen")"
ok "the CLI's SIGWINCH resized the command's terminal (33 99)"
busctl --address="$BUS_ADDRESS" call org.taskscope.Streamer1 $S $X ResizeExec tqq "$id" 44 111
printf '\n' >&$keys
for ((i = 0; i < 100; i++)); do grep -q '44 111' "$BUS_TMP/screen" && break; sleep 0.1; done  # bounded poll; the sleep is its pace
grep -q '44 111' "$BUS_TMP/screen" || fail "ResizeExec did not resize: $(cat -v "$BUS_TMP/screen")"
ok "ResizeExec over the bus resized it (44 111)"
exec {keys}>&-
wait "${pids[-1]}" || fail "script/taskscopectl failed"
assert_eq "$(sessions)" "a(tssb) 0" "no session left"

# One-shot: output and code, the cap, the deadline.
assert_eq "$("$CTL" exec --timeout 5000 a1 web -- sh -c 'echo out; echo err >&2; exit 3'; echo "rc=$?")" \
    $'out\nerr\nrc=3' "exec --timeout: output and code"
out=$("$CTL" exec --timeout 5000 --max-output 5 a1 web -- head -c 2000000 /dev/zero 2>"$BUS_TMP/err" | wc -c)
assert_eq "$out" 5 "output capped"
grep -q truncated "$BUS_TMP/err" || fail "no word of the truncation: $(cat "$BUS_TMP/err")"
out=$(busctl --address="$BUS_ADDRESS" call org.taskscope.Streamer1 $S $X ExecOnce ssasa{ss}uu a1 web 2 echo 0123456789 0 5000 4)
assert_eq "$out" "iiayb 0 0 4 48 49 50 51 true" "ExecOnce over busctl: the first 4 bytes, truncated"
set +e
start=$(date +%s%N)
out=$("$CTL" exec --timeout 300 a1 web -- sh -c 'echo $$ >'"$BUS_TMP/victim"'; sleep 1000' 2>&1)
rc=$?
set -e
assert_eq "$rc" 124 "past the deadline: exit 124"
[[ "$out" == *"did not end within 300 ms"* ]] || fail "timeout message: $out"
(($(date +%s%N) - start < 5000000000)) || fail "the timeout took more than 5 s"
victim=$(cat "$BUS_TMP/victim")
if kill -0 "$victim" 2>/dev/null && ! grep -q '^State:.Z' /proc/$victim/status; then fail "the timed-out command $victim lives"; fi
ok "the timed-out command was killed"

# The limit, and sessions that end with their caller.
for i in 1 2 3 4; do
    "$CTL" exec a1 web -- sleep 1000 &
    pids+=($!)
done
for ((i = 0; i < 100; i++)); do [[ "$(sessions)" == 'a(tssb) 4 '* ]] && break; sleep 0.1; done  # bounded poll; the sleep is its pace
out=$("$CTL" exec a1 web -- true 2>&1) && fail "a fifth session started"
[[ "$out" == *Busy* ]] || fail "fifth session: $out"
ok "a fifth session is refused: $out"
for p in "${pids[@]: -4}"; do kill "$p"; done
for ((i = 0; i < 100; i++)); do [[ "$(sessions)" == 'a(tssb) 0' ]] && break; sleep 0.1; done  # bounded poll; the sleep is its pace
assert_eq "$(sessions)" "a(tssb) 0" "sessions whose callers left are gone"
pgrep -f '^sleep 1000$' -P $STREAMER_PID && fail "a hung-up sleep lives on"
ok "their commands were hung up"

kill -0 $STREAMER_PID || { cat "$BUS_TMP/streamer.log"; fail "the streamer died"; }
echo "bus exec sessions: all checks passed"
