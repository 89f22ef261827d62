#!/usr/bin/env bash
# variants: deb13-v2 (deb12-v2) (deb12-v1)
# taskscope-streamer: a task's stdout lands in size-rotated files with no
# line lost or repeated while the streamer is killed -9 three times; the
# rotation limits hold; `taskscopectl logs` reads and follows; a task
# with logs off gets no spool entry.
source "$(dirname "$0")/lib.sh"

SPOOL=/run/taskscope/logs
A=sl$$
F=${A}full
cleanup() {
    umount /var/lib/taskscope/logs/$F 2>/dev/null || true
    rm -f /run/$A-go /run/$A-step-*
    streamer_off
}
trap cleanup EXIT
streamer_on
LOGDIR=/var/lib/taskscope/logs/$A
# Bytes in the task's stdout files so far.
logged() { find "$LOGDIR" -maxdepth 1 -name 'numbers.stdout.*' -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
grew_past() { (($(logged) > $1)); }
restarted() { local p; p=$(streamer_pid); [[ "$p" != 0 && "$p" != "$1" ]]; }

# 200000 numbered lines of ~207 bytes (~40 MiB, ~40 files of the 50 allowed,
# so nothing is rotated away), one write(2) per line, as fast as awk goes.
# Before lines 50001, 100001 and 150001 it waits for /run/$A-step-K, which
# the test makes after its Kth kill: however fast the writer is, it is
# still writing at every kill (it once finished before the third). Its
# 0.05 s sleeps pace that poll: awk has no way to wait for a file.
LINE_PAD=$(printf 'x%.0s' {1..200})
$CTL run --spec '{"log_max_files":50,"log_max_file_size_mb":1}' $A numbers -- \
    /usr/bin/awk -v pad="$LINE_PAD" -v step="/run/$A-step-" 'BEGIN {
        for (i = 1; i <= 200000; i++) {
            if (i > 1 && i % 50000 == 1) {
                f = step int(i / 50000)
                while ((getline l < f) <= 0) { close(f); system("sleep 0.05") }
                close(f)
            }
            print i " " pad; fflush()
        } }' >/dev/null
writer=$(task_field $A numbers pid)
ok "started the writer (pid $writer)"

running_at_kill=0
last=0
for k in 1 2 3; do
    wait_until "the log to grow (before kill $k)" 600 grew_past $((last + 300000))
    last=$(logged)
    [[ -e /proc/$writer ]] && running_at_kill=$((running_at_kill + 1))
    pid=$(streamer_pid)
    kill -9 "$pid"
    wait_until "systemd to restart the streamer (kill $k)" 300 restarted "$pid"
    ok "kill -9 $k of the streamer (pid $pid) at $last bytes logged"
    echo go >/run/$A-step-$k
done
((running_at_kill == 3)) || fail "the writer ended before all three kills ($running_at_kill)"
ok "all three kills happened while the task wrote"

$CTL wait $A numbers >/dev/null || fail "the writer failed"
wait_until "the streamer to complete the task's logs" 600 test ! -e $SPOOL/$A-numbers.scope.json
ok "spool entry removed after the task's logs were drained"

files=$(ls "$LOGDIR" | grep -E '^numbers\.stdout\.[0-9]+$' | sort -t. -k3 -n)
count=$(echo "$files" | wc -l)
((count <= 50)) || fail "$count files, more than log_max_files 50"
((count >= 2)) || fail "no rotation happened ($count file)"
ok "$count rotated files (limit 50)"
for f in $files; do
    size=$(stat -c %s "$LOGDIR/$f")
    ((size <= 1048576)) || fail "$f is $size bytes, over 1 MiB"
done
ok "no file over 1 MiB"
(cd "$LOGDIR" && cat $files) | cut -d' ' -f1 >/tmp/$A.got
seq 1 200000 | cmp - /tmp/$A.got || fail "the lines are not 1..200000 exactly once in order"
damaged=$( (cd "$LOGDIR" && cat $files) | grep -cv " $LINE_PAD\$" || true)
assert_eq "$damaged" 0 "damaged lines"
ok "every line 1..200000 present exactly once, in order, across the rotated files"

