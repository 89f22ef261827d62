#!/usr/bin/env bash
# variants: deb13-v2 deb12-v1
# A task's output in the journal of its own unit (issue 59), on systemd 257
# (cgroup v2) and 252 (hybrid): with log_journal, `journalctl -u` of the
# task's scope and of its allocation's slice shows its lines, placed by
# journald itself (_SYSTEMD_UNIT, _SYSTEMD_SLICE, _UID from the task's pid),
# with the task's name and PRIORITY 6/3; a line the task wrote in two parts
# is one entry, and one past LineMax is cut by journald into several (the
# file keeps it whole); so is a task in its own root. Two tasks are rate-limited apart. A stopped journald never
# blocks a task nor costs its files a line, and what the copy dropped is
# counted; a restarted journald gets the copy again. A task with Nomad's
# log fifos (stdout_path/stderr_path) gets the same copy while logmon still
# reads every line, and a stopped logmon holds the task, not its lines. The
# switch with no journal socket is a clear error at the start.
source "$(dirname "$0")/lib.sh"

A=jc$$
S=org.taskscope.Streamer1
SP=/org/taskscope/Streamer1
JDROPIN=/etc/taskscope/manager.json.d/60-journal-test.json
cleanup() {
    kill -CONT "$(systemctl show -p MainPID --value systemd-journald)" 2>/dev/null || true
    rm -f "$JDROPIN"
    if [ -n "${AD:-}" ]; then
        pkill -CONT -f "$AD" 2>/dev/null || true
        pkill -f "$AD" 2>/dev/null || true
        rm -rf "$AD"
    fi
    streamer_off
}
trap cleanup EXIT
streamer_on

# The entries of a unit, as JSON lines, once journald has written all it has.
entries() { journalctl --sync 2>/dev/null || true; journalctl -u "$1" -o json --no-pager --output-fields=MESSAGE,PRIORITY,SYSLOG_IDENTIFIER,_SYSTEMD_UNIT,_SYSTEMD_SLICE,_UID; }
messages() { entries "$1" | jq -r 'select(.SYSLOG_IDENTIFIER == "'"$2"'") | .MESSAGE'; }
count_messages() { messages "$1" "$2" | grep -c "$3" || true; }
complete() { ! test -e /run/taskscope/logs/$A-$1.scope.json; }
journal_copy() { busctl --json=short call $S $SP $S GetJournalCopy ss "$A" "$1" | jq -r '.data | map(tostring) | join(" ")'; }

# --- a task as nobody: its lines, placed by journald ----------------------
$CTL run --spec '{"log_journal":true,"user":"nobody"}' $A web -- /bin/sh -c \
    'echo "out one"; echo "err one" >&2; printf "split "; sleep 0.3; echo "line"; echo "out two"' >/dev/null
slice=$(task_field $A web alloc_slice)
$CTL wait $A web >/dev/null || fail "the task failed"
wait_until "the streamer to complete web's logs" 300 complete web
scope=$A-web.scope
e=$(entries "$scope")
echo "$e" | jq -c . | head -n 8
for m in "out one" "split line" "out two"; do
    got=$(jq -r 'select(.MESSAGE == "'"$m"'") | [.PRIORITY, .SYSLOG_IDENTIFIER, ._SYSTEMD_UNIT, ._SYSTEMD_SLICE, ._UID] | join(" ")' <<<"$e")
    assert_eq "$got" "6 web $scope $slice 65534" "stdout '$m' in journalctl -u $scope"
done
got=$(jq -r 'select(.MESSAGE == "err one") | [.PRIORITY, .SYSLOG_IDENTIFIER] | join(" ")' <<<"$e")
assert_eq "$got" "3 web" "stderr's line, PRIORITY 3"
assert_eq "$(jq -r 'select(.MESSAGE == "split ")' <<<"$e" | wc -l)" 0 "entries of half a line"
assert_eq "$(messages "$slice" web | grep -c 'one$')" 2 "web's lines in journalctl -u $slice"
assert_eq "$(cat /var/lib/taskscope/logs/$A/web.stdout.0)" $'out one\nsplit line\nout two' "web's stdout file"
assert_eq "$(journal_copy web)" "true 35 0 0" "GetJournalCopy (enabled, bytes sent, lines and bytes dropped)"

