#!/usr/bin/env bash
# variants: deb13-v2 (deb12-v2) (deb12-v1)
# No local user but root reads a task's secrets: a task with a planted
# secret in its env (and in its args, marked secret_args) prints it to its
# logs; then, as nobody, every file under every taskscope directory and
# every bus read is searched for it, and every signal sent meanwhile. The
# installed bus policy is checked against the table of
# tests/policy/bus_policy.sh, and an install left with open modes is
# fixed by a restart.
source "$(dirname "$0")/lib.sh"
source "$TASKSCOPE_SRC_DIR/tests/policy/bus_policy.sh"

NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
SECRET="planted-secret-$RANDOM$RANDOM"
DIRS=(/var/lib/taskscope /var/lib/taskscope-streamer /run/taskscope /etc/taskscope)
MON=/run/secrets-monitor.json

systemctl start taskscope-manager taskscope-streamer
busctl monitor --json=short --match type=signal >"$MON" 2>/dev/null &
MONITOR_PID=$!
trap 'kill $MONITOR_PID 2>/dev/null || true' EXIT
monitor_sync "$MON"  # its matches hear the marker already (every signal)

spec=$(jq -cn --arg s "$SECRET" '{command:"/bin/sh",
    args:["-c","echo \"env $DB_PASSWORD\"; echo \"env $DB_PASSWORD\" >&2; echo \"arg $0\"; exec sleep 600", $s],
    secret_args:true, env:{DB_PASSWORD:$s}}')
