#!/usr/bin/env bash
# Drives taskscope-shim through its fd 3/4 protocol the way the manager does,
# as the current user, without systemd or cgroups. No sleeps: every wait is on
# a fifo, a pipe or the shim's own exit.
#
# usage: test_shim.sh /path/to/taskscope-shim
set -u

SHIM=${1:?usage: test_shim.sh /path/to/taskscope-shim}
[[ -x $SHIM ]] || { echo "not executable: $SHIM" >&2; exit 1; }
SHIM=$(readlink -f "$SHIM")

T=$(mktemp -d "${TMPDIR:-/tmp}/shimtest.XXXXXX")
KILL_PIDS=()
cleanup() {
  local p
  for p in "${KILL_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$T"
}
trap cleanup EXIT

FAILS=0
CASE=""
fail() { echo "FAIL [$CASE]: $*" >&2; FAILS=$((FAILS + 1)); }
ok() { echo "ok   [$CASE]"; }

UIDN=$(id -u)
GIDN=$(id -g)
# Cgroup root with no cgroup files: the shim must work without an OOM watch.
NOCG=$T/no-cgroup-root

# start NAME [shim options...] -- PROGRAM ARGV0 [ARGS...]
# Spawns the shim with fd 3 = report fifo, fd 4 = go fifo and a stray fd 9
# that must not reach the task. Sets D (case dir), SPID, R/G (our fd ends),
# TASK_PID (from the "pid N" report).
start() {
  CASE=$1; shift
  D=$T/$CASE
  mkdir -p "$D"
  mkfifo "$D/report" "$D/go"
  "$SHIM" --exit-file "$D/exit" --uid "$UIDN" --gid "$GIDN" --cwd "$D" \
      --cgroup-root "$NOCG" "$@" \
      3>"$D/report" 4<"$D/go" 9>"$D/stray" &
  SPID=$!
  exec {R}<"$D/report" {G}>"$D/go"
  TASK_PID=""
  local line=""
  if ! read -r -t 10 -u "$R" line; then
    fail "no report line"; return 1
  fi
  if [[ $line =~ ^pid\ ([0-9]+)$ ]]; then
    TASK_PID=${BASH_REMATCH[1]}
  else
    fail "expected 'pid N', got '$line'"; return 1
  fi
}

# go EXPECTED_REPORT: release the task, check the second report line.
go() {
  printf g >&"$G"
  exec {G}>&-
  local line=""
  read -r -t 10 -u "$R" line || line="<none>"
  [[ $line == "$1" ]] || fail "expected report '$1', got '$line'"
  # Then the shim closes fd 3: EOF.
  if read -r -t 10 -u "$R" line; then fail "unexpected report '$line'"; fi
  exec {R}<&-
}

# finish EXPECTED_SHIM_RC: wait for the shim itself.
finish() {
  local rc=0
  wait "$SPID" || rc=$?
  [[ $rc == "$1" ]] || fail "shim exited $rc, expected $1"
}

field() { sed -n "s/^$1=//p" "$D/exit"; }

# check_exit CODE SIGNAL EXEC_ERROR EXEC_STEP
check_exit() {
  if [[ ! -f $D/exit ]]; then fail "no exit file"; return; fi
  [[ ! -e $D/exit.tmp ]] || fail "exit.tmp left behind"
  local k
  for k in exit_code signal oom_killed finished_at_us exec_error exec_error_step; do
    grep -q "^$k=" "$D/exit" || fail "exit file lacks $k"
  done
  [[ $(wc -l <"$D/exit") == 6 ]] || fail "exit file has extra lines: $(cat "$D/exit")"
  [[ $(field exit_code) == "$1" ]] || fail "exit_code=$(field exit_code), expected $1"
  [[ $(field signal) == "$2" ]] || fail "signal=$(field signal), expected $2"
  [[ $(field exec_error) == "$3" ]] || fail "exec_error=$(field exec_error), expected $3"
  [[ $(field exec_error_step) == "$4" ]] || fail "exec_error_step=$(field exec_error_step), expected '$4'"
  [[ $(field oom_killed) == 0 ]] || fail "oom_killed=$(field oom_killed)"
  local now_us f
  now_us=$(($(date +%s%N) / 1000))
  f=$(field finished_at_us)
  [[ $f =~ ^[0-9]+$ ]] && ((f <= now_us && now_us - f < 60000000)) ||
    fail "finished_at_us=$f not close to now ($now_us)"
}

