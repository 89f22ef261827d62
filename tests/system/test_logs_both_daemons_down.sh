#!/usr/bin/env bash
# variants: deb13-v2 (deb12-v2) (deb12-v1)
# A task that writes and ends while BOTH daemons are down (killed the way
# an operator or the OOM killer does) keeps every byte of its output: its
# shim holds both fifos until the streamer, back, has drained them and
# released it. Neither daemon holds them, nor puts them in an fd store.
# The same holds with log_journal on (issue 59): a task whose output is
# copied to the journal, and one whose output goes to Nomad's log fifo
# through the streamer, whose reader (logmon, here cat) must not see the
# end of its fifo while the streamer is down.
source "$(dirname "$0")/lib.sh"

A=bd$$
W=/run/$A
DROPIN_DIRS=(/run/systemd/system/taskscope-manager.service.d /run/systemd/system/taskscope-streamer.service.d)
cleanup() {
    rm -f $W-go $W-goj $W-gof $W-nomad.*
    pkill -f "$W-nomad" 2>/dev/null || true
    rm -rf "${DROPIN_DIRS[@]}"
    systemctl daemon-reload
    streamer_off
}
trap cleanup EXIT
# Both stay down for 8 s after a kill (instead of 1 s), long enough for
# the task to write and end in between; nothing here calls them meanwhile.
for d in "${DROPIN_DIRS[@]}"; do
    mkdir -p "$d"
    printf '[Service]\nRestartSec=8s\n' >"$d/50-slow-restart.conf"
done
systemctl daemon-reload
streamer_on
systemctl reset-failed taskscope-streamer taskscope-manager

N=5000  # under the 64 KiB a pipe holds: the task must end while nobody reads
mkfifo $W-go $W-goj $W-gof $W-nomad.out $W-nomad.err
$CTL run $A t -- /bin/sh -c "read x < $W-go; seq 1 $N; seq 1 $N >&2; exit 3" >/dev/null
$CTL run --spec '{"log_journal":true}' $A j -- /bin/sh -c "read x < $W-goj; seq 1 $N; seq 1 $N >&2; exit 3" >/dev/null
# logmon: reads its fifo once, until every writer has gone (Nomad's
# client/logmon/logmon.go, logRotatorWrapper.start: one io.Copy).
cat $W-nomad.out >$W-nomad.stdout &
logmon=$!
cat $W-nomad.err >$W-nomad.stderr &
$CTL run --spec '{"log_journal":true,"stdout_path":"'$W-nomad.out'","stderr_path":"'$W-nomad.err'"}' $A f -- \
    /bin/sh -c "read x < $W-gof; seq 1 $N; seq 1 $N >&2; exit 3" >/dev/null
spool=/run/taskscope/logs/$A-t.scope
shim=$(awk '/^PPid:/ {print $2}' /proc/"$(task_field $A t pid)"/status)  # the task's parent
held() { # PID: how many of the task's fifos (stdout, stderr, release) it holds
    local n=0 f
    for f in /proc/$1/fd/*; do [[ "$(readlink "$f")" == "$spool".* ]] && n=$((n + 1)); done
    echo $n
}
assert_eq "$(held "$shim")" 3 "fifos the shim holds"
assert_eq "$(held "$(systemctl show -p MainPID --value taskscope-manager)")" 0 "fifos the manager holds"
for u in taskscope-manager taskscope-streamer; do
    assert_eq "$(systemctl show -p NFileDescriptorStore --value $u)" 0 "fds in $u's fd store"
done

mpid=$(systemctl show -p MainPID --value taskscope-manager)
spid=$(streamer_pid)
systemctl kill -s KILL taskscope-streamer
systemctl kill -s KILL taskscope-manager
ok "killed the streamer ($spid) and the manager ($mpid)"
down() { [[ "$(systemctl show -p SubState --value "$1")" == auto-restart ]]; }
wait_until "the manager to be down" 50 down taskscope-manager
wait_until "the streamer to be down" 50 down taskscope-streamer
[[ "$(systemctl show -p SubState --value taskscope-manager)" == auto-restart ]] || fail "the manager is not down"
[[ "$(systemctl show -p SubState --value taskscope-streamer)" == auto-restart ]] || fail "the streamer is not down"
echo go >$W-go
echo go >$W-goj
echo go >$W-gof
for t in t j f; do
    wait_until "$t's exit record, written while both daemons were down" 100 test -e /var/lib/taskscope/exits/$A-$t.scope
done
kill -0 $logmon 2>/dev/null || fail "logmon saw the end of its fifo while the streamer was down"
[[ "$(systemctl show -p SubState --value taskscope-manager)" == auto-restart ]] ||
    fail "the manager came back before the task ended: the test proves nothing"
ok "the tasks wrote $N lines to each stream and exited while both daemons were down"

back() { [[ "$(systemctl show -p SubState --value taskscope-manager)" == running &&
    "$(systemctl show -p SubState --value taskscope-streamer)" == running ]]; }
wait_until "both daemons back" 300 back
for t in t j f; do
    assert_eq "$(task_field $A $t exit_code)" 3 "$t's exit code"
done
drained() { [[ ! -e /run/taskscope/logs/$A-$1.scope.json ]]; }
for t in t j f; do
    wait_until "the streamer to drain $t's output" 600 drained $t
done
out=$($CTL logs $A t | wc -l)
err=$($CTL logs --stderr $A t | wc -l)
echo "lines lost: stdout $((N - out)), stderr $((N - err))"
assert_eq "$out" $N "stdout lines after both daemons were down"
assert_eq "$err" $N "stderr lines after both daemons were down"
assert_eq "$($CTL logs $A t | tail -n 1)" $N "last stdout line"
dups=$( { $CTL logs $A t; $CTL logs --stderr $A t | sed 's/^/e/'; } | sort | uniq -d | wc -l)
echo "lines twice: $dups"
assert_eq "$dups" 0 "lines written twice"
gone() { ! kill -0 "$shim" 2>/dev/null; }
wait_until "the shim to exit once released" 100 gone
# With the journal on: the files are as complete.
assert_eq "$($CTL logs $A j | wc -l) $($CTL logs --stderr $A j | wc -l)" "$N $N" "j's stdout and stderr lines (log_journal on)"
assert_eq "$($CTL logs $A j | tail -n 1)" $N "j's last stdout line"
# Through Nomad's fifos: logmon got all, once its fifo's last writer went.
wait
assert_eq "$(seq 1 $N | cmp - $W-nomad.stdout && seq 1 $N | cmp - $W-nomad.stderr && echo same)" same \
    "what logmon read from f's fifos (log_journal on, the streamer between)"
for t in t j f; do $CTL forget $A $t; done
echo "logs with both daemons down: all checks passed"
