#!/usr/bin/env bash
# Secrets and the bus policy on a private bus with the project's own policy
# files: a task's env values reach root only (GetTaskSpec, GetTask as root);
# GetTask for others, Task1.Spec, GetManagedObjects and the signals carry
# the redacted spec; and the policy table (tests/policy/bus_policy.sh)
# holds for root and nobody. There is no systemd on this bus, so the task
# is a record left by an earlier manager (reported lost at recovery).
source "$(dirname "$0")/lib.sh"
source "$TASKSCOPE_SRC_DIR/tests/policy/bus_policy.sh"

fail() { echo "FAIL: $*"; [[ -f "$BUS_TMP/streamer.log" ]] && tail -n 20 "$BUS_TMP/streamer.log"; exit 1; }
SECRET="planted-secret-$RANDOM$RANDOM"

# nobody must reach the socket; the policy decides the rest.
chmod 0755 "$BUS_TMP"
BUS_EXTRA_CONFIG="  <policy context=\"default\"><allow user=\"*\"/></policy>
  <include>$TASKSCOPE_SRC_DIR/dbus/org.taskscope.Manager1.conf</include>
  <include>$TASKSCOPE_SRC_DIR/dbus/org.taskscope.Streamer1.conf</include>"
mkdir -p "$STATE_DIR/tasks"
spec=$(jq -cn --arg s "$SECRET" '{command:"/bin/sleep",args:["600"],env:{DB_PASSWORD:$s,PATH:"/usr/bin"}}')
jq -n --arg spec "$spec" '{alloc_id:"s1",task:"web",unit:"s1-web.scope",spec:$spec,state:"running",pid:0,
    shim_pid:0,cgroup:"",cpus:"",reserved_cores:false,started_at_us:1,exit_code:0,signal:0,oom_killed:false,
    finished_at_us:0,exit_reported:false}' >"$STATE_DIR/tasks/s1-web.scope.json"
chmod 0644 "$STATE_DIR/tasks/s1-web.scope.json"  # as an older version wrote it
bus_start

B=(busctl --address="$BUS_ADDRESS")
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
"${B[@]}" monitor --json=short >"$BUS_TMP/monitor.json" 2>/dev/null &
MONITOR_PID=$!
trap 'kill $MONITOR_PID 2>/dev/null || true; bus_cleanup' EXIT
monitor_sync "$BUS_TMP/monitor.json"  # no match: it hears the marker too

# Activation, as nobody: the first call starts the manager.
"${NOBODY[@]}" "${B[@]}" call $MGR /org/taskscope/Manager1 $MGR ListTasks >/dev/null || fail "nobody cannot ListTasks"
TASK_PATH=$("${B[@]}" --json=short call $MGR /org/taskscope/Manager1 $MGR GetTask ss s1 web | jq -r '.data[0]' |
    jq -r .object_path)
