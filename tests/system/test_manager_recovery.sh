#!/usr/bin/env bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# No exit code is lost when the manager is killed -9 or restarted while
# tasks run and exit; running tasks are re-adopted.
source "$(dirname "$0")/lib.sh"

systemctl start taskscope-manager
STATE=/var/lib/taskscope

$CTL run r1 long -- /bin/sleep 600 >/dev/null
# The short task waits on a fifo we control, so it exits exactly while the
# manager is down.
mkfifo /run/r1-go
$CTL run r1 short -- /bin/sh -c 'read x < /run/r1-go; exit 7' >/dev/null

main=$(systemctl show -p MainPID --value taskscope-manager)
kill -9 "$main"
ok "killed manager pid $main with SIGKILL"
echo go >/run/r1-go
wait_until "the short task's exit record" 300 test -e $STATE/exits/r1-short.scope
ok "short task exited while the manager was down"

# Any call activates the manager again (systemd also restarts it).
assert_eq "$(task_field r1 short state)" exited "state after restart"
assert_eq "$(task_field r1 short exit_code)" 7 "exit code recorded while down"
assert_eq "$(task_field r1 long state)" running "long task re-adopted"
[[ "$(systemctl show -p MainPID --value taskscope-manager)" != "$main" ]] || fail "manager not restarted"

# systemctl restart keeps tasks too, and stop still works on adopted tasks.
$CTL run r1 short2 -- /bin/sh -c 'read x < /run/r1-go; exit 9' >/dev/null
systemctl restart taskscope-manager
echo go >/run/r1-go
rc=0
$CTL wait r1 short2 || rc=$?
assert_eq "$rc" 9 "exit code across systemctl restart"
assert_eq "$($CTL --json stop r1 long | jq -r .exit_code)" 143 "stop of a re-adopted task"
# A stop's grace outlives the manager: a task that ignores SIGTERM is
# killed when its grace ends even though the manager that started the stop
# was killed -9 during it.
$CTL run r1 stubborn -- /bin/sh -c 'trap "" TERM; while :; do sleep 1; done' >/dev/null  # the task's own loop
spid=$(task_field r1 stubborn pid)
$CTL stop --no-wait --grace 6000 r1 stubborn
assert_eq "$(task_field r1 stubborn state)" stopping "state during the grace"
main=$(systemctl show -p MainPID --value taskscope-manager)
kill -9 "$main"
ok "killed manager pid $main during the grace"
# Kept: a quiet window 2 s into the 6 s grace, across systemd's restart of
# the manager (RestartSec=1s): the task must not die in it, which no event
# can show.
sleep 2
kill -0 "$spid" || fail "the stubborn task died before its grace ended"
# GetTask activates the manager again; the stop goes on from its record.
assert_eq "$(task_field r1 stubborn state)" stopping "state after restart, grace not over"
stubborn_exited() { [ "$(task_field r1 stubborn state)" = exited ]; }
wait_until "the stubborn task killed after its grace" 300 stubborn_exited
assert_eq "$(task_field r1 stubborn signal)" 9 "killed with SIGKILL when the grace ended"
kill -0 "$spid" 2>/dev/null && fail "pid $spid still alive"
ok "stop completed across a manager kill -9"
echo "manager recovery: all checks passed"
