#!/usr/bin/env bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# Task lifecycle against the real systemd: scopes, limits, exit codes,
# stop with grace, fork bomb, OOM, bad input, bus policy.
source "$(dirname "$0")/lib.sh"

# Bus activation starts the installed service on the first call.
out=$(mgr StartTask sss a1 web '{"command":"/bin/sleep","args":["300"],"resources":{"memory_mb":64,"cpu_shares":512,"pids_max":50}}')
[[ "$out" == "o \"/org/taskscope/Manager1/task/"* ]] || fail "StartTask said: $out"
ok "StartTask through busctl: $out"
systemctl is-active --quiet taskscope-manager || fail "manager not active after activation"

pid=$(task_field a1 web pid)
assert_eq "$(task_field a1 web state)" running "state"
assert_eq "$(task_field a1 web unit)" a1-web.scope "unit"
# The nested layout (issue 31): the scope sits in its allocation's slice,
# below nomad.slice (share, bucket, allocation).
slice=$(task_field a1 web slice)
assert_eq "$(systemctl show -p Slice --value a1-web.scope)" "$slice" "slice of the scope"
assert_eq "$(task_field a1 web alloc_slice)" "$slice" "alloc_slice"
cg=$(task_field a1 web cgroup)
[[ "$cg" == /nomad.slice/nomad-share.slice/nomad-share-b??.slice/"$slice"/a1-web.scope ]] || fail "cgroup $cg"
ok "cgroup $cg"
grep -q ":$cg\$" /proc/"$pid"/cgroup || fail "pid $pid not in its scope: $(cat /proc/"$pid"/cgroup)"
ok "task pid $pid runs in its scope"
shim=$(ps -o ppid= -p "$pid" | tr -d ' ')
grep -q "/taskscope-shims.scope$" /proc/"$shim"/cgroup || fail "launcher $shim is in $(cat /proc/"$shim"/cgroup)"
assert_eq "$(task_field a1 web shim_pid)" "$shim" "shim_pid"
ok "launcher (shim $shim) is outside the task's cgroup and the manager's, in taskscope-shims.scope"