out=$(mgr StartTask sss sec1 web "$spec")
TASK_PATH=$(awk '{print $2}' <<<"$out" | tr -d '"')
[[ "$TASK_PATH" == /org/taskscope/Manager1/task/* ]] || fail "StartTask said: $out"
ok "task sec1/web started with the secret in env and args: $TASK_PATH"
wait_until "the secret in the task's logs" 300 bash -c "$CTL logs sec1 web 2>/dev/null | grep -qF 'arg $SECRET'"
# grep says 2 when a file goes while it scans (a record's .tmp renamed):
# the count is what matters.
root_files=$(grep -D skip -rlF -- "$SECRET" "${DIRS[@]}" 2>/dev/null | wc -l || true)
((root_files > 0)) || fail "the secret reached no file (root finds none): nothing was proven"
ok "root finds the secret in $root_files files (record, logs)"

# Files: nobody reads none of them.
files=$(find "${DIRS[@]}" 2>/dev/null | wc -l || true)
file_hits=$("${NOBODY[@]}" grep -D skip -rlF -- "$SECRET" "${DIRS[@]}" 2>/dev/null | wc -l || true)
echo "files under taskscope's directories: $files; files nobody reads the secret in: $file_hits"
assert_eq "$file_hits" 0 "secret hits in files read as nobody"
for d in /var/lib/taskscope /var/lib/taskscope-streamer /run/taskscope; do
    assert_eq "$(stat -c %a $d)" 700 "mode of $d"
done
open=$(find /var/lib/taskscope /var/lib/taskscope-streamer /run/taskscope \( -type f -o -type p \) -perm /077 | wc -l)
assert_eq "$open" 0 "files and fifos with any permission for group or others"

# Bus reads: as nobody (and the public ones as root too) no secret.
bus_hits=0
reads=0
read_as() {
    local who=$1 what=$2 out
    shift 2
    local as=()
    [[ $who == nobody ]] && as=("${NOBODY[@]}")
    out=$("${as[@]}" "$@" 2>&1) || fail "$who: $what failed: $out"
    reads=$((reads + 1))
    if grep -qF -- "$SECRET" <<<"$out"; then
        echo "LEAK: $who $what"
        bus_hits=$((bus_hits + 1))
    fi
}
for who in nobody root; do
    read_as $who "Task1.Spec" busctl get-property $I "$TASK_PATH" org.taskscope.Task1 Spec
    read_as $who "Task1 GetAll" busctl call $I "$TASK_PATH" org.freedesktop.DBus.Properties GetAll s org.taskscope.Task1
    read_as $who "GetManagedObjects" busctl call $I $M org.freedesktop.DBus.ObjectManager GetManagedObjects
    read_as $who "ListTasks" busctl call $I $M $I ListTasks
done
read_as nobody "GetTask" busctl call $I $M $I GetTask ss sec1 web
read_as nobody "taskscopectl status" $CTL status sec1 web
out=$("${NOBODY[@]}" busctl call $I $M $I GetTaskSpec ss sec1 web 2>&1) && fail "nobody read GetTaskSpec: $out"
grep -qF -- "$SECRET" <<<"$out" && bus_hits=$((bus_hits + 1))
out=$("${NOBODY[@]}" $CTL logs sec1 web 2>&1) && fail "nobody read the logs: $out"
grep -qF -- "$SECRET" <<<"$out" && bus_hits=$((bus_hits + 1))
echo "bus reads as nobody and root: $reads, plus GetTaskSpec and ReadLogs refused to nobody; secret hits: $bus_hits"
assert_eq "$bus_hits" 0 "secret hits in bus reads"
busctl call $I $M $I GetTaskSpec ss sec1 web | quiet_grep -F -- "$SECRET" || fail "root's GetTaskSpec lacks the secret"
busctl call $I $M $I GetTask ss sec1 web | quiet_grep -F -- "$SECRET" || fail "root's GetTask lacks the secret"
busctl get-property $I "$TASK_PATH" org.taskscope.Task1 Spec | quiet_grep -F '<redacted>' || fail "Spec not redacted"
ok "root reads the whole spec through GetTaskSpec and GetTask; Spec shows <redacted>"

# The installed policy, member by member.
POLICY_BUSCTL=(busctl)
policy_table_complete || fail "the policy table misses members"
policy_check || fail "the installed bus policy differs from the table"

# An install an older version left open is closed again by a restart.
rec=/var/lib/taskscope/tasks/sec1-web.scope.json
chmod 0755 /var/lib/taskscope /var/lib/taskscope/tasks /var/lib/taskscope/exits
chmod 0644 "$rec"
systemctl restart taskscope-manager
mgr ListTasks >/dev/null
assert_eq "$(stat -c %a /var/lib/taskscope)" 700 "state directory after restart"
assert_eq "$(stat -c %a /var/lib/taskscope/tasks)" 700 "tasks directory after restart"
assert_eq "$(stat -c %a "$rec")" 600 "old record after restart"
assert_eq "$(task_field sec1 web state)" running "task re-adopted after the restart"

# Stop, so the monitor sees the exit and the state changes too.
mgr StopTask sssx sec1 web "" 2000 >/dev/null
wait_until "sec1/web to exit" 600 bash -c "[[ \$(busctl --json=short call $I $M $I GetTask ss sec1 web | jq -r '.data[0]' | jq -r .state) == exited ]]"
journal_hits=$(journalctl -q -u taskscope-manager -u taskscope-streamer --no-pager | grep -cF -- "$SECRET" || true)
assert_eq "$journal_hits" 0 "secret hits in the daemons' journal"
# The stop's own signals in the monitor's file (TaskExited, the state
# change to exited), then, by a marker, all the bus routed to it till now.
heard_stop() {
    grep -F '"member":"TaskExited"' "$MON" | quiet_grep -F '"data":["sec1","web",' &&
        grep -F '"member":"TaskStateChanged"' "$MON" | quiet_grep -F '"data":["sec1","web","exited"]'
}
wait_until "the monitor to hear sec1/web's exit" 300 heard_stop
monitor_sync "$MON"
kill $MONITOR_PID 2>/dev/null || true
wait $MONITOR_PID 2>/dev/null || true
signals=$(grep -vF "$MONITOR_MARK" "$MON" | grep -c . || true)
sig_hits=$(grep -cF -- "$SECRET" "$MON" || true)
echo "signals captured during start, restart and stop: $signals; secret hits in signals: $sig_hits"
((signals > 0)) || fail "the monitor captured no signal"
assert_eq "$sig_hits" 0 "secret hits in signals"
mgr ForgetTask ss sec1 web >/dev/null
rm -f "$MON"
echo "secrets: all checks passed (hits: files $file_hits, bus $bus_hits, signals $sig_hits, journal $journal_hits)"
