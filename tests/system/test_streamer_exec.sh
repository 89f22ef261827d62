#!/usr/bin/env bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# Exec into running tasks (org.taskscope.Exec1, taskscopectl exec) against
# the real systemd and kernel: the command runs in the task's scope (moved
# there by systemd before it runs), as the task's user, with its env and
# cwd, in the task's namespaces; terminals, resizing, exit codes, the
# one-shot deadline and output cap, named errors, the bus policy, and
# sessions hung up when their caller goes. Nothing here differs between
# cgroup v2 and v1: AttachProcessesToUnit works on both.
source "$(dirname "$0")/lib.sh"

S=org.taskscope.Streamer1
SP=/org/taskscope/Streamer1
X=org.taskscope.Exec1
A=ex$$
DIR=/run/$A-dir
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    for t in web uts mnt; do $CTL stop --grace 0 $A $t >/dev/null 2>&1 || true; done
    rm -rf "$DIR" /run/$A-keys
}
trap cleanup EXIT
xcall() { busctl call $S $SP $X "$@"; }
sessions() { busctl get-property $S $SP $X Sessions; }
scope_procs() { in_scope "$A-$1.scope"; }

systemctl start taskscope-streamer
intro=$(busctl introspect $S $SP)
for member in org.taskscope.Exec1 .StartExec .ResizeExec .WaitExec .ExecOnce .ExecExited .Sessions \
    org.taskscope.Streamer1 .ReadLogs; do
    grep -q -- "^$member " <<<"$intro" || fail "introspection of $SP lacks $member: $intro"
done
ok "$SP serves org.taskscope.Exec1 beside org.taskscope.Streamer1"
test -f /usr/share/dbus-1/interfaces/org.taskscope.Exec1.xml || fail "Exec1.xml not installed"

# The bus policy: anyone may look, only root may exec.
setpriv --reuid=nobody --regid=nogroup --clear-groups busctl introspect $S $SP >/dev/null ||
    fail "nobody cannot introspect the streamer"
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups busctl call $S $SP $X ExecOnce 'ssasa{ss}uu' \
    $A web 1 /bin/true 0 1000 10 2>&1) && fail "nobody could ExecOnce"
[[ "$out" == *"ccess denied"* || "$out" == *AccessDenied* ]] || fail "nobody's ExecOnce said: $out"
ok "policy: nobody may introspect, not exec ($out)"

# A task running as nobody, with its own env and working directory.
mkdir -p "$DIR"
echo "task-file" >"$DIR/marker"
chmod 755 "$DIR"
$CTL run --spec '{"user":"nobody","group":"nogroup","cwd":"'"$DIR"'","env":{"GREETING":"hello-from-task"}}' \
    $A web -- /bin/sleep 1000 >/dev/null
task_pid=$(task_field $A web pid)
ok "task $A/web runs as pid $task_pid"

out=$($CTL exec $A web -- sh -c 'cat /proc/self/cgroup; echo "uid=$(id -u) gid=$(id -g) groups=$(id -G)"; pwd; echo "$GREETING"; cat marker')
echo "$out"
grep -q "/nomad.slice/.*/$A-web.scope\$" <<<"$out" || fail "the exec'd process is not in the task's scope"
# Every hierarchy (one on v2; name=systemd and each controller on v1).
task_cgroups=$(cat /proc/"$task_pid"/cgroup)
assert_eq "$(grep -c '^[0-9]*:' <<<"$out")" "$(wc -l <<<"$task_cgroups")" "cgroup lines of the exec'd process"
while read -r line; do
    grep -qxF "$line" <<<"$out" || fail "the exec'd process is not in the task's cgroup $line"
done <<<"$task_cgroups"
ok "the exec'd process is in $A-web.scope, in the same cgroups as the task: $(tr '\n' ' ' <<<"$task_cgroups")"
grep -qx "uid=$(id -u nobody) gid=$(getent group nogroup | cut -d: -f3) groups=$(id -G nobody)" <<<"$out" ||
    fail "not the task's user and groups"
ok "it runs as the task's user, group and groups"
grep -qx "$DIR" <<<"$out" || fail "not in the task's cwd"
grep -qx "hello-from-task" <<<"$out" || fail "not the task's env"
grep -qx "task-file" <<<"$out" || fail "does not see the task's files"
ok "it has the task's cwd, env and files"
assert_eq "$(in_scope taskscope-streamer.service)" 1 "processes in the streamer's own cgroup (its main only)"