run_case() { # NAME CODE SIGNAL [shim options] -- PROGRAM ARGV...
  local name=$1 code=$2 sig=$3; shift 3
  local before=$FAILS
  start "$name" "$@" || { finish 0; return; }
  go started
  finish 0
  check_exit "$code" "$sig" 0 ""
  ((FAILS == before)) && ok
}

# --- plain exits and signals ---
run_case exit0 0 0 -- /bin/true true
run_case exit3 3 0 -- /bin/sh sh -c 'exit 3'
run_case sigkill 137 9 -- /bin/sh sh -c 'kill -9 $$'
run_case sigterm 143 15 -- /bin/sh sh -c 'kill -TERM $$'

# --- argv[0] is the caller's, args pass through verbatim ---
before=$FAILS
start argv --stdout "$T/argv/out" -- /bin/sh custom0 -c 'tr "\\0" "\\n" </proc/$$/cmdline | head -n1; printf "%s|" "$0" "$@"' a 'b c' ''
go started; finish 0; check_exit 0 0 0 ""
[[ $(cat "$D/out") == $'custom0\na|b c||' ]] || fail "argv: $(cat "$D/out")"
((FAILS == before)) && ok

# --- missing program: exec error is reported and recorded ---
before=$FAILS
start noprog -- "$T/does-not-exist" x
go "execfailed 2 execve"
finish 0
check_exit 127 0 2 execve
((FAILS == before)) && ok

# --- the shim cannot join its own cgroup (not on cgroup v2 here, so it
# moves before the fork, as on v1): the error comes first, no task ---
before=$FAILS
CASE=nojoin; D=$T/nojoin; mkdir -p "$D"; mkfifo "$D/report" "$D/go"
"$SHIM" --exit-file "$D/exit" --uid "$UIDN" --gid "$GIDN" --cwd "$D" --cgroup-root "$NOCG" \
  --join-cgroup "$T/nowhere/cgroup.procs" -- /bin/sh sh -c ': >"$0"' "$T/nojoin-ran" \
  3>"$D/report" 4<"$D/go" &
SPID=$!
exec {R}<"$D/report" {G}>"$D/go"
read -r -t 10 -u "$R" line || line="<none>"
[[ $line == "error 2 join-cgroup" ]] || fail "expected 'error 2 join-cgroup', got '$line'"
exec {R}<&- {G}>&-
finish 1
[[ ! -e $D/exit && ! -e $T/nojoin-ran ]] || fail "a task ran, or has an exit file, though its shim failed"
((FAILS == before)) && ok

# --- on cgroup v2 the task is made in the shim's cgroup (clone3 with
# CLONE_INTO_CGROUP) and the shim moves there after reporting its pid
# (needs root and a writable cgroup2 mount; skipped without) ---
cg2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/self/mounts)
BIRTHCG=${cg2:+$cg2/shimtest-birth.$$}
if [[ $(id -u) == 0 && -n $BIRTHCG ]] && mkdir "$BIRTHCG" 2>/dev/null; then
  before=$FAILS
  mkdir -p "$T/birthcg"; mkfifo "$T/birthcg/hold"
  start birthcg --join-cgroup "$BIRTHCG/cgroup.procs" -- /bin/sh sh -c 'read -r x <"$0"' "$T/birthcg/hold"
  in_birth() { [[ $(sed -n 's/^0:://p' "/proc/$1/cgroup") == "/${BIRTHCG#"$cg2"/}" ]]; }
  in_birth "$TASK_PID" || fail "task made in $(sed -n 's/^0:://p' "/proc/$TASK_PID/cgroup"), not in $BIRTHCG"
  # The shim moves before it reads the go, so by "started" it is there.
  go started
  in_birth "$SPID" || fail "the shim did not move into $BIRTHCG"
  echo done >"$T/birthcg/hold"
  finish 0; check_exit 0 0 0 ""
  rmdir "$BIRTHCG" 2>/dev/null || true
  ((FAILS == before)) && ok
else
  echo "skip [birthcg] (needs root and a writable cgroup2 mount)"
