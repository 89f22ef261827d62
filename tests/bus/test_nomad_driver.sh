#!/usr/bin/env bash
# nomad-driver-taskscope against the manager on a private bus (a stand-in
# systemd, no streamer):
# - the go-plugin tier (tests/goplugin): HashiCorp's go-plugin client with
#   Nomad's exact ClientConfig: handshake, the base plugin, Init, a task
#   started by one agent that then dies, a second agent reattaching to the
#   same plugin process, SIGINT ignored, bad input, the plugin SIGKILLed
#   and a new one recovering the task, stop/wait/destroy, Shutdown (stats
#   and exec need the streamer: the system tier's);
# - the raw client's round (tests/nomad): tasks the manager has and Nomad
#   holds no handle for, replaced by a new start; streams open at Shutdown
#   ended with the plugin-shutdown error;
# - and a plugin started without Nomad's cookie refuses to run.
source "$(dirname "$0")/lib.sh"
bus_start
FAKE_PID=""
fail() { echo "FAIL: $*"; exit 1; }

PLUGIN=$TASKSCOPE_BUILD_DIR/src/nomad/nomad-driver-taskscope
GOTEST=$TASKSCOPE_BUILD_DIR/tests/goplugin/nomad-goplugin-test
CLIENT=$TASKSCOPE_BUILD_DIR/tests/nomad/nomad-test-client
M=/org/taskscope/Manager1
I=org.taskscope.Manager1

# Whatever a round left running (its last task outlives the plugin, as
# tasks do) is killed before the manager goes: the kill reaches it through
# the stand-in systemd's KillUnit, which may come after StopTask's reply,
# so the stand-in stays until the manager has seen every task exit.
tasks() {
    busctl --address="$BUS_ADDRESS" --json=short call $I $M $I ListTasks 2>/dev/null |
        jq -r ".data[0][] | $1" 2>/dev/null
}
end() {
    local a t i
    while read -r a t; do
        [[ -n "$a" ]] && call $M $I.StopTask "string:$a" "string:$t" string:SIGKILL int64:0 >/dev/null
    done < <(tasks '"\(.[0]) \(.[1])"')
    for ((i = 0; i < 100; i++)); do
        tasks '.[2]' | grep -qvx exited || break
        sleep 0.1  # the poll's pace
    done
    [[ -n "$FAKE_PID" ]] && kill "$FAKE_PID" 2>/dev/null || true
    bus_cleanup
}
trap end EXIT

out=$(env -u NOMAD_PLUGIN_MAGIC_COOKIE "$PLUGIN" 2>&1) && fail "the plugin ran without the cookie: $out"
[[ "$out" == *"This binary is a plugin"* ]] || fail "no refusal without the cookie: $out"
echo "ok: no cookie, no plugin"

[[ -x "$GOTEST" ]] || fail "$GOTEST is not built (TASKSCOPE_GOPLUGIN_TESTS=OFF, or no Go: scripts/install-deps.sh)"
systemd_fake_start removed-after-reply
mkdir -p "$BUS_TMP/go" "$BUS_TMP/work"
"$GOTEST" -plugin "$PLUGIN" -work "$BUS_TMP/go" -readme "$TASKSCOPE_SRC_DIR/README.md" -tier bus ||
    fail "the go-plugin tier (output above)"
echo "ok: the go-plugin tier on the bus tier"
"$CLIENT" --bus "$PLUGIN" "$BUS_TMP/work" || fail "the raw client's round (output above)"
echo "ok: the raw client's round on the bus tier"
