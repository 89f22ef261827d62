#!/usr/bin/env bash
# nomad-driver-taskscope against the manager on a private bus (a stand-in
# systemd, no streamer): the test client plays Nomad's client (handshake,
# SetConfig, Fingerprint, StartTask/WaitTask/StopTask/DestroyTask, the
# plugin-shutdown error for streams open at Shutdown and calls after it);
# a plugin started without Nomad's cookie refuses to run. Cgroups, roots
# of a task's own, logs, stats and exec are the system tier's
# (tests/system/test_nomad_driver.sh).
source "$(dirname "$0")/lib.sh"
bus_start
FAKE_PID=""
fail() { echo "FAIL: $*"; exit 1; }

PLUGIN=$TASKSCOPE_BUILD_DIR/src/nomad/nomad-driver-taskscope
CLIENT=$TASKSCOPE_BUILD_DIR/tests/nomad/nomad-test-client
M=/org/taskscope/Manager1
I=org.taskscope.Manager1

# Whatever the round left running (its last task outlives the plugin, as
# tasks do) is killed before the manager goes.
end() {
    local a t
    while read -r a t; do
        [[ -n "$a" ]] && call $M $I.StopTask "string:$a" "string:$t" string:SIGKILL int64:0 >/dev/null
    done < <(busctl --address="$BUS_ADDRESS" --json=short call $I $M $I ListTasks 2>/dev/null |
        jq -r '.data[0][] | "\(.[0]) \(.[1])"' 2>/dev/null)
    [[ -n "$FAKE_PID" ]] && kill "$FAKE_PID" 2>/dev/null || true
    bus_cleanup
}
trap end EXIT

out=$(env -u NOMAD_PLUGIN_MAGIC_COOKIE "$PLUGIN" 2>&1) && fail "the plugin ran without the cookie: $out"
[[ "$out" == *"This binary is a plugin"* ]] || fail "no refusal without the cookie: $out"
echo "ok: no cookie, no plugin"

systemd_fake_start removed-after-reply
mkdir -p "$BUS_TMP/work"
"$CLIENT" --bus "$PLUGIN" "$BUS_TMP/work" || fail "the driver round (output above)"
echo "ok: driver round on the bus tier"
