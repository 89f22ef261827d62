#!/usr/bin/env bash
# variants: deb13-v2 (deb12-v2) (deb12-v1)
# Exec sessions outlive the streamer, as operators kill and restart it:
# `systemctl kill -s KILL` and `systemctl restart` with sessions running
# (pipes and a terminal), and a session that ends while the streamer is
# frozen and then killed. Every exit code reaches its taskscopectl, the
# terminal taken over still resizes, and nothing of the sessions is left
# in the streamer's state afterwards.
source "$(dirname "$0")/lib.sh"

S=org.taskscope.Streamer1
SP=/org/taskscope/Streamer1
X=org.taskscope.Exec1
A=xr$$
RUN=/run/$A
pids=()
cleanup() {
    systemctl kill -s CONT taskscope-streamer 2>/dev/null || true
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    $CTL stop --grace 0 $A web >/dev/null 2>&1 || true
    rm -rf "$RUN"
}
on_exit() {
    local rc=$?
    if [[ $rc != 0 ]]; then
        echo "--- the streamer's journal:"
        journalctl -u taskscope-streamer --since "-10min" -o short-monotonic --no-pager | tail -40
    fi
    cleanup
}
trap on_exit EXIT
mkdir -p "$RUN"
systemctl reset-failed taskscope-streamer 2>/dev/null || true
systemctl start taskscope-streamer
records() { find /var/lib/taskscope-streamer/exec -name '*.json' 2>/dev/null | wc -l; }
streamer_back() { busctl status $S >/dev/null 2>&1 && [[ "$(streamer_pid)" != "$1" && "$(streamer_pid)" != 0 ]]; }

$CTL run $A web -- /bin/sleep 1000 >/dev/null
ok "task $A/web runs"

# Sessions: three with pipes (each ends when its line arrives), one on a terminal.
exec_bg() { # name exit-code
    mkfifo "$RUN/$1.in"
    ( rc=0; $CTL exec -i $A web -- sh -c "read line; echo got-\$line; exit $2" <"$RUN/$1.in" >"$RUN/$1.out" 2>&1 || rc=$?
      echo $rc >"$RUN/$1.rc" ) &
    pids+=($!)
    exec {fd}>"$RUN/$1.in"
    eval "in_$1=$fd"
}
exec_bg kill 7
exec_bg restart 9
exec_bg frozen 4
mkfifo "$RUN/keys"
script -qfec "stty rows 20 cols 70; $CTL exec -t $A web -- sh -c 'read x; stty size; read x; exit 5'" \
    /dev/null <"$RUN/keys" >"$RUN/screen" 2>&1 &
pids+=($!)
tty_pid=$!
exec {keys}>"$RUN/keys"
wait_until "four sessions in Sessions" 300 bash -c "[[ \$(busctl get-property $S $SP $X Sessions | grep -o '\"$A\"' | wc -l) == 4 ]]"
tty_id=$(busctl --json=short get-property $S $SP $X Sessions | jq -r '.data[] | select(.[3] == true) | .[0]')
ok "four sessions run, the terminal's is $tty_id; $(records) records"
assert_eq "$(records)" 4 "session records in /var/lib/taskscope-streamer/exec"
assert_eq "$(stat -c %a /var/lib/taskscope-streamer/exec)" 700 "mode of the record directory"

# 1. systemctl kill -s KILL: every session is taken over.
old=$(streamer_pid)
systemctl kill -s KILL taskscope-streamer
wait_until "the streamer to come back" 300 streamer_back "$old"
assert_eq "$(busctl get-property $S $SP $X Sessions | grep -o "\"$A\"" | wc -l)" 4 "sessions after systemctl kill -s KILL"
busctl call $S $SP $X ResizeExec tqq "$tty_id" 40 120
printf '\n' >&$keys
wait_until "the size after the restart" 300 grep -q '40 120' "$RUN/screen"
ok "ResizeExec on the terminal taken over: stty size says 40 120"
echo one >&$in_kill
wait_until "the exit code of the session after the kill" 300 test -s "$RUN/kill.rc"
assert_eq "$(cat "$RUN/kill.rc")" 7 "exit code of a session across systemctl kill -s KILL"
assert_eq "$(cat "$RUN/kill.out")" got-one "its output"

# 2. systemctl restart.
old=$(streamer_pid)
systemctl restart taskscope-streamer
wait_until "the streamer to come back" 300 streamer_back "$old"
echo two >&$in_restart
wait_until "the exit code of the session after the restart" 300 test -s "$RUN/restart.rc"
assert_eq "$(cat "$RUN/restart.rc")" 9 "exit code of a session across systemctl restart"
assert_eq "$(cat "$RUN/restart.out")" got-two "its output"

# 3. The command ends while the streamer cannot see it (frozen), then the
# streamer is killed: the new one finds the exit in the keeper's pipe.
old=$(streamer_pid)
# The command's keeper (its parent, the streamer's child) writes the exit
# to its status pipe, then exits: a zombie while the streamer is frozen.
cmd=$(pgrep -f "^sh -c read line; echo got-.*; exit 4\$") || fail "no command of the frozen session"
keeper=$(ps -o ppid= -p "$cmd" | tr -d ' ')
[[ -n "$keeper" ]] || fail "no keeper of the frozen session's command $cmd"
systemctl kill -s STOP taskscope-streamer
echo three >&$in_frozen
command_gone() { ! pgrep -f "^sh -c read line; echo got-.*; exit 4\$" >/dev/null; }
wait_until "the frozen session's command to end" 300 command_gone
keeper_done() { [[ ! -e /proc/$keeper ]] || [[ "$(sed 's/.*) //' /proc/$keeper/stat | cut -d' ' -f1)" == Z ]]; }
wait_until "its keeper $keeper to write the exit and end" 300 keeper_done
systemctl kill -s KILL taskscope-streamer
systemctl kill -s CONT taskscope-streamer 2>/dev/null || true
wait_until "the streamer to come back" 300 streamer_back "$old"
wait_until "the exit code of the session that ended meanwhile" 300 test -s "$RUN/frozen.rc"
assert_eq "$(cat "$RUN/frozen.rc")" 4 "exit code of a session that ended while the streamer was frozen and killed"

printf '\n' >&$keys
exec {keys}>&-
rc=0
wait "$tty_pid" || rc=$?
assert_eq "$rc" 5 "exit code of the terminal session across two streamer restarts"
wait_until "no session left" 300 bash -c "! busctl get-property $S $SP $X Sessions | grep -q '\"$A\"'"
assert_eq "$(records)" 0 "session records left"
assert_eq "$(in_scope "$A-web.scope")" 1 "processes in the task's scope (the task alone: no keeper left)"
journalctl -u taskscope-streamer --since "-5min" -o cat | grep -E 'taken over|ended while' | tail -5
ok "exec sessions across systemctl kill -s KILL, restart and a frozen streamer: 4 exit codes of 4"