rc=0
$CTL exec $A web -- sh -c 'exit 7' || rc=$?
assert_eq "$rc" 7 "exit code of sh -c 'exit 7'"
rc=0
$CTL exec $A web -- sh -c 'kill -TERM $$' || rc=$?
assert_eq "$rc" 143 "exit code of a command killed by SIGTERM"

# Monitors see the exit.
busctl monitor --match "type='signal',interface='$X',member='ExecExited'" --match "$MONITOR_MATCH" >/run/$A-monitor 2>&1 &
pids+=($!)
monitor_sync /run/$A-monitor
rc=0
$CTL exec $A web -- sh -c 'exit 5' || rc=$?
wait_until "ExecExited for exit 5" 100 grep -q 'INT32 5' /run/$A-monitor
ok "ExecExited signalled the exit code: $(grep -m1 -A6 'Member=ExecExited' /run/$A-monitor | tr -s ' \n' ' ')"
kill "${pids[-1]}"

# Terminals.
out=$($CTL exec -t $A web -- tty </dev/null | tr -d '\r')
[[ "$out" == /dev/pts/* ]] || fail "exec -t: tty said '$out'"
ok "exec -t: tty is $out"
assert_eq "$($CTL exec -t $A web -- stty size </dev/null | tr -d '\r')" "24 80" "window without a terminal"

# The CLI on a terminal (script) whose window changes (stty -F gives it
# SIGWINCH), then ResizeExec over the bus for the session Sessions lists.
mkfifo /run/$A-keys
script -qfec "stty rows 20 cols 70; $CTL exec -t $A web -- sh -c 'stty size; read x; stty size; read x; stty size'" \
    /dev/null </run/$A-keys >/run/$A-screen 2>&1 &
pids+=($!)
exec {keys}>/run/$A-keys
wait_until "the session in Sessions" 300 bash -c "busctl get-property $S $SP $X Sessions | grep -q '\"$A\" \"web\" true'"
read -r _ _ id _ <<<"$(sessions)"
ok "Sessions lists session $id: $(sessions)"
wait_until "the first window size" 300 grep -q '20 70' /run/$A-screen
ok "the command's terminal starts at the CLI's window, 20x70"
cli=$(pgrep -n -f "^$CTL exec -t $A web")
stty -F "$(readlink /proc/"$cli"/fd/0)" rows 33 cols 99
# The command's own terminal, to see the resize arrive before it reads the size.
command_tty() { readlink /proc/"$(pgrep -n -f '^sh -c stty size; read x')"/fd/0; }
size_is() { [[ "$(stty -F "$(command_tty)" size 2>/dev/null)" == "$1" ]]; }
wait_until "the resize to reach the command's terminal" 300 size_is "33 99"
printf '\n' >&$keys
wait_until "the size after SIGWINCH" 300 grep -q '33 99' /run/$A-screen
ok "SIGWINCH to taskscopectl resized the command's terminal: stty size says 33 99"
xcall ResizeExec tqq "$id" 44 111
printf '\n' >&$keys
wait_until "the size after ResizeExec" 300 grep -q '44 111' /run/$A-screen
ok "ResizeExec through busctl: stty size says 44 111"
exec {keys}>&-
wait "${pids[-1]}" || fail "taskscopectl exec -t under script failed: $(cat -v /run/$A-screen)"
rm -f /run/$A-keys /run/$A-screen

# One-shot: past the deadline the command's whole process group dies.
before=$(scope_procs web)
rc=0
out=$($CTL exec --timeout 1000 $A web -- sh -c 'sleep 1001 & sleep 1002' 2>&1) || rc=$?
assert_eq "$rc" 124 "exit of exec --timeout past its deadline"
[[ "$out" == *"did not end within 1000 ms"*Timeout* ]] || fail "timeout message: $out"
ok "timeout: $out"
if pgrep -f '^sleep 100[12]$' >/dev/null; then fail "a timed-out process lives: $(pgrep -af '^sleep 100')"; fi
assert_eq "$(scope_procs web)" "$before" "processes in the scope after the timeout (the task's own)"
out=$(busctl call $S $SP $X ExecOnce 'ssasa{ss}uu' $A web 2 sleep 1000 0 500 100 2>&1) && fail "ExecOnce past its deadline succeeded"
[[ "$out" == *"did not end within 500 ms"* ]] || fail "busctl ExecOnce past its deadline: $out"
ok "busctl ExecOnce past its deadline: $out"

# One-shot output, code and cap.
rc=0
out=$($CTL exec --timeout 10000 $A web -- sh -c 'echo out; echo err >&2; exit 3') || rc=$?
assert_eq "$rc" 3 "exec --timeout exit code"
assert_eq "$out" $'out\nerr' "exec --timeout output (stdout and stderr)"
assert_eq "$($CTL exec --timeout 10000 --max-output 100 $A web -- head -c 5000000 /dev/zero 2>/run/$A-err | wc -c)" \
    100 "bytes kept of 5 MB under --max-output 100"
grep -q truncated /run/$A-err || fail "no word of truncation: $(cat /run/$A-err)"
grep -qx 'iiayb 0 0 3 97 98 99 true' <<<"$(busctl call $S $SP $X ExecOnce 'ssasa{ss}uu' $A web 2 echo abcdef 0 10000 3)" ||
    fail "ExecOnce cap over busctl"
ok "ExecOnce returns the first 3 bytes with truncated=true"

# A caller that goes away takes its session with it.
$CTL exec $A web -- sleep 999 &
cli=$!
wait_until "the sleep 999 session" 300 bash -c "pgrep -f '^sleep 999$' >/dev/null"
kill -9 "$cli"
wait "$cli" 2>/dev/null || true
wait_until "the sleep of a gone caller to be hung up" 300 bash -c "! pgrep -f '^sleep 999$'"
ok "the session of a killed taskscopectl was hung up"

# Tasks that do not run, and bad input: named errors, nothing started.
$CTL run --wait $A done -- /bin/true >/dev/null
out=$($CTL exec $A done -- /bin/true 2>&1) && fail "exec into an exited task succeeded"
[[ "$out" == *NotRunning* ]] || fail "exec into an exited task: $out"
ok "exec into an exited task: $out"
out=$($CTL exec nosuch$A task -- /bin/true 2>&1) && fail "exec into an unknown task succeeded"
[[ "$out" == *NoSuchTask* ]] || fail "exec into an unknown task: $out"
ok "exec into an unknown task: $out"
out=$(xcall StartExec 'ssasa{ss}bqq' $A web 0 0 false 0 0 2>&1) && fail "an empty command started"
[[ "$out" == *"command is empty"* ]] || fail "empty command: $out"
out=$(xcall StartExec 'ssasa{ss}bqq' $A web 1 sh 0 true 0 80 2>&1) && fail "rows 0 started"
[[ "$out" == *"out of range"* ]] || fail "rows 0: $out"
rc=0
out=$($CTL exec $A web -- /no/such/binary 2>&1) || rc=$?
assert_eq "$rc" 127 "exit of taskscopectl exec of a missing binary"
[[ "$out" == *NoSuchBinary* ]] || fail "missing binary: $out"
ok "bad input refused: empty command, rows 0, $out"
assert_eq "$(sessions)" "a(tssb) 0" "no session left"

# Namespaces: a task in its own UTS namespace (unshare without --fork
# execs in place, so the task's pid is in it), and one with its own mounts.
$CTL run $A uts -- unshare --uts sh -c 'hostname inner; exec sleep 1000' >/dev/null
uts_pid=$(task_field $A uts pid)
wait_until "the uts task to become sleep" 300 grep -qx sleep /proc/"$uts_pid"/comm
assert_eq "$($CTL exec $A uts -- hostname)" inner "hostname seen by exec in the task's UTS namespace"
[[ "$(hostname)" != inner ]] || fail "the host's name changed"
$CTL run $A mnt -- unshare --mount sh -c 'mount -t tmpfs none /mnt && echo only-in-task >/mnt/f && exec sleep 1000' >/dev/null
mnt_pid=$(task_field $A mnt pid)
wait_until "the mnt task to become sleep" 300 grep -qx sleep /proc/"$mnt_pid"/comm
[[ ! -e /mnt/f ]] || fail "the task's mount leaked to the host"
assert_eq "$($CTL exec $A mnt -- cat /mnt/f)" only-in-task "a file only the task's mount namespace has"
out=$($CTL exec $A mnt -- cat /proc/self/cgroup)
grep -q "/nomad.slice/.*/$A-mnt.scope\$" <<<"$out" || fail "exec into the mnt task is not in its scope: $out"
ok "exec into the mount-namespaced task is in its scope"

for t in web uts mnt; do $CTL stop --grace 0 $A $t >/dev/null || true; done
for t in web uts mnt done; do $CTL forget $A $t >/dev/null || true; done
ok "all exec checks passed"
