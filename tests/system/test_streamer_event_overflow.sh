#!/usr/bin/env bash
# variants: deb13-v2 (deb12-v2)
# Many tasks ending at once can overflow the streamer's spool change
# events: the kernel drops what does not fit in fs.inotify.max_queued_events
# (16384 by default; 10,000 tasks stopped together got there, and the tasks
# whose exit was dropped never had their logs completed nor their shims
# released). The streamer then reads the whole spool again. Here the limit
# is lowered and the streamer paused while the tasks end, so the queue
# overflows for sure.
source "$(dirname "$0")/lib.sh"

N=30
A=ov$$
orig=$(sysctl -n fs.inotify.max_queued_events)
cleanup() {
    kill -CONT "$(streamer_pid)" 2>/dev/null || true
    sysctl -qw fs.inotify.max_queued_events="$orig"
    systemctl restart taskscope-streamer
}
trap cleanup EXIT
since=$(date '+%Y-%m-%d %H:%M:%S')
sysctl -qw fs.inotify.max_queued_events=8
# The limit is taken when the streamer makes its inotify instance.
systemctl restart taskscope-streamer
systemctl start taskscope-manager

for i in $(seq 1 $N); do
    $CTL run $A t$i -- /bin/sh -c "echo first-$i; exec sleep 300" >/dev/null
done
collected() { for i in $(seq 1 $N); do [[ "$($CTL logs $A t$i 2>/dev/null)" == "first-$i" ]] || return 1; done; }
wait_until "every task's first line collected" 300 collected
ok "$N tasks running, their first lines collected"

# The streamer sees nothing while every task ends: far more than 8 events.
kill -STOP "$(streamer_pid)"
# (stop answers with the exit status: 137 for a SIGKILL)
for i in $(seq 1 $N); do $CTL stop --grace 0 $A t$i >/dev/null || true; done
all_exited() { for i in $(seq 1 $N); do [[ "$(task_field $A t$i state)" == exited ]] || return 1; done; }
wait_until "every task to have exited" 300 all_exited
kill -CONT "$(streamer_pid)"

# Whatever the spool still has of the tasks (descriptions and fifos), and
# their shims still waiting for a release.
spooled() { ls /run/taskscope/logs/ 2>/dev/null | grep -c "^$A-" || true; }
shims() { pgrep -fc "taskscope-shim .*/$A-t[0-9]*\.scope" || true; }
drained() { [[ "$(spooled)" == 0 && "$(shims)" == 0 ]]; }
wait_until "every task's logs completed and its shim gone" 600 drained
assert_eq "$(spooled)" 0 "spool entries left"
assert_eq "$(shims)" 0 "shims left waiting"
journalctl -u taskscope-streamer --since "$since" | quiet_grep "change events overflowed" \
    || fail "the streamer did not report an overflow: the test did not test it"
ok "the streamer reported the overflow and read the spool again"
for i in $(seq 1 $N); do
    [[ "$($CTL logs $A t$i)" == "first-$i" ]] || fail "logs of t$i: $($CTL logs $A t$i)"
done
ok "every task's log kept"
for i in $(seq 1 $N); do $CTL forget $A t$i; done
echo "streamer event overflow: all checks passed"