fi

# --- bad cwd fails before exec, with its step name ---
before=$FAILS
CASE=badcwd; D=$T/badcwd; mkdir -p "$D"; mkfifo "$D/report" "$D/go"
"$SHIM" --exit-file "$D/exit" --uid "$UIDN" --gid "$GIDN" --cwd "$T/nowhere" \
  --cgroup-root "$NOCG" -- /bin/true true 3>"$D/report" 4<"$D/go" &
SPID=$!
exec {R}<"$D/report" {G}>"$D/go"
read -r -t 10 -u "$R" line && [[ $line == pid\ * ]] || fail "no pid line"
go "execfailed 2 chdir"
finish 0
check_exit 127 0 2 chdir
((FAILS == before)) && ok

# --- abort: EOF on go, the task never runs, no exit file ---
before=$FAILS
start abort -- /bin/sh sh -c ": > '$T/abort/ran'"
exec {G}>&-
if read -r -t 10 -u "$R" line; then fail "unexpected report '$line' after abort"; fi
exec {R}<&-
finish 0
[[ ! -e $D/exit ]] || fail "exit file written on abort"
[[ ! -e $D/exit.tmp ]] || fail "exit.tmp written on abort"
[[ ! -e $D/ran ]] || fail "task ran although the start was aborted"
# The shim reaps the child before exiting, so its pid is gone or reused.
[[ ! -e /proc/$TASK_PID ]] || [[ $(cat /proc/$TASK_PID/comm 2>/dev/null) != taskscope-shim ]] ||
  fail "aborted child $TASK_PID still exists"
((FAILS == before)) && ok

# --- abort with a byte other than 'g' ---
before=$FAILS
start abort_x -- /bin/sh sh -c ": > '$T/abort_x/ran'"
printf x >&"$G"; exec {G}>&-
if read -r -t 10 -u "$R" line; then fail "unexpected report '$line' after abort"; fi
exec {R}<&-
finish 0
[[ ! -e $D/exit && ! -e $D/ran ]] || fail "aborted task ran or exit file written"
((FAILS == before)) && ok

# --- the environment is passed exactly, nothing added ---
before=$FAILS
CASE=env; D=$T/env; mkdir -p "$D"; mkfifo "$D/report" "$D/go"
env -i 'A=1' 'B=x y' 'C=' 'D=a=b' \
  "$SHIM" --exit-file "$D/exit" --uid "$UIDN" --gid "$GIDN" --cwd "$D" \
  --cgroup-root "$NOCG" --stdout "$D/out" -- /usr/bin/env env \
  3>"$D/report" 4<"$D/go" &
SPID=$!
exec {R}<"$D/report" {G}>"$D/go"
read -r -t 10 -u "$R" line && [[ $line == pid\ * ]] || fail "no pid line"
go started; finish 0; check_exit 0 0 0 ""
expected=$'A=1\nB=x y\nC=\nD=a=b'
[[ $(cat "$D/out") == "$expected" ]] || fail "env differs: $(cat "$D/out")"
((FAILS == before)) && ok

# --- no fd leaks: the task sees 0,1,2 and ls's own directory fd only ---
before=$FAILS
start fds --stdout "$T/fds/out" -- /bin/ls ls /proc/self/fd
go started; finish 0; check_exit 0 0 0 ""
[[ $(tr '\n' ' ' <"$D/out") == "0 1 2 3 " ]] || fail "task fds: $(tr '\n' ' ' <"$D/out")"
((FAILS == before)) && ok

# --- stdin/stdout/stderr files; outputs append, stdin defaults to /dev/null ---
before=$FAILS
mkdir -p "$T/stdio"
echo "old" >"$T/stdio/out"
printf 'in-data\n' >"$T/stdio/in"
start stdio --stdin "$T/stdio/in" --stdout "$T/stdio/out" --stderr "$T/stdio/err" \
  -- /bin/sh sh -c 'cat; echo out; echo err >&2; readlink /proc/self/fd/0 >&2'
go started; finish 0; check_exit 0 0 0 ""
[[ $(cat "$D/out") == $'old\nin-data\nout' ]] || fail "stdout: $(cat "$D/out")"
[[ $(cat "$D/err") == $'err\n'"$T/stdio/in" ]] || fail "stderr: $(cat "$D/err")"
[[ $(stat -c %a "$D/err") == 600 ]] || fail "stderr mode $(stat -c %a "$D/err")"  # logs: root's alone
((FAILS == before)) && ok

