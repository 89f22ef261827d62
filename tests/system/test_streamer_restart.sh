#!/usr/bin/env bash
# variants: deb13-v2 (deb12-v2) (deb12-v1)
# Restarts of taskscope-streamer lose nothing the user holds, killed the way
# operators do (systemctl kill -s KILL, systemctl restart):
# - `taskscopectl logs -f` follows across them: every numbered line once,
#   with the task's output copied to the journal as well (log_journal,
#   issue 59: the copy costs the files and the follower nothing);
# - a forgotten task leaves no file of it (record, logs, spool), also when
#   forgotten while the streamer was down; an allocation's logs stay until
#   its last task is forgotten;
# - DefaultIntervalMs set over the bus survives a restart and a kill.
source "$(dirname "$0")/lib.sh"

S=org.taskscope.Streamer1
P=/org/taskscope/Streamer1
SI=org.taskscope.Stats1
SPOOL=/run/taskscope/logs
DONE=/var/lib/taskscope-streamer/done
LOGS=/var/lib/taskscope/logs
A=sr$$
W=/run/$A
cleanup() {
    rm -f $W-go1 $W-go2 $W-go3
    busctl set-property $S $P $SI DefaultIntervalMs t 1000 2>/dev/null || true
    streamer_off
}
trap cleanup EXIT
streamer_on
# This test starts the streamer 4 times, the test before it 3 times within
# seconds: systemd's default start limit (5 in 10 s) must not count those.
systemctl reset-failed taskscope-streamer

restarted() { local p; p=$(streamer_pid); [[ "$p" != 0 && "$p" != "$1" ]] && busctl status $S >/dev/null 2>&1; }
kill_streamer() {
    local pid
    pid=$(streamer_pid)
    systemctl kill -s KILL taskscope-streamer
    for ((i = 0; i < 600; i++)); do
        restarted "$pid" && return 0
        sleep 0.1  # the poll's pace (its own loop: a miss prints the unit's state)
    done
    # Why not: the unit's state (a start-limit-hit, a crash loop) and its journal.
    systemctl status --no-pager -n 40 taskscope-streamer || true
    systemctl show -p Result,NRestarts,StartLimitBurst,StartLimitIntervalUSec taskscope-streamer || true
    fail "systemd did not restart the streamer within 60 s of kill -9 (pid $pid)"
}
lines_seen() { (($(wc -l <$W.out) >= $1)); }
# Every file the streamer or the manager keeps for a task of allocation $1:
# its log directory, the streamer's record, the spool, the manager's record
# and exit file.
files_of() {
    {
        find $LOGS/$1 2>/dev/null
        ls $DONE $SPOOL /var/lib/taskscope/tasks /var/lib/taskscope/exits 2>/dev/null | grep "^$1-" || true
    } | grep -c . || true
}
no_files_of() { [[ $(files_of "$1") == 0 ]]; }
logs_complete() { [[ -e $DONE/$1.json && ! -e $SPOOL/$1.json ]]; }

