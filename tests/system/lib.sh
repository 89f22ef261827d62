# Helpers for system tests: they run as root in the guest, against the
# installed services, through busctl and taskscopectl as an operator would.
set -euo pipefail

M=/org/taskscope/Manager1
I=org.taskscope.Manager1
CTL=taskscopectl
command -v $CTL >/dev/null || CTL="$TASKSCOPE_BUILD_DIR/src/cli/taskscopectl"

fail() { echo "FAIL: $*"; exit 1; }
# grep -q for the end of a pipeline: it reads all its input. grep -q quits at
# its first match, so a writer that is not done (taskscopectl writes a table
# a line at a time, journalctl pages) dies of SIGPIPE and, under pipefail,
# the pipeline fails though the line was there.
quiet_grep() { grep "$@" >/dev/null; }
ok() { echo "ok: $*"; }

mgr() { busctl call $I $M $I "$@"; }
# GetTask's JSON, unwrapped from busctl's quoting.
task_json() { busctl --json=short call $I $M $I GetTask ss "$1" "$2" | jq -r '.data[0]'; }
task_field() { task_json "$1" "$2" | jq -r ".$3"; }

# The cgroup directory of a task, as systemd reports it.
task_cgroup_dir() { echo "/sys/fs/cgroup$(task_field "$1" "$2" cgroup)"; }

# Waits (bounded) until a command succeeds; for conditions that have no
# event a shell can wait on, such as a file appearing.
wait_until() {
    local what=$1 tries=$2 i
    shift 2
    for ((i = 0; i < tries; i++)); do
        "$@" && return 0
        sleep 0.1  # the poll's pace (0.1 s between looks), not a wait for anything
    done
    fail "timed out waiting for $what"
}

# A `busctl monitor` hears the bus only once its BecomeMonitor call is
# through, and nothing tells when that is. Given --match "$MONITOR_MATCH"
# beside its own matches, it hears a marker signal too: monitor_sync FILE
# sends one (again at each poll) until the monitor has written it to FILE.
# Then the monitor listens, and FILE holds every message the bus routed to
# it before the marker (the bus keeps their order). The marker's lines name
# MONITOR_MARK: leave them out of a count of a file's signals.
MONITOR_MARK=org.taskscope.Test.Monitor
MONITOR_MATCH="type='signal',interface='$MONITOR_MARK'"
monitor_marked() {  # FILE NONCE
    busctl emit /org/taskscope/Test "$MONITOR_MARK" Mark s "$2" && grep -qF "$2" "$1"
}
monitor_sync() {  # FILE
    wait_until "busctl monitor to hear a marker (into $1)" 100 monitor_marked "$1" "mark-$$-$RANDOM$RANDOM"
}

assert_eq() { [[ "$1" == "$2" ]] || fail "$3: got '$1', want '$2'"; ok "$3 = $2"; }

# How many processes still sit in a unit's cgroup (on any hierarchy).
in_scope() { grep -l "/$1\$" /proc/[0-9]*/cgroup 2>/dev/null | wc -l; }

# The streamer's tests: the manager hands task output to taskscope-streamer
# while this drop-in is there. streamer_on puts it there and (re)starts
# both daemons; streamer_off, for a test's cleanup, takes it away again.
STREAMER_DROPIN=/etc/taskscope/manager.json.d/50-streamer.json
streamer_on() {
    mkdir -p "${STREAMER_DROPIN%/*}"
    echo '{"streamer":true}' >"$STREAMER_DROPIN"
    systemctl restart taskscope-manager
    systemctl start taskscope-streamer
}
streamer_off() {
    rm -f "$STREAMER_DROPIN"
    systemctl restart taskscope-manager || true
}
streamer_pid() { systemctl show -p MainPID --value taskscope-streamer; }