before=$FAILS
start devnull --stdout "$T/devnull/out" -- /bin/sh sh -c 'readlink /proc/self/fd/0; cat'
go started; finish 0; check_exit 0 0 0 ""
[[ $(cat "$D/out") == /dev/null ]] || fail "default stdin: $(cat "$D/out")"
((FAILS == before)) && ok

# --- default stdout/stderr: inherited from the shim ---
before=$FAILS
mkdir -p "$T/inherit"
CASE=inherit
start inherit -- /bin/sh sh -c 'echo to-out; echo to-err >&2' \
  >"$T/inherit/o" 2>"$T/inherit/e"
go started; finish 0; check_exit 0 0 0 ""
[[ $(cat "$D/o") == to-out && $(cat "$D/e") == to-err ]] ||
  fail "inherited stdio: '$(cat "$D/o")' '$(cat "$D/e")'"
((FAILS == before)) && ok

# --- stdout is a fifo: opened read-write, so the task never waits for a
# reader (the streamer may be restarting) and never gets SIGPIPE ---
before=$FAILS
mkdir -p "$T/fifo"; mkfifo "$T/fifo/out"
exec {F}<>"$T/fifo/out"   # the streamer's end, held like its fd store would
start fifo --stdout "$T/fifo/out" -- /bin/echo echo via-fifo
printf g >&"$G"; exec {G}>&-
read -r -t 10 -u "$R" line; [[ $line == started ]] || fail "report '$line'"
exec {R}<&-
finish 0; check_exit 0 0 0 ""
read -r -t 10 -u "$F" got || true
exec {F}<&-
[[ $got == via-fifo ]] || fail "fifo got '$got'"
((FAILS == before)) && ok

# --- --release-fifo: the shim holds both fifos past the task's exit, so
# what the task wrote outlives every reader, until it is released ---
before=$FAILS
mkdir -p "$T/held"; mkfifo "$T/held/out" "$T/held/err" "$T/held/release"
start held --stdout "$T/held/out" --stderr "$T/held/err" --release-fifo "$T/held/release" \
  -- /bin/sh sh -c 'echo kept-out; echo kept-err >&2; exit 4'
go started
for _ in $(seq 200); do [[ -f $D/exit ]] && break; sleep 0.05; done
check_exit 4 0 0 ""
kill -0 "$SPID" 2>/dev/null || fail "the shim did not wait for its release"
exec {F}<>"$T/held/out" {E}<>"$T/held/err"
read -r -t 10 -u "$F" got || true; [[ $got == kept-out ]] || fail "stdout fifo got '$got'"
read -r -t 10 -u "$E" got || true; [[ $got == kept-err ]] || fail "stderr fifo got '$got'"
exec {F}<&- {E}<&-
exec {X}<>"$T/held/release"; printf r >&"$X"; exec {X}>&-
finish 0
((FAILS == before)) && ok

