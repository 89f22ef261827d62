#!/usr/bin/env bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# Whatever systemd does to the manager's unit (systemctl kill -s KILL of
# the whole cgroup, stop, restart), the shims live on in a scope of their
# own: every exit code arrives and every task can still be stopped. A task
# whose shim is killed by hand is never reported ended while its scope has
# processes, and can be stopped.
source "$(dirname "$0")/lib.sh"

# This test starts the manager six times within seconds, the tests before
# it several times too: systemd's default start limit (5 in 10 s) must not
# count those, so the counter is cleared before each kill or restart.
again() { systemctl reset-failed taskscope-manager 2>/dev/null || true; }
cleanup() {
    again
    systemctl start taskscope-manager || true
    for t in long orphan short short2 short3; do
        $CTL stop k1 $t >/dev/null 2>&1 || true
        $CTL forget k1 $t >/dev/null 2>&1 || true
    done
    rm -f /run/k1-go
}
trap cleanup EXIT
again
systemctl start taskscope-manager
STATE=/var/lib/taskscope
HOME_UNIT=taskscope-shims.scope
lost=0

$CTL run k1 long -- /bin/sleep 600 >/dev/null
$CTL run k1 orphan -- /bin/sleep 600 >/dev/null
mkfifo /run/k1-go
$CTL run k1 short -- /bin/sh -c 'read x < /run/k1-go; exit 7' >/dev/null

# Where the shims are: in their own delegated scope, not the manager's.
assert_eq "$(systemctl show -p ActiveState --value $HOME_UNIT)" active "$HOME_UNIT active"
assert_eq "$(systemctl show -p Delegate --value $HOME_UNIT)" yes "$HOME_UNIT delegated"
for t in long orphan short; do
    shim=$(task_field k1 $t shim_pid)
    grep -q "/$HOME_UNIT\$" /proc/$shim/cgroup || fail "shim $shim of k1/$t is not in $HOME_UNIT: $(cat /proc/$shim/cgroup)"
    grep -q "taskscope-manager.service" /proc/$shim/cgroup && fail "shim $shim of k1/$t is still in the manager's cgroup"
done
ok "every shim lives in $HOME_UNIT"
mgr_procs=$(in_scope taskscope-manager.service)
assert_eq "$mgr_procs" 1 "processes in the manager's cgroup (the manager alone)"

# The operator's usual kill: every process of the manager's cgroup.
main=$(systemctl show -p MainPID --value taskscope-manager)
again
systemctl kill -s KILL taskscope-manager
ok "systemctl kill -s KILL taskscope-manager (pid $main)"
echo go >/run/k1-go
wait_until "the short task's exit record" 300 test -e $STATE/exits/k1-short.scope
ok "the short task exited while the manager was down; its shim recorded it"
short_state=$(task_field k1 short state)
[[ "$short_state" == exited ]] || lost=$((lost + 1))
assert_eq "$short_state" exited "short task state after the kill"
assert_eq "$(task_field k1 short exit_code)" 7 "exit code written while the manager was killed"
assert_eq "$(task_field k1 long state)" running "long task after the kill"
[[ "$(systemctl show -p MainPID --value taskscope-manager)" != "$main" ]] || fail "manager not restarted"

# --kill-whom=main and a plain stop and restart spare the shims too.
again
systemctl kill -s KILL --kill-whom=main taskscope-manager
wait_until "the manager back after --kill-whom=main" 300 systemctl is-active -q taskscope-manager
again
systemctl stop taskscope-manager
again
$CTL run k1 short2 -- /bin/sh -c 'exit 9' >/dev/null 2>&1 && true  # activates the manager again
rc=0
$CTL wait k1 short2 || rc=$?
assert_eq "$rc" 9 "exit code of a task started after a stop"
$CTL run k1 short3 -- /bin/sh -c 'read x < /run/k1-go; exit 11' >/dev/null
again
systemctl restart taskscope-manager
echo go >/run/k1-go
rc=0
$CTL wait k1 short3 || rc=$?
assert_eq "$rc" 11 "exit code across systemctl restart"

# A shim killed by hand: the task runs on, is reported running, and can be
# stopped; only once its scope is empty is it reported, as lost.
opid=$(task_field k1 orphan pid)
oshim=$(task_field k1 orphan shim_pid)
kill -9 "$oshim"
wait_until "the shim $oshim to be gone" 100 bash -c "! kill -0 $oshim 2>/dev/null"
# Kept: a quiet window once the shim is gone. The task must not die with it,
# nor be reported ended, for seconds: no event marks that nothing comes (this
# manager is not the shim's parent and logs nothing for it until a restart).
sleep 3
kill -0 "$opid" || fail "the orphaned task died with its shim"
assert_eq "$(task_field k1 orphan state)" running "a task whose shim was killed, while it runs"
# A restart in between changes nothing.
again
systemctl restart taskscope-manager
assert_eq "$(task_field k1 orphan state)" running "the same task after a manager restart"
$CTL stop --no-wait k1 orphan
orphan_ended() { [[ "$(task_field k1 orphan state)" == lost ]]; }
wait_until "the orphaned task reported ended" 200 orphan_ended
kill -0 "$opid" 2>/dev/null && fail "orphaned task pid $opid still alive after stop"
ok "orphaned task stopped: $(task_field k1 orphan lost_reason)"

# Every task can still be stopped after all of that.
assert_eq "$($CTL --json stop k1 long | jq -r .exit_code)" 143 "stop of the long task after three kills of the manager"
echo "exit codes lost: $lost"
assert_eq "$lost" 0 "exit codes lost"
echo "manager unit kill: all checks passed"