[[ "$TASK_PATH" == /org/taskscope/Manager1/task/* ]] || fail "GetTask has no object path: $TASK_PATH"
echo "ok: the planted task is $TASK_PATH"

# Root sees everything through the root-only calls.
"${B[@]}" call $MGR /org/taskscope/Manager1 $MGR GetTaskSpec ss s1 web | grep -qF "$SECRET" ||
    fail "GetTaskSpec as root lacks the secret"
"${B[@]}" call $MGR /org/taskscope/Manager1 $MGR GetTask ss s1 web | grep -qF "$SECRET" ||
    fail "GetTask as root lacks the secret"
echo "ok: root reads the env through GetTaskSpec and GetTask"

# Every read open to others, as root and as nobody: no secret, the marker in its place.
hits=0
reads=0
check_read() {
    local who=$1 what=$2 out
    shift 2
    out=$("$@" 2>&1) || fail "$who: $what failed: $out"
    reads=$((reads + 1))
    if grep -qF "$SECRET" <<<"$out"; then
        echo "LEAK: $who $what"
        hits=$((hits + 1))
    fi
    grep -qF '<redacted>' <<<"$out" || fail "$who: $what shows no redacted spec: $out"
}
for who in root nobody; do
    as=()
    [[ $who == nobody ]] && as=("${NOBODY[@]}")
    check_read $who "Task1.Spec" "${as[@]}" "${B[@]}" get-property $MGR "$TASK_PATH" org.taskscope.Task1 Spec
    check_read $who "Task1 GetAll" "${as[@]}" "${B[@]}" call $MGR "$TASK_PATH" org.freedesktop.DBus.Properties GetAll s \
        org.taskscope.Task1
    check_read $who "GetManagedObjects" "${as[@]}" "${B[@]}" call $MGR /org/taskscope/Manager1 \
        org.freedesktop.DBus.ObjectManager GetManagedObjects
done
check_read nobody "GetTask" "${NOBODY[@]}" "${B[@]}" call $MGR /org/taskscope/Manager1 $MGR GetTask ss s1 web
out=$("${NOBODY[@]}" "${B[@]}" call $MGR /org/taskscope/Manager1 $MGR GetTaskSpec ss s1 web 2>&1) &&
    fail "nobody read GetTaskSpec: $out"
grep -qF "$SECRET" <<<"$out" && fail "nobody's refused GetTaskSpec still shows the secret"
echo "ok: $reads reads open to others, secret hits: $hits"
((hits == 0)) || fail "$hits reads leaked the secret"

# The files: private modes, the old record's mode fixed at start.
open_files=$(find "$STATE_DIR" -path "$STATE_DIR/streamer" -prune -o \( -type f -perm /077 -print \))
[[ -z "$open_files" ]] || fail "files readable by others: $open_files"
for d in tasks exits logs; do
    [[ $(stat -c %a "$STATE_DIR/$d") == 700 ]] || fail "$STATE_DIR/$d has mode $(stat -c %a "$STATE_DIR/$d")"
done
[[ $(stat -c %a "$BUS_TMP/spool") == 700 ]] || fail "the spool has mode $(stat -c %a "$BUS_TMP/spool")"
echo "ok: state files 0600, directories 0700 (the planted 0644 record fixed)"

# The streamer beside it, for the policy table's Streamer1, Stats1 and Exec1 rows.
"$TASKSCOPE_BUILD_DIR/src/stream/taskscope-streamer" --bus-address "$BUS_ADDRESS" --spool-dir "$BUS_TMP/spool" \
    --state-dir "$STATE_DIR/streamer" -v 2>"$BUS_TMP/streamer.log" &
for ((i = 0; i < 100; i++)); do
    "${B[@]}" list --no-legend 2>/dev/null | grep -q "^$STR " && break
    sleep 0.1  # the poll's pace
done
"${B[@]}" list --no-legend | grep -q "^$STR " || fail "the streamer did not take its name"

POLICY_BUSCTL=("${B[@]}")
policy_table_complete || fail "the policy table misses members"
echo "ok: the policy table names every method and property of dbus/org.taskscope.*.xml"
policy_check || fail "the private bus's policy differs from the table"

# Signals seen meanwhile (the lost task's TaskExited, PropertiesChanged, ...).
kill $MONITOR_PID 2>/dev/null || true
wait $MONITOR_PID 2>/dev/null || true
signals=$(jq -c --arg mark "$MONITOR_MARK" 'select(.type == "signal" and .interface != $mark)' "$BUS_TMP/monitor.json" | wc -l)
leaks=$(grep -cF "$SECRET" "$BUS_TMP/monitor.json" || true)
# The monitor also sees root's own GetTaskSpec reply; signals alone must be clean.
sig_leaks=$(jq -c 'select(.type == "signal")' "$BUS_TMP/monitor.json" | grep -cF "$SECRET" || true)
echo "ok: $signals signals captured, secret hits in signals: $sig_leaks (in all traffic incl. root's replies: $leaks)"
((sig_leaks == 0)) || fail "a signal carried the secret"
((signals > 0)) || fail "no signal captured"
echo "bus secrets: all checks passed"