# A line past journald's LineMax (48K by default) is cut by journald as it
# cuts any service's, into entries marked _LINE_BREAK=line-max; the file
# keeps it whole. (-o json --all: journalctl nulls fields past 4 KiB else.)
$CTL run --spec '{"log_journal":true}' $A long -- /bin/sh -c 'head -c 100000 /dev/zero | tr "\\0" x; echo' >/dev/null
$CTL wait $A long >/dev/null || fail "the long line's task failed"
wait_until "the streamer to complete long's logs" 300 complete long
journalctl --sync 2>/dev/null || true
got=$(journalctl -u $A-long.scope -o json --all --no-pager --output-fields=MESSAGE,SYSLOG_IDENTIFIER,_LINE_BREAK |
    jq -r 'select(.SYSLOG_IDENTIFIER == "long") | "\(.MESSAGE | length) \(._LINE_BREAK // "-")"')
echo "$got"
assert_eq "$(awk '{ n += $1 } END { print n }' <<<"$got")" 100000 "bytes of the long line in the journal"
assert_eq "$(awk 'NR == 1 { print $2 }' <<<"$got")" line-max "the first entry's _LINE_BREAK"
(($(wc -l <<<"$got") >= 2)) || fail "journald did not cut a 100000-byte line"
assert_eq "$(wc -L </var/lib/taskscope/logs/$A/long.stdout.0) $(wc -l </var/lib/taskscope/logs/$A/long.stdout.0)" "100000 1" "the long line in its file (length, lines)"

# A task in its own root (isolation: a chroot of its own, as nobody):
# journald places it by its pid as well.
$CTL run --spec '{"log_journal":true,"isolation":{}}' $A boxed -- /bin/sh -c 'echo "boxed out"; echo "boxed err" >&2' >/dev/null
$CTL wait $A boxed >/dev/null || fail "the isolated task failed"
wait_until "the streamer to complete boxed's logs" 300 complete boxed
got=$(entries $A-boxed.scope | jq -r 'select(.SYSLOG_IDENTIFIER == "boxed") | [.MESSAGE, .PRIORITY, ._SYSTEMD_UNIT] | join(" ")' | sort)
assert_eq "$got" $'boxed err 3 '"$A-boxed.scope"$'\nboxed out 6 '"$A-boxed.scope" "an isolated task's lines in journalctl -u $A-boxed.scope"

# A task without the switch stays out of the journal.
$CTL run $A plain -- /bin/echo "not for the journal" >/dev/null
$CTL wait $A plain >/dev/null
wait_until "the streamer to complete plain's logs" 300 complete plain
assert_eq "$(entries $A-plain.scope | jq -r 'select(.MESSAGE == "not for the journal")' | wc -l)" 0 "plain's lines in the journal"
assert_eq "$(journal_copy plain)" "false 0 0 0" "GetJournalCopy of plain"

# --- two tasks' rate limits are apart -------------------------------------
# journald's default burst (10,000 per 30 s, scaled up with free disk)
# stops the noisy task; the quiet one, writing at the same time, keeps all.
$CTL run --spec '{"log_journal":true}' $A noisy -- /usr/bin/seq -f "noisy %g" 1 60000 >/dev/null
$CTL run --spec '{"log_journal":true}' $A quiet -- /bin/sh -c 'for i in $(seq 1 20); do echo "quiet $i"; sleep 0.05; done' >/dev/null
$CTL wait $A noisy >/dev/null
$CTL wait $A quiet >/dev/null
wait_until "the streamer to complete noisy's logs" 600 complete noisy
wait_until "the streamer to complete quiet's logs" 300 complete quiet
noisy=$(count_messages $A-noisy.scope noisy '^noisy ')
quiet=$(count_messages $A-quiet.scope quiet '^quiet ')
ok "noisy: $noisy of 60000 lines in its journal; quiet: $quiet of 20"
((noisy < 60000)) || fail "journald suppressed none of noisy's 60000 lines: no rate limit to prove apart"
assert_eq "$quiet" 20 "quiet's lines in its journal while noisy was suppressed"
assert_eq "$(cat /var/lib/taskscope/logs/$A/noisy.stdout.* | wc -l)" 60000 "noisy's lines in its files"
# (journald says "Suppressed N messages from <noisy's cgroup>" only at the
# unit's first line after its 30 s window, which noisy never writes.)