# --- --keep-task-zombie (issue 59): journald attributes a copied line by
# the task's pid, so the ended task stays a zombie until the release; its
# exit file is written at its exit all the same, and an orphan it left is
# reaped meanwhile (the shim is the subreaper) ---
task_state() { # PID: its state letter in /proc, "" once it is gone
  local st
  st=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  st=${st##*) }
  echo "${st%% *}"
}
zombie_case() { # NAME CODE SIGNAL -- PROGRAM ARGV...
  local name=$1 code=$2 sig=$3 before=$FAILS orphan=""; shift 3
  mkdir -p "$T/$name"; mkfifo "$T/$name/out" "$T/$name/err" "$T/$name/release"
  start "$name" --stdout "$T/$name/out" --stderr "$T/$name/err" --release-fifo "$T/$name/release" \
    --keep-task-zombie "$@" || { finish 0; return; }
  go started
  for _ in $(seq 200); do [[ -f $D/exit ]] && break; sleep 0.05; done
  check_exit "$code" "$sig" 0 ""
  [[ $(task_state "$TASK_PID") == Z ]] || fail "task $TASK_PID is '$(task_state "$TASK_PID")' before the release, not a zombie"
  kill -0 "$SPID" 2>/dev/null || fail "the shim did not wait for its release"
  if [[ -f $D/orphan ]]; then
    orphan=$(cat "$D/orphan")
    for _ in $(seq 200); do [[ -z $(task_state "$orphan") ]] && break; sleep 0.05; done
    [[ -z $(task_state "$orphan") ]] || fail "orphan $orphan is '$(task_state "$orphan")': not reaped beside the zombie"
    [[ $(task_state "$TASK_PID") == Z ]] || fail "the task was reaped with its orphan"
  fi
  exec {X}<>"$D/release"; printf r >&"$X"; exec {X}>&-
  finish 0
  [[ -z $(task_state "$TASK_PID") ]] || fail "task $TASK_PID is still there after the shim: '$(task_state "$TASK_PID")'"
  ((FAILS == before)) && ok
}
zombie_case zombie_exit3 3 0 -- /bin/sh sh -c '(sleep 0.2) & echo $! >orphan; echo out; exit 3'
zombie_case zombie_sigterm 143 15 -- /bin/sh sh -c 'kill -TERM $$'

# --- --forward-stdout/--forward-stderr (issue 59): Nomad's log fifo, which
# the streamer writes, is held by the shim until the release: logmon reads
# until every writer has gone, once, and must not see that while the
# streamer restarts. A missing file is made, as for --stdout. ---
before=$FAILS
D=$T/fwd; mkdir -p "$D"; mkfifo "$D/out" "$D/err" "$D/release" "$D/nomad.fifo"
cat "$D/nomad.fifo" >"$D/logmon.out" &
logmon=$!
start fwd --stdout "$D/out" --stderr "$D/err" --release-fifo "$D/release" \
  --forward-stdout "$D/nomad.fifo" --forward-stderr "$D/nomad.err" -- /bin/sh sh -c 'exit 0'
go started
for _ in $(seq 200); do [[ -f $D/exit ]] && break; sleep 0.05; done
check_exit 0 0 0 ""
# The streamer writes a line and goes (killed): logmon still has a writer.
exec {X}<>"$D/nomad.fifo"; echo before-restart >&"$X"; exec {X}>&-
sleep 0.3
kill -0 "$logmon" 2>/dev/null || fail "logmon saw the end of its fifo while the shim held it"
[[ -f $D/nomad.err && $(stat -c %a "$D/nomad.err") == 600 ]] || fail "--forward-stderr's missing file was not made 0600"
exec {X}<>"$D/release"; printf r >&"$X"; exec {X}>&-
finish 0
for _ in $(seq 200); do kill -0 "$logmon" 2>/dev/null || break; sleep 0.05; done
kill -0 "$logmon" 2>/dev/null && { fail "logmon did not see the end after the release"; kill "$logmon"; }
wait "$logmon" 2>/dev/null || true
[[ $(cat "$D/logmon.out") == before-restart ]] || fail "logmon got '$(cat "$D/logmon.out")'"
((FAILS == before)) && ok
# A forward path planted as a symlink: the start fails at the holds.
before=$FAILS
CASE=fwd_symlink; D=$T/fwd_symlink; mkdir -p "$D"; mkfifo "$D/out" "$D/err" "$D/release"
ln -s "$T/victim.fwd" "$D/nomad.fifo"
"$SHIM" --exit-file "$D/exit" --uid "$UIDN" --gid "$GIDN" --cwd "$D" --cgroup-root "$NOCG" \
  --stdout "$D/out" --stderr "$D/err" --release-fifo "$D/release" --forward-stdout "$D/nomad.fifo" \
  -- /bin/true true 3>"$D/report" 4</dev/null 2>/dev/null
rc=$?
[[ $rc == 1 && $(cat "$D/report") == "error 40 hold-logs" ]] || fail "rc=$rc report '$(cat "$D/report")'"
[[ ! -e $T/victim.fwd ]] || fail "the shim made a file through a symlink"
((FAILS == before)) && ok

# --- a task that never ran wrote nothing: its shim does not wait ---
before=$FAILS
mkdir -p "$T/heldfail"; mkfifo "$T/heldfail/out" "$T/heldfail/err" "$T/heldfail/release"
start heldfail --stdout "$T/heldfail/out" --stderr "$T/heldfail/err" --release-fifo "$T/heldfail/release" \
  -- "$T/does-not-exist" x
go "execfailed 2 execve"
finish 0
check_exit 127 0 2 execve
((FAILS == before)) && ok

# --- hostile output paths (issue 32): the shim is root while it opens the
# task's stdout and stderr, which a scheduler puts where the task can write.
# Nothing a symlink, a hard link or another type there names is written;
# the start fails naming the step and the errno. ---
# refused NAME ERRNO SETUP...: SETUP plants $D/out (the case dir exists).
refused() {
  local name=$1 err=$2 before=$FAILS; shift 2
  CASE=$name; D=$T/$name; mkdir -p "$D"
  "$@"
  start "$name" --stdout "$D/out" -- /bin/echo echo leaked || { finish 0; return; }
  go "execfailed $err stdout"
  finish 0
  check_exit 127 0 "$err" stdout
  ((FAILS == before)) && ok
}
echo "secret" >"$T/victim"
plant_link() { ln -s "$T/victim" "$D/out"; }
plant_dir_link() { mkdir -p "$T/elsewhere"; ln -s "$T/elsewhere" "$D/via"; }
plant_dir() { mkdir "$D/out"; }
plant_hardlink() { ln "$T/victim" "$D/out"; }
plant_fifo_link() { mkfifo "$T/otherfifo.$RANDOM"; ln -s "$T"/otherfifo.* "$D/out"; }
plant_socket() { python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$D/out"; }
refused hostile_symlink 40 plant_link
refused hostile_fifo_symlink 40 plant_fifo_link
refused hostile_dir 21 plant_dir
refused hostile_hardlink 31 plant_hardlink
command -v python3 >/dev/null && refused hostile_socket 6 plant_socket
[[ $(cat "$T/victim") == secret && $(stat -c %h "$T/victim") -le 2 ]] || fail "the victim file changed: $(cat "$T/victim")"
# A symlink on the way to the file, not only at its end.
before=$FAILS
CASE=hostile_dir_symlink; D=$T/hostile_dir_symlink; mkdir -p "$D"; plant_dir_link
start hostile_dir_symlink --stdout "$D/via/out" -- /bin/echo echo leaked
go "execfailed 40 stdout"; finish 0
[[ ! -e $T/elsewhere/out ]] || fail "the shim created a file through a symlinked directory"
((FAILS == before)) && ok
if ((UIDN == 0)); then
  # A regular file of another user: neither root's nor the task's.
  refused hostile_owner 1 bash -c 'echo theirs >"$0"; chown 65534 "$0"' "$T/hostile_owner/out"
fi
# The manager's default output: /dev/null, a device, is taken.
before=$FAILS
start devnull_out --stdout /dev/null --stderr /dev/null -- /bin/echo echo into-null
go started; finish 0; check_exit 0 0 0 ""
((FAILS == before)) && ok
# The spool's holds take fifos only: a regular file there is the shim's error.
before=$FAILS
CASE=hold_not_fifo; D=$T/hold_not_fifo; mkdir -p "$D"; mkfifo "$D/err" "$D/release"; : >"$D/out"
"$SHIM" --exit-file "$D/exit" --uid "$UIDN" --gid "$GIDN" --cwd "$D" --cgroup-root "$NOCG" \
  --stdout "$D/out" --stderr "$D/err" --release-fifo "$D/release" -- /bin/true true 3>"$D/report" 4</dev/null 2>/dev/null
rc=$?
[[ $rc == 1 && $(cat "$D/report") == "error 6 hold-logs" ]] || fail "rc=$rc report '$(cat "$D/report")'"
((FAILS == before)) && ok

# --- a task on the host's root: --cap-bound cuts its bounding set, and
# no_new_privs holds (issue 32: both were ignored without isolation) ---
before=$FAILS
bound=()
((UIDN == 0)) && bound=(--cap-bound 0)
start nonisolated_caps --stdout "$T/nonisolated_caps/out" "${bound[@]}" --no-new-privs 1 -- /bin/sh sh -c \
  'grep -E "^(CapEff|CapBnd|NoNewPrivs):" /proc/self/status | tr -d "\t"'
go started; finish 0; check_exit 0 0 0 ""
grep -qx 'NoNewPrivs:1' "$D/out" || fail "NoNewPrivs: $(cat "$D/out")"
if ((UIDN == 0)); then
  grep -qx 'CapBnd:0000000000000000' "$D/out" || fail "CapBnd: $(cat "$D/out")"
  grep -qx 'CapEff:0000000000000000' "$D/out" || fail "root's CapEff after exec: $(cat "$D/out")"
fi
((FAILS == before)) && ok

# --- working directory, uid and gid ---
before=$FAILS
extra=()
if ((UIDN == 0)); then extra=(--groups "$GIDN,4242"); fi
start ids --stdout "$T/ids/out" "${extra[@]}" -- /bin/sh sh -c \
  'pwd; id -u; id -g; sed -n "s/^Groups:[[:space:]]*//p" /proc/self/status; sed -n "s/^SigIgn:[[:space:]]*//p;s/^SigBlk:[[:space:]]*//p" /proc/self/status'
go started; finish 0; check_exit 0 0 0 ""
mapfile -t L <"$D/out"
[[ ${L[0]} == "$D" ]] || fail "cwd ${L[0]}"
[[ ${L[1]} == "$UIDN" && ${L[2]} == "$GIDN" ]] || fail "ids ${L[1]} ${L[2]}"
if ((UIDN == 0)); then
  [[ $(echo ${L[3]}) == "$GIDN 4242" ]] || fail "groups '${L[3]}'"
fi
# No signal ignored or blocked in the task (sh itself ignores nothing here).
# /proc/self/status lists SigBlk before SigIgn.
[[ ${L[4]} =~ ^0+$ ]] || fail "SigBlk ${L[4]}"
[[ ${L[5]} =~ ^0+$ ]] || fail "SigIgn ${L[5]}"
((FAILS == before)) && ok

# --- an orphaned grandchild holding on does not delay the exit record ---
before=$FAILS
start orphan --stdout "$T/orphan/out" -- /bin/sh sh -c \
  'sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > gc.pid; exit 5'
go started; finish 0; check_exit 5 0 0 ""
gc=$(cat "$D/gc.pid")
KILL_PIDS+=("$gc")
[[ -e /proc/$gc ]] || fail "grandchild $gc not running (test premise)"
kill -9 "$gc" 2>/dev/null
((FAILS == before)) && ok

# --- the shim is the subreaper: orphans of the task are reparented to it ---
before=$FAILS
start reap --stdout "$T/reap/out" -- /bin/sh sh -c \
  '(sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > gc.pid); sed -n "s/^PPid:[[:space:]]*//p" /proc/$(cat gc.pid)/status'
go started; finish 0; check_exit 0 0 0 ""
gc=$(cat "$D/gc.pid"); KILL_PIDS+=("$gc"); kill -9 "$gc" 2>/dev/null
[[ $(cat "$D/out") == "$SPID" ]] || fail "orphan's parent is '$(cat "$D/out")', shim is $SPID"
((FAILS == before)) && ok

# --- the shim ignores SIGTERM/SIGHUP/SIGINT (the manager kills via systemd) ---
before=$FAILS
mkdir -p "$T/sigs"; mkfifo "$T/sigs/hold"
start sigs -- /bin/sh sh -c 'read x < hold; exit 7'
go started
kill -TERM "$SPID"; kill -HUP "$SPID"; kill -INT "$SPID"; kill -PIPE "$SPID"
[[ -e /proc/$SPID ]] || fail "shim died of a signal"
# The shim itself drops fds leaked by its parent (fd 9 here) and fds 3/4.
shimfds=$(ls /proc/$SPID/fd | sort -n | tr '\n' ' ')
for f in $shimfds; do
  [[ $f == [012] ]] && continue
  [[ $(readlink /proc/$SPID/fd/$f) == "$D/"* ]] && fail "shim holds fd $f: $(readlink /proc/$SPID/fd/$f)"
done
echo done >"$T/sigs/hold"
finish 0; check_exit 7 0 0 ""
((FAILS == before)) && ok

# --- the manager disappearing after 'started' loses nothing ---
before=$FAILS
mkdir -p "$T/mgrgone"; mkfifo "$T/mgrgone/hold"
start mgrgone -- /bin/sh sh -c 'read x < hold; exit 9'
go started    # closes our ends of fd 3 and 4, like a dead manager
echo done >"$T/mgrgone/hold"
finish 0; check_exit 9 0 0 ""
((FAILS == before)) && ok

# --- OOM kill (opt-in: needs root and a writable memory cgroup) ---
if [[ ${TASKSCOPE_SHIM_OOM_TEST:-0} == 1 ]]; then
  before=$FAILS
  CASE=oom
  cgline=$(grep -E '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' /proc/self/cgroup | head -n1)
  if [[ -n $cgline ]]; then
    OOMCG=/sys/fs/cgroup/memory${cgline##*:}/shimtest.$$
    LIMIT=memory.limit_in_bytes
  else
    OOMCG=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)/shimtest.$$
    LIMIT=memory.max
  fi
  if mkdir "$OOMCG" && echo $((16 << 20)) >"$OOMCG/$LIMIT"; then
    # tail keeps the last line of a pipe in memory; /dev/zero has no newline.
    start oom --cgroup-root /sys/fs/cgroup -- /usr/bin/tail tail /dev/zero
    echo "$TASK_PID" >"$OOMCG/cgroup.procs" || fail "cannot move task into $OOMCG"
    go started; finish 0
    [[ $(field oom_killed) == 1 && $(field exit_code) == 137 ]] || fail "oom: $(tr '\n' ' ' <"$D/exit")"
    rmdir "$OOMCG" 2>/dev/null || true
    ((FAILS == before)) && ok
  else
    fail "cannot create $OOMCG"
  fi
fi

# --- limits (issue 47): rlimits and oom_score_adj set before exec, as
# any user may (lower limits, a higher score); above them: a named step ---
before=$FAILS
start limits --rlimit 7 100 200 --rlimit 4 0 unlimited --oom-score-adj 500 \
  --stdout "$T/limits/out" -- /bin/sh sh -c 'cat /proc/self/oom_score_adj; ulimit -Sn; ulimit -Hn; ulimit -Hc'
go started; finish 0; check_exit 0 0 0 ""
# The shell's own limits are the task's: inherited from the exec'd task.
[[ $(tr '\n' ' ' <"$D/out") == "500 100 200 unlimited " ]] || fail "limits: $(tr '\n' ' ' <"$D/out")"
((FAILS == before)) && ok
if ((UIDN != 0)); then
  before=$FAILS
  hard=$(ulimit -Hn)
  if [[ $hard != unlimited ]]; then
    start rlimit_above_hard --rlimit 7 1 $((hard + 1)) -- /bin/true true
    go "execfailed 1 rlimit-nofile"
    finish 0
    check_exit 127 0 1 rlimit-nofile
    ((FAILS == before)) && ok
  fi
fi
before=$FAILS
CASE=badlimits; D=$T/badlimits; mkdir -p "$D"
# --keep-task-zombie without --release-fifo: nothing would ever reap the task;
# --forward-stdout without it: nothing would ever let go of the path.
for bad in "--rlimit 7 200 100" "--rlimit 99 1 1" "--rlimit 7 x 1" "--oom-score-adj 1001" "--oom-score-adj -" "--keep-task-zombie" \
  "--forward-stdout /tmp/x"; do
  # shellcheck disable=SC2086 # the words of one bad option
  out=$("$SHIM" --exit-file "$D/exit" --uid "$UIDN" --gid "$GIDN" --cwd / $bad -- /bin/true true 3>&1 4</dev/null 2>/dev/null)
  rc=$?
  [[ $rc == 2 && $out == "error 22 args" ]] || fail "$bad: rc=$rc out='$out'"
done
((FAILS == before)) && ok

# --- bad arguments: error report, no task ---
before=$FAILS
CASE=badargs; D=$T/badargs; mkdir -p "$D"
out=$("$SHIM" --exit-file "$D/exit" --uid x --gid 0 --cwd / -- /bin/true true 3>&1 4</dev/null 2>/dev/null)
rc=$?
[[ $rc == 2 && $out == "error 22 args" ]] || fail "rc=$rc out='$out'"
((FAILS == before)) && ok

if ((FAILS)); then
  echo "$FAILS failure(s)" >&2
  exit 1
fi
echo "all shim tests passed"