# --- logs -f across restarts -------------------------------------------------
mkfifo $W-go1 $W-go2 $W-go3
N=50000
H=25000
# Two gates in the shell, one in the middle of awk's burst: each restart
# below happens while the task lives, and lines are written while the
# streamer is down.
$CTL run --spec '{"log_journal":true}' $A lines -- /bin/sh -c "
    i=1; while [ \$i -le 1000 ]; do echo \$i; i=\$((i + 1)); done
    read x < $W-go1
    while [ \$i -le 2000 ]; do echo \$i; i=\$((i + 1)); done
    read x < $W-go2
    exec /usr/bin/awk -v from=\$i 'BEGIN {
        for (i = from; i <= $N; i++) { print i; fflush(); if (i == $H) getline x < \"$W-go3\" } }'" >/dev/null
$CTL logs -f $A lines >$W.out 2>$W.err &
follower=$!
wait_until "the follower to see line 1000" 600 lines_seen 1000
ok "following: 1000 lines"

# Set over the bus, it must survive every restart below.
busctl set-property $S $P $SI DefaultIntervalMs t 2500
kill_streamer
assert_eq "$(busctl get-property $S $P $SI DefaultIntervalMs)" "t 2500" "DefaultIntervalMs after systemctl kill -s KILL"
echo go >$W-go1
wait_until "the follower to see line 2000 after systemctl kill -s KILL" 600 lines_seen 2000
ok "systemctl kill -s KILL while the follower waited: lines 1001-2000 arrived"

before_restart=$(streamer_pid)
systemctl restart --no-block taskscope-streamer
echo go >$W-go2
wait_until "the follower to see line $H" 1200 lines_seen $H
ok "systemctl restart while the task wrote lines 2001-$H"
wait_until "the restarted streamer on the bus" 600 restarted "$before_restart"
assert_eq "$(busctl get-property $S $P $SI DefaultIntervalMs)" "t 2500" "DefaultIntervalMs after systemctl restart"
kill_streamer
echo go >$W-go3
ok "systemctl kill -s KILL at line $H; lines $((H + 1))-$N written meanwhile"

$CTL wait $A lines >/dev/null || fail "the writer failed"
for ((i = 0; i < 1200; i++)); do
    kill -0 $follower 2>/dev/null || break
    sleep 0.1  # the poll's pace until the follower ends
done
kill -0 $follower 2>/dev/null && fail "logs -f did not end with the task"
wait $follower || fail "logs -f failed: $(cat $W.err)"
lost=$(seq 1 $N | sort | comm -23 - <(sort -u $W.out) | wc -l)
twice=$(sort $W.out | uniq -d | wc -l)
resumed=$(grep -c "resuming at byte" $W.err || true)
echo "logs -f: $(wc -l <$W.out) lines of $N, lost $lost, twice $twice, resumed $resumed times"
assert_eq "$lost" 0 "lines lost across restarts"
assert_eq "$twice" 0 "lines seen twice across restarts"
seq 1 $N | cmp -s - $W.out || fail "the lines are out of order"
assert_eq "$resumed" 3 "times the follower resumed (3 restarts while it followed)"

# --- forget leaves nothing ---------------------------------------------------
wait_until "the logs of $A-lines to complete" 600 logs_complete $A-lines.scope
echo "files of $A before forget: $(files_of $A)"
$CTL forget $A lines
wait_until "the files of $A to go" 300 no_files_of $A
echo "files of the task after forget: $(files_of $A)"
assert_eq "$(files_of $A)" 0 "files of a forgotten task"

# Forgotten while the streamer was down: removed when it starts.
D=${A}d
$CTL run $D t -- /bin/echo hello >/dev/null
$CTL wait $D t >/dev/null
wait_until "the logs of $D-t to complete" 600 logs_complete $D-t.scope
systemctl stop taskscope-streamer
$CTL forget $D t
echo "files of $D while the streamer is down: $(files_of $D)"
systemctl start taskscope-streamer
wait_until "the files of $D to go after the streamer started" 300 no_files_of $D
echo "files after a forget while the streamer was down: $(files_of $D)"
assert_eq "$(files_of $D)" 0 "files of a task forgotten while the streamer was down"

# Retention: an allocation's logs stay until its last task is forgotten.
R=${A}r
$CTL run $R one -- /bin/echo one >/dev/null
$CTL run $R two -- /bin/echo two >/dev/null
$CTL wait $R one >/dev/null
$CTL wait $R two >/dev/null
wait_until "the logs of $R to complete" 600 bash -c "[[ -e $DONE/$R-one.scope.json && -e $DONE/$R-two.scope.json ]]"
$CTL forget $R one
wait_until "the record of $R-one to go" 300 test ! -e $DONE/$R-one.scope.json
assert_eq "$($CTL logs $R two)" two "the other task's logs after the first was forgotten"
out=$($CTL logs $R one 2>&1) && fail "a forgotten task's logs were readable"
[[ "$out" == *NoSuchTask* ]] || fail "logs of a forgotten task: $out"
ok "a forgotten task's logs: $out"
echo "files of $R with one task left: $(files_of $R)"
$CTL forget $R two
wait_until "the log directory of $R to go" 300 no_files_of $R
assert_eq "$(files_of $R)" 0 "files once the allocation's last task is forgotten"

busctl set-property $S $P $SI DefaultIntervalMs t 1000
echo "PASS"