# --- journald stopped: the task goes on, its files complete ---------------
jpid=$(systemctl show -p MainPID --value systemd-journald)
kill -STOP "$jpid"
ok "journald (pid $jpid) stopped"
$CTL run --spec '{"log_journal":true}' $A flood -- /usr/bin/awk 'BEGIN { for (i = 1; i <= 200000; i++) { print "flood " i; fflush() } }' >/dev/null
# Waited for with journald still stopped: the task must finish without it.
$CTL wait $A flood >/dev/null || fail "the flood task failed"
flood_filed() { (($(cat /var/lib/taskscope/logs/$A/flood.stdout.* 2>/dev/null | wc -l) >= 200000)); }
wait_until "the flood's files to hold its 200000 lines" 600 flood_filed
seq 1 200000 | sed 's/^/flood /' | cmp - <(cat $(ls /var/lib/taskscope/logs/$A/flood.stdout.* | sort -t. -k3 -n)) ||
    fail "the flood's files are not its 200000 lines in order"
ok "the task ended and its files hold all 200000 lines while journald was stopped"
kill -CONT "$jpid"
wait_until "the streamer to complete flood's logs" 600 complete flood
read -r enabled sent lines bytes <<<"$(journal_copy flood)"
ok "the journal's copy of flood: $sent bytes sent, $lines lines ($bytes bytes) dropped"
((lines > 0)) || fail "nothing counted as dropped while journald was stopped"

# --- journald restarted mid-stream: the copy resumes -----------------------
$CTL run --spec '{"log_journal":true}' $A slow -- /bin/sh -c \
    'for i in $(seq 1 40); do echo "slow $i"; sleep 0.25; done' >/dev/null
# Mid-stream: once slow's files hold a few of its lines.
slow_started() { (($(cat /var/lib/taskscope/logs/$A/slow.stdout.0 2>/dev/null | wc -l) >= 5)); }
wait_until "slow's first lines in its files" 120 slow_started
systemctl restart systemd-journald
ok "journald restarted while slow writes"
$CTL wait $A slow >/dev/null
wait_until "the streamer to complete slow's logs" 300 complete slow
assert_eq "$(cat /var/lib/taskscope/logs/$A/slow.stdout.0 | wc -l)" 40 "slow's lines in its files"
last=$(messages $A-slow.scope slow | tail -n 1)
assert_eq "$last" "slow 40" "slow's last line in the journal, after the restart"

# --- output for Nomad's log fifos (stdout_path/stderr_path) ---------------
# The streamer goes between the task and the fifos Nomad gives: logmon
# (here a reader of each fifo into a file, as logmon's fifo reader) gets
# every line, the journal a copy, and taskscope keeps no files of it.
AD=$(mktemp -d /tmp/jc-alloc-XXXXXX)
mkdir -p "$AD/alloc/logs"
fifo() { echo "$AD/alloc/logs/.$1.$2.fifo"; }
for t in nomadt held; do for s in stdout stderr; do mkfifo "$(fifo $t $s)"; done; done
cat "$(fifo nomadt stdout)" >"$AD/nomadt.stdout" &
cat "$(fifo nomadt stderr)" >"$AD/nomadt.stderr" &
paths() { echo '"stdout_path":"'"$(fifo $1 stdout)"'","stderr_path":"'"$(fifo $1 stderr)"'"'; }
$CTL run --spec '{"log_journal":true,"user":"nobody",'"$(paths nomadt)"'}' $A nomadt -- /bin/sh -c \
    'echo "to nomad one"; echo "to nomad err" >&2; printf "to nomad "; sleep 0.3; echo "two"' >/dev/null