if [[ "$TASKSCOPE_VARIANT" == v2 ]]; then
    d=/sys/fs/cgroup$cg
    assert_eq "$(cat "$d/memory.max")" 67108864 "memory.max"
    assert_eq "$(cat "$d/memory.swap.max")" 0 "memory.swap.max"
    # Alone in its allocation, the task leaves its weight to the
    # allocation's slice (issue 49): its scope has no cpu controller.
    [[ ! -e "$d/cpu.weight" ]] || fail "a1/web alone has a cpu cgroup: cpu.weight $(cat "$d/cpu.weight")"
    grep -qw cpu "/sys/fs/cgroup${cg%/*}/cgroup.subtree_control" &&
        fail "$slice gives its one task the cpu controller: $(cat "/sys/fs/cgroup${cg%/*}/cgroup.subtree_control")"
    ok "a1/web alone: no cpu cgroup for its scope"
    assert_eq "$(cat "$d/pids.max")" 50 "pids.max"
else
    assert_eq "$(cat /sys/fs/cgroup/memory$cg/memory.limit_in_bytes)" 67108864 "v1 memory.limit_in_bytes"
    assert_eq "$(cat /sys/fs/cgroup/pids$cg/pids.max)" 50 "v1 pids.max"
fi

# The object and its properties, as monitoring sees them.
path=$(task_field a1 web object_path)
assert_eq "$(busctl get-property $I "$path" org.taskscope.Task1 State)" 's "running"' "Task1.State"
assert_eq "$(task_field a1 web cpu_weight)" 20 "a1/web's cpu_weight (shares 512)"
assert_eq "$(task_field a1 web cpu_weight_unit)" "$slice" "a1/web's weight carried by its allocation's slice"
assert_eq "$(busctl get-property $I "$path" org.taskscope.Task1 CPUWeightUnit)" "s \"$slice\"" "Task1.CPUWeightUnit"
busctl call $I $M org.freedesktop.DBus.ObjectManager GetManagedObjects | quiet_grep a1 || fail "ObjectManager"
ok "ObjectManager lists the task"

# Exit codes and signals, through the CLI.
check_exit() {
    local name=$1 want=$2 script=$3 rc=0
    $CTL run --wait a1 "$name" -- /bin/sh -c "$script" || rc=$?
    assert_eq "$rc" "$want" "taskscopectl run --wait exit for '$script'"
}
check_exit zero 0 'exit 0'
check_exit three 3 'exit 3'
check_exit killed 137 'kill -KILL $$'
assert_eq "$(task_field a1 killed signal)" 9 "signal of the killed task"
check_exit termed 143 'kill -TERM $$'
# Those tasks shared a1 with web: its weight went to its scope when the
# first of them started (before that task's first instruction), and stays.
assert_eq "$(task_field a1 web cpu_weight_unit)" a1-web.scope "a1/web's weight once a1 had a second task"
assert_eq "$(busctl get-property $I "$path" org.taskscope.Task1 CPUWeightUnit)" 's "a1-web.scope"' "Task1.CPUWeightUnit"
assert_eq "$(systemctl show -p CPUWeight --value a1-web.scope)" 20 "a1-web.scope's CPUWeight"
if [[ "$TASKSCOPE_VARIANT" == v2 ]]; then
    assert_eq "$(cat "/sys/fs/cgroup$cg/cpu.weight")" 20 "cpu.weight (shares 512) on its scope"
else
    # systemd's v1 scale: weight * 1024 / 100.
    assert_eq "$(cat "/sys/fs/cgroup/cpu$cg/cpu.shares")" 204 "cpu.shares (weight 20) on its scope"
fi

# A task runs as the user its spec names, with its output still collected.
rc=0
$CTL run --wait --spec '{"user":"nobody","group":"nogroup","cwd":"/tmp"}' a1 asuser -- /bin/sh -c 'id -u; id -g; pwd; exit 6' || rc=$?
assert_eq "$rc" 6 "exit of a task running as nobody"
wait_until "asuser's logs to be drained" 300 bash -c '! test -e /run/taskscope/logs/a1-asuser.scope.json'
assert_eq "$($CTL logs a1 asuser | tr '\n' ' ')" "$(id -u nobody) $(getent group nogroup | cut -d: -f3) /tmp " "uid, gid and cwd of the task"

# SignalTask reaches the main process.
$CTL run a1 hup -- /bin/sh -c 'trap "exit 42" HUP; while :; do sleep 0.2; done' >/dev/null  # the task's own loop
$CTL signal a1 hup SIGHUP
rc=0
$CTL wait a1 hup || rc=$?
assert_eq "$rc" 42 "exit of a task after SignalTask SIGHUP"
out=$($CTL signal a1 hup SIGHUP 2>&1) && fail "signalled an exited task"
[[ "$out" == *NotRunning* ]] || fail "signal of an exited task said: $out"

# Stop: SIGTERM then gone; the scope does not outlive the task.
rc=0
out=$($CTL --json stop a1 web) || rc=$?
assert_eq "$rc" 0 "taskscopectl stop's own status"
assert_eq "$(jq -r .exit_code <<<"$out")" 143 "stop of sleep (SIGTERM)"
# Stopping it again is no error: it has exited, and that is printed again.
assert_eq "$($CTL --json stop a1 web | jq -r .exit_code)" 143 "a second stop (exit 0, the same exit)"
wait_until "scope a1-web.scope to go" 100 bash -c '! systemctl is-active --quiet a1-web.scope'
ok "scope gone after stop"

# A task that ignores SIGTERM is killed after its grace period.
$CTL run a1 stubborn -- /bin/sh -c 'trap "" TERM; while :; do sleep 1; done' >/dev/null  # the task's own loop
assert_eq "$($CTL --json stop --grace 500 a1 stubborn | jq -r .exit_code)" 137 "stop of a SIGTERM-ignoring task after grace"

# A fork bomb dies completely, however fast it forks. (It also keeps PID 1
# busy reaping orphans until it is gone.)
$CTL run --spec '{"resources":{"pids_max":300}}' a1 bomb -- \
    /bin/sh -c ': forkbomb; b() { b & b & wait; }; b & exec sleep 1000' >/dev/null
bcg=$(task_field a1 bomb cgroup)
wait_until "the bomb to fill its pids limit" 300 bash -c \
    "[[ \$(cat /sys/fs/cgroup$bcg/pids.current 2>/dev/null || cat /sys/fs/cgroup/pids$bcg/pids.current) -gt 200 ]]"
assert_eq "$($CTL --json stop --grace 0 a1 bomb | jq -r .exit_code)" 137 "exit of the fork bomb's main process"
wait_until "bomb scope to go" 300 bash -c '! systemctl is-active --quiet a1-bomb.scope'
assert_eq "$(in_scope a1-bomb.scope)" 0 "fork bomb survivors"

# A task whose main process exits leaves nothing behind in its scope.
rc=0
$CTL run --wait a1 orphans -- /bin/sh -c ': orphanmaker; sleep 1000 & sleep 1000 & exit 5' || rc=$?
assert_eq "$rc" 5 "exit of a task that left children"
wait_until "orphans scope to go" 300 bash -c '! systemctl is-active --quiet a1-orphans.scope'
assert_eq "$(in_scope a1-orphans.scope)" 0 "processes left by an exited task"

# OOM: a real memory hog over its hard limit is reported as OOM-killed.
rc=0
$CTL run --wait --spec '{"resources":{"memory_mb":32}}' a1 hog -- /usr/bin/tail /dev/zero || rc=$?
assert_eq "$rc" 137 "exit of the memory hog"
assert_eq "$(task_field a1 hog oom_killed)" true "oom_killed"

# Forget drops an exited task; a running one cannot be forgotten.
$CTL forget a1 zero
$CTL status a1 zero 2>/dev/null && fail "forgotten task still there"
$CTL run a1 still -- /bin/sleep 300 >/dev/null
out=$($CTL forget a1 still 2>&1) && fail "forgot a running task"
[[ "$out" == *StillRunning* ]] || fail "forget of a running task said: $out"
ok "forget: $out"
$CTL stop --grace 0 a1 still >/dev/null || true

# The hog's scope failed (OOM) and systemd unloaded it at once
# (CollectMode=inactive-or-failed): forgetting asks nothing of systemd.
[[ -z "$(systemctl list-units --all --no-legend a1-hog.scope)" ]] || fail "the OOM-killed hog's scope is still loaded"
$CTL forget a1 hog

# A scope of a task's name that someone else left failed is reset by the
# start; one still running is a conflict, named, and left running.
# (systemd stops it after a second: result "timeout", and CollectMode's
# default keeps a failed unit loaded.)
{ systemd-run --quiet --scope --unit=a1-leftover.scope -p RuntimeMaxSec=1 /bin/sleep 30 || true; } 2>/dev/null
systemctl is-failed --quiet a1-leftover.scope || fail "a1-leftover.scope was not left failed: $(systemctl is-active a1-leftover.scope)"
$CTL run a1 leftover -- /bin/sleep 300 >/dev/null || fail "a start over a failed scope of its name failed"
assert_eq "$(task_field a1 leftover state)" running "state of a task started over a failed scope"
$CTL stop --grace 0 a1 leftover >/dev/null || true
systemd-run --quiet --scope --unit=a1-busy.scope /bin/sleep 300 &
wait_until "someone else's a1-busy.scope" 30 systemctl is-active --quiet a1-busy.scope
out=$($CTL run a1 busy -- /bin/true 2>&1) && fail "a start over a running scope of its name succeeded"
[[ "$out" == *UnitExists* ]] || fail "a start over a running scope of its name said: $out"
ok "a running scope of the name: $out"
$CTL status a1 busy >/dev/null 2>&1 && fail "the refused start left a task"
systemctl is-active --quiet a1-busy.scope || fail "the refused start touched the running scope"
systemctl stop a1-busy.scope

# Bad input changes nothing; errors are named.
out=$(busctl call $I $M $I StartTask sss a1 bad '{"command":"/bin/true","user":"nosuchuser"}' 2>&1) && fail "unknown user accepted"
ok "unknown user: $out"
out=$(mgr StartTask sss a1 three '{"command":"/bin/true"}' 2>&1) && fail "duplicate accepted"
ok "duplicate: $out"
systemctl list-units --all 'a1-bad.scope' | quiet_grep a1-bad && fail "a refused start left a unit"

# Only root may change anything; anyone may read.
setpriv --reuid=nobody --regid=nogroup --clear-groups busctl call $I $M $I ListTasks >/dev/null \
    || fail "nobody cannot ListTasks"
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups busctl call $I $M $I StartTask sss a1 x '{"command":"/bin/true"}' 2>&1) \
    && fail "nobody could StartTask"
[[ "$out" == *"ccess denied"* || "$out" == *AccessDenied* ]] || fail "nobody's StartTask said: $out"
ok "policy: nobody may read, not start ($out)"

# systemctl daemon-reload changes nothing for running tasks.
$CTL run a1 reload -- /bin/sleep 300 >/dev/null
systemctl daemon-reload
assert_eq "$(task_field a1 reload state)" running "state after daemon-reload"
systemctl is-active --quiet a1-reload.scope || fail "scope inactive after daemon-reload"
$CTL stop --grace 0 a1 reload >/dev/null || true
echo "manager lifecycle: all checks passed"
