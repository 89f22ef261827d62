# Helpers for the bus tier: a private dbus-daemon that this test starts and
# stops, with the project's daemons bus-activated on it from the build tree.
set -euo pipefail

: "${TASKSCOPE_BUILD_DIR:?}" "${TASKSCOPE_SRC_DIR:?}"
BUS_TMP=$(mktemp -d /tmp/taskscope-bus.XXXXXX)
BUS_ADDRESS="unix:path=$BUS_TMP/bus"
STATE_DIR="$BUS_TMP/state"
export TASKSCOPE_BUS_ADDRESS="$BUS_ADDRESS"

bus_cleanup() {
    [[ -n "${BUS_PID:-}" ]] && kill "$BUS_PID" 2>/dev/null || true
    pkill -f -- "--state-dir $STATE_DIR" 2>/dev/null || true
    # Shims hold their tasks' log fifos until released (manager/records/log_spool.hpp);
    # opened read-write, a fifo never blocks the open.
    local f fd
    for f in "$BUS_TMP"/spool/*.release; do
        [[ -p $f ]] || continue
        exec {fd}<>"$f" && printf r >&"$fd" && exec {fd}>&-
    done
    rm -rf "$BUS_TMP"
}
trap bus_cleanup EXIT

# Starts the bus and returns once it accepts connections: dbus-daemon
# prints its address only after it listens. BUS_EXTRA_CONFIG (XML) goes
# after the allow-everything policy, e.g. the project's policy files.
bus_start() {
    mkdir -p "$BUS_TMP/services" "$STATE_DIR"
    echo "{\"log_spool_dir\": \"$BUS_TMP/spool\", \"shim_unit\": \"\"}" >"$BUS_TMP/manager.json"
    cat >"$BUS_TMP/services/org.taskscope.Manager1.service" <<EOT
[D-BUS Service]
Name=org.taskscope.Manager1
Exec=$TASKSCOPE_BUILD_DIR/src/manager/daemon/taskscope-manager --bus-address $BUS_ADDRESS --systemd-address $BUS_ADDRESS --state-dir $STATE_DIR --shim $TASKSCOPE_BUILD_DIR/src/shim/bin/taskscope-shim --config $BUS_TMP/manager.json -v
EOT
    cat >"$BUS_TMP/bus.conf" <<EOT
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>$BUS_ADDRESS</listen>
  <servicedir>$BUS_TMP/services</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
${BUS_EXTRA_CONFIG:-}
</busconfig>
EOT
    exec {addr_fd}< <(dbus-daemon --config-file="$BUS_TMP/bus.conf" --nofork --print-address=1 \
        2>"$BUS_TMP/dbus.log" & echo "pid $!")
    # The echo and dbus-daemon's address race each other to the pipe.
    local line addr=""
    BUS_PID=""
    while [[ -z "$BUS_PID" || -z "$addr" ]] && read -r line <&"$addr_fd"; do
        case "$line" in
        "pid "*) BUS_PID=${line#pid } ;;
        unix:*) addr=$line ;;
        esac
    done
    [[ -n "$addr" ]] || { echo "dbus-daemon did not start: $line"; cat "$BUS_TMP/dbus.log"; exit 1; }
}

# Calls a method and prints the reply, or "ERROR <name>: <message>".
call() {
    local out
    if out=$(dbus-send --bus="$BUS_ADDRESS" --print-reply --dest=org.taskscope.Manager1 "$@" 2>&1); then
        printf '%s\n' "$out"
    else
        printf 'ERROR %s\n' "${out#Error }"
    fi
}

expect_error() {
    local want=$1
    shift
    local got
    got=$(call "$@")
    if [[ "$got" != "ERROR $want:"* ]]; then
        echo "FAIL: expected $want from $*, got: $got"
        exit 1
    fi
    echo "ok: $want (${got#ERROR $want: })"
}

# Waits (30 s at most) until a command succeeds; else calls the test's fail.
wait_for() {
    local what=$1 i
    shift
    for ((i = 0; i < 300; i++)); do
        "$@" && return 0
        sleep 0.1  # the poll's pace (0.1 s between looks), not a wait for anything
    done
    fail "timed out waiting for $what"
}

# A `busctl monitor` on the private bus hears it only once its BecomeMonitor
# call is through, and nothing tells when that is. monitor_sync FILE sends a
# marker signal (again at each poll) until the monitor has written it to
# FILE: then it listens, and FILE holds every message the bus routed to it
# before. A monitor with matches needs --match "$MONITOR_MATCH" among them.
# The marker's lines name MONITOR_MARK: leave them out of a count of signals.
MONITOR_MARK=org.taskscope.Test.Monitor
MONITOR_MATCH="type='signal',interface='$MONITOR_MARK'"
monitor_marked() {  # FILE NONCE
    busctl --address="$BUS_ADDRESS" emit /org/taskscope/Test "$MONITOR_MARK" Mark s "$2" && grep -qF "$2" "$1"
}
monitor_sync() {  # FILE
    wait_for "busctl monitor to hear a marker (into $1)" monitor_marked "$1" "mark-$$-$RANDOM$RANDOM"
}

# Waits (30 s at most) for a message a monitor writing FILE heard (start
# it with its match and monitor_sync it before the cause): woken by each
# line the monitor writes (tail -f), never by a clock. The event a test
# waits for is the signal itself, not a state it polls for.
wait_signal() {  # WHAT FILE PATTERN
    timeout 30 grep -m1 -qF -- "$3" < <(tail -n +1 -f "$2") || fail "no $1 within 30 s"
}

# Starts the stand-in systemd (systemd_fake.cpp) in MODE and returns once
# it serves; its pid in FAKE_PID. Start it before the manager's first
# call: the manager asks systemd's version when it starts.
systemd_fake_start() {
    exec {fake_fd}< <("$TASKSCOPE_BUILD_DIR/tests/bus/taskscope-bus-systemd-fake" "$BUS_ADDRESS" "$1" \
        2>>"$BUS_TMP/fake.log" & echo "pid $!")
    local line
    read -r line <&"$fake_fd"
    FAKE_PID=${line#pid }
    read -r line <&"$fake_fd"
    [[ "$line" == ready ]] || { echo "FAIL: fake systemd said '$line': $(cat "$BUS_TMP/fake.log")"; exit 1; }
}