$CTL wait $A nomadt >/dev/null || fail "the task with Nomad's fifos failed"
wait_until "the streamer to complete nomadt's logs" 300 complete nomadt
wait
assert_eq "$(cat "$AD/nomadt.stdout")" $'to nomad one\nto nomad two' "what logmon read from the stdout fifo"
assert_eq "$(cat "$AD/nomadt.stderr")" "to nomad err" "what logmon read from the stderr fifo"
got=$(entries $A-nomadt.scope | jq -r 'select(.SYSLOG_IDENTIFIER == "nomadt") | [.MESSAGE, .PRIORITY, ._SYSTEMD_UNIT, ._UID] | join(" ")' | sort)
assert_eq "$got" $'to nomad err 3 '"$A-nomadt.scope"$' 65534\nto nomad one 6 '"$A-nomadt.scope"$' 65534\nto nomad two 6 '"$A-nomadt.scope"' 65534' \
    "the lines of a task with Nomad's fifos in journalctl -u $A-nomadt.scope"
assert_eq "$(journal_copy nomadt)" "true 39 0 0" "GetJournalCopy of nomadt"
[ ! -e /var/lib/taskscope/logs/$A/nomadt.stdout.0 ] || fail "taskscope kept a file of output Nomad's logmon collects"
if out=$($CTL logs $A nomadt 2>&1); then fail "taskscopectl logs read a task whose output went to Nomad's fifos: $out"; fi
grep -q "LogsDisabled" <<<"$out" || fail "not LogsDisabled: $out"
ok "taskscopectl logs of it: LogsDisabled"

# A logmon that stops reading (a Nomad client restarting): the task's
# writes wait, as they would on the fifo itself, and nothing is dropped.
cat "$(fifo held stdout)" >"$AD/held.stdout" &
logmon=$!
cat "$(fifo held stderr)" >/dev/null &
kill -STOP $logmon
$CTL run --spec '{"log_journal":true,'"$(paths held)"'}' $A held -- /usr/bin/awk 'BEGIN { for (i = 1; i <= 200000; i++) print "held " i }' >/dev/null
# (Its file, not its fd 1: stopped before its redirection, it has none yet.)
held_blocked() { [ "$(task_field $A held state)" = running ] && (($(stat -c %s "$AD/held.stdout" 2>/dev/null || echo 0) == 0)); }
sleep 3
held_blocked || fail "the task with a stopped logmon is not running and waiting ($(task_field $A held state))"
ok "with logmon stopped the task waits (still running after 3 s)"
kill -CONT $logmon
$CTL wait $A held >/dev/null || fail "the held task failed"
wait_until "the streamer to complete held's logs" 300 complete held
wait
seq 1 200000 | sed 's/^/held /' | cmp - "$AD/held.stdout" || fail "logmon did not get held's 200000 lines in order"
ok "logmon got all 200000 lines in order once it read again"
read -r enabled sent lines bytes <<<"$(journal_copy held)"
ok "the journal's copy of held: $sent bytes sent, $lines lines dropped"
rm -rf "$AD"

# --- no journal socket: a clear error at the start ------------------------
echo '{"journal_socket":"/run/taskscope-test-no-journal"}' >"$JDROPIN"
systemctl restart taskscope-manager
if out=$($CTL run --spec '{"log_journal":true}' $A nojournal -- /bin/true 2>&1); then
    fail "a task with log_journal started with no journal socket"
fi
echo "$out"
grep -q "JournalUnavailable" <<<"$out" || fail "not JournalUnavailable: $out"
grep -q "/run/taskscope-test-no-journal" <<<"$out" || fail "the error does not name the socket: $out"
ok "log_journal with no journal socket: JournalUnavailable naming it"
rm -f "$JDROPIN"