assert_eq "$($CTL logs $A numbers | tail -n 1 | cut -d' ' -f1)" 200000 "last line through taskscopectl logs"
assert_eq "$($CTL logs $A numbers | wc -l)" 200000 "lines through taskscopectl logs"
assert_eq "$($CTL logs -n 3 $A numbers | cut -d' ' -f1 | tr '\n' ' ')" "199998 199999 200000 " "logs -n 3"
if out=$(busctl call org.taskscope.Streamer1 /org/taskscope/Streamer1 org.taskscope.Streamer1 \
    ReadLogs ssssxb $A numbers stdout start 999999999 false 2>&1); then
    fail "an offset past the end was accepted"
fi
[[ "$out" == *"past the end"*"bytes)"* ]] || fail "offset past the end: unclear error '$out'"
ok "offset past the end refused: $out"
out=$($CTL logs nosuch task 2>&1) && fail "logs of an unknown task succeeded"
[[ "$out" == *NoSuchTask* ]] || fail "logs of an unknown task: '$out'"
ok "logs of an unknown task: NoSuchTask"

# Follow: a line written after `logs -f` started reaches it; it ends with the task.
mkfifo /run/$A-go
$CTL run $A chatty -- /bin/sh -c "echo first-line; read x < /run/$A-go; echo second-line" >/dev/null
$CTL logs -f $A chatty >/tmp/$A.follow &
follower=$!
wait_until "the follower to see the first line" 300 grep -q first-line /tmp/$A.follow
echo go >/run/$A-go
wait_until "the follower to see a line written after it started" 300 grep -q second-line /tmp/$A.follow
ok "logs -f saw a line written after it started"
wait_until "logs -f to end after the task" 300 bash -c "! kill -0 $follower 2>/dev/null"
wait $follower || fail "logs -f failed"
ok "logs -f ended when the task's logs were complete"

# Logs off: no fifo, no description, nothing for the streamer.
$CTL run --spec '{"logs":false}' $A quiet -- /bin/echo unseen >/dev/null
[[ ! -e $SPOOL/$A-quiet.scope.json && ! -e $SPOOL/$A-quiet.scope.stdout ]] || fail "a task with logs off got a spool entry"
ok "a task with logs off gets no spool entry"
out=$($CTL logs $A quiet 2>&1) && fail "logs of a task with logs off succeeded"
[[ "$out" == *LogsDisabled* ]] || fail "logs of a task with logs off: '$out'"
ok "logs of a task with logs off: $out"

# A full log disk: the task is not blocked for good, the journal says why,
# and the logs still complete.
mkdir -p /var/lib/taskscope/logs/$F
mount -t tmpfs -o size=512k tmpfs /var/lib/taskscope/logs/$F
since=$(date '+%Y-%m-%d %H:%M:%S')
$CTL run $F big -- /bin/sh -c 'head -c 3M /dev/zero | tr "\0" y; echo; echo last-line' >/dev/null
timeout 300 $CTL wait $F big >/dev/null || fail "a task writing to a full log disk did not finish"
ok "a task writing 3 MiB into a 512 KiB log disk finished"
wait_until "the logs of the task on a full disk to complete" 300 test ! -e $SPOOL/$F-big.scope.json
journalctl -u taskscope-streamer --since "$since" --no-pager | grep "Failed to write the stdout log of $F-big.scope" | tail -n1 ||
    fail "no error in the journal about the full log disk"
ok "the full log disk is reported in the journal"
umount /var/lib/taskscope/logs/$F
$CTL forget $F big || true

$CTL wait $A chatty >/dev/null || true
$CTL wait $A quiet >/dev/null || true
for t in numbers chatty quiet; do $CTL forget $A $t || true; done
echo "PASS"
