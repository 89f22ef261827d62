#!/usr/bin/env bash
# variants: deb13-v2 (deb12-v2) (deb12-v1)
# Plugin tasks (CSI): a task whose spec declares a plugin gets a socket
# directory and CSI_ENDPOINT; once its socket answers, the registry calls
# the CSI Identity service over gRPC, registers the plugin with its
# provider, version and capabilities, and probes it at its interval. A
# not-ready answer is a health change; a manager restart keeps the
# registration (re-probed, not announced twice); the end of the task
# deregisters it and removes its socket, also when it ended while the
# manager was down. A socket that never appears makes the plugin unhealthy
# with the reason, never a hung start; a second task claiming the name is
# refused. The plugin is the test tree's CSI server, run as an isolated
# task (its own root; the plugins' directory comes in at mount_dir as a
# bidirectional volume, the server binary as a read-only one).
source "$(dirname "$0")/lib.sh"

A=csi$$
RP=$M/plugins
RI=org.taskscope.PluginRegistry1
PI=org.taskscope.Plugin1
PLUGIN=$TASKSCOPE_BUILD_DIR/tests/csi/taskscope-test-csi-plugin
MON=/run/csi-monitor-$$.json
cleanup() {
    set +e
    [[ -n "${MONITOR_PID:-}" ]] && kill "$MONITOR_PID" 2>/dev/null
    for t in plugin silent; do
        mgr StopTask sssx $A $t "" 0 >/dev/null 2>&1
    done
    # A forget is refused while its task still stops: ask again, bounded,
    # so the task dirs go with the tasks.
    local i t left
    for ((i = 0; i < 300; i++)); do
        left=0
        for t in plugin silent; do
            mgr ForgetTask ss $A $t >/dev/null 2>&1 && continue
            mgr GetTask ss $A $t >/dev/null 2>&1 && left=1
        done
        ((left)) || break
        sleep 0.1  # the retries' pace
    done
    rm -f "$MON"
}
trap cleanup EXIT
systemctl reset-failed taskscope-manager 2>/dev/null || true
[[ -x $PLUGIN ]] || fail "no test plugin at $PLUGIN"

busctl monitor --json=short --match "type=signal,interface=$RI" --match "$MONITOR_MATCH" >"$MON" 2>/dev/null &
MONITOR_PID=$!
monitor_sync "$MON"
signals() { grep -c "\"member\":\"$1\"" "$MON" || true; }
has_signal() { [[ $(signals "$1") -ge ${2:-1} ]]; }

spec=$(jq -cn --arg cmd "$PLUGIN" --arg bin "${PLUGIN%/*}" '{command: $cmd, args: ["org.taskscope.test-csi", "1.2.3"], logs: false, user: "root",
    plugin: {type: "csi", name: "hostpath", health_interval_ms: 300},
    isolation: {filesystem: true, volumes: [{source: $bin, target: $bin, read_only: true}]}}')
t0=$(date +%s%N)
mgr StartTask sss $A plugin "$spec" >/dev/null
wait_until "PluginRegistered" 300 has_signal PluginRegistered
echo "StartTask to PluginRegistered: $((($(date +%s%N) - t0) / 1000000)) ms"
grep '"member":"PluginRegistered"' "$MON" | sed -n 1p | jq -e '.payload.data[0:5] == ["csi", "hostpath", "org.taskscope.test-csi", "1.2.3", true]' >/dev/null ||
    fail "PluginRegistered: $(grep PluginRegistered "$MON")"
ok "PluginRegistered(csi, hostpath, org.taskscope.test-csi, 1.2.3, healthy)"

list() { busctl --json=short call $I $RP $RI ListPlugins | jq -c '.data[0]'; }
obj=$(busctl --json=short call $I $RP $RI ListPlugins | jq -r '.data[0][0][5]')
prop() { busctl --json=short get-property $I "$obj" $PI "$1" | jq -r -c .data; }
assert_eq "$(prop Provider)" org.taskscope.test-csi "Provider"
assert_eq "$(prop Version)" 1.2.3 "Version"
assert_eq "$(prop Healthy)" true "Healthy"
assert_eq "$(prop Capabilities)" '["CONTROLLER_SERVICE","VOLUME_EXPANSION_ONLINE"]' "Capabilities"
assert_eq "$(prop Task)" plugin "Task"
sock=$(prop SocketPath)
assert_eq "$sock" /var/lib/taskscope/plugins/csi/hostpath/csi.sock "SocketPath"
[[ -S $sock ]] || fail "$sock is not a socket"
pid=$(task_field $A plugin pid)
tr '\0' '\n' </proc/$pid/environ | quiet_grep -x "CSI_ENDPOINT=unix:///csi/csi.sock" || fail "the task has no CSI_ENDPOINT=unix:///csi/csi.sock"
[[ -S /proc/$pid/root/csi/csi.sock ]] || fail "the task does not see its socket at /csi/csi.sock"
[[ -e /proc/$pid/root/var/lib/taskscope ]] && fail "the isolated plugin sees the host's /var/lib/taskscope"
[[ "$(readlink /proc/$pid/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ]] || fail "the plugin shares the host's mount namespace"
ok "the isolated plugin listens at /csi/csi.sock (CSI_ENDPOINT); the host sees it at $sock"
busctl --json=short call $I $M org.freedesktop.DBus.ObjectManager GetManagedObjects | jq -e --arg o "$obj" '.data[0][$o]["org.taskscope.Plugin1"]' >/dev/null ||
    fail "the plugin is not in the manager's GetManagedObjects"
ok "the plugin object is in GetManagedObjects"
# Readable by anyone, like the tasks.
setpriv --reuid=nobody --regid=nogroup --clear-groups busctl get-property $I "$obj" $PI Healthy >/dev/null ||
    fail "nobody cannot read the plugin's properties"

# A second task claiming the name is refused, and nothing of it is left.
# dbus-send prints the error's name (busctl only its message).
start_named() { dbus-send --system --print-reply --dest=$I $M $I.StartTask string:"$1" string:"$2" string:"$3" 2>&1; }
out=$(start_named ${A}b plugin "$spec") && fail "a second claimant started: $out"
grep -q "org.taskscope.Error.PluginNameInUse" <<<"$out" || fail "wrong error for a second claimant: $out"
grep -q "already served by task ${A}/plugin" <<<"$out" || fail "the error does not name the serving task: $out"
mgr GetTask ss ${A}b plugin >/dev/null 2>&1 && fail "the refused task exists"
ok "a second task claiming csi/hostpath: $out"
bad=$(jq -cn '{command: "/bin/true", plugin: {type: "nfs", name: "x"}}')
out=$(start_named ${A}b bad "$bad") && fail "an unknown plugin type started"
grep -q "org.taskscope.Error.InvalidSpec" <<<"$out" || fail "wrong error for an unknown type: $out"
ok "an unknown plugin type is an invalid spec"

# Not ready: a health change, the task's state unchanged.
t0=$(date +%s%N)
kill -USR1 "$pid"
wait_until "PluginHealthChanged(false)" 300 has_signal PluginHealthChanged
echo "not ready to PluginHealthChanged: $((($(date +%s%N) - t0) / 1000000)) ms"
grep '"member":"PluginHealthChanged"' "$MON" | tail -n1 | jq -e '.payload.data[0:3] == ["csi", "hostpath", false]' >/dev/null ||
    fail "PluginHealthChanged: $(grep PluginHealthChanged "$MON")"
assert_eq "$(prop Healthy)" false "Healthy after not-ready"
assert_eq "$(task_field $A plugin state)" running "the plugin's task"

# A restart of the manager keeps the registration: no second PluginRegistered.
systemctl reset-failed taskscope-manager
restarted_us=$(date +%s%6N)
systemctl restart taskscope-manager
wait_until "the plugin back on the bus" 300 bash -c "busctl get-property $I $obj $PI Name >/dev/null 2>&1"
# Several heartbeats of the new manager: three probes (LastCheck moves at
# each), then whatever they signalled is in the monitor's file.
probes=0 last_check=$restarted_us
probed() {
    local at
    at=$(prop LastCheck)
    [[ "$at" =~ ^[0-9]+$ ]] && ((at > last_check)) && probes=$((probes + 1)) last_check=$at
    ((probes >= 3))
}
wait_until "three probes by the restarted manager" 300 probed
monitor_sync "$MON"
assert_eq "$(signals PluginRegistered)" 1 "PluginRegistered signals after a manager restart"
assert_eq "$(prop Provider)" org.taskscope.test-csi "Provider after a restart"
assert_eq "$(prop Healthy)" false "Healthy after a restart (still not ready)"
kill -USR1 "$pid"
wait_until "PluginHealthChanged(true)" 300 has_signal PluginHealthChanged 2
assert_eq "$(prop Healthy)" true "Healthy once ready again"

# The task ends while the manager is down (issue 32): at its next start
# the plugin leaves the registry, with the reason, and its socket with it.
# (An end while the manager runs is the silent plugin's, below.)
[[ -S $sock ]] || fail "no socket $sock while the plugin runs"
systemctl stop taskscope-manager
kill -KILL "$pid"
t0=$(date +%s%N)
systemctl start taskscope-manager
wait_until "PluginDeregistered" 300 has_signal PluginDeregistered
echo "manager start to PluginDeregistered: $((($(date +%s%N) - t0) / 1000000)) ms"
grep '"member":"PluginDeregistered"' "$MON" | jq -e '.payload.data[0:2] == ["csi", "hostpath"]' >/dev/null ||
    fail "PluginDeregistered: $(grep PluginDeregistered "$MON")"
ok "PluginDeregistered: $(grep '"member":"PluginDeregistered"' "$MON" | jq -r '.payload.data[2]')"
assert_eq "$(list)" '[]' "ListPlugins after the task ended"
busctl get-property $I "$obj" $PI Name >/dev/null 2>&1 && fail "the plugin object outlived its task"
[[ -e $sock ]] && fail "the socket outlived its plugin"
ok "no object, no socket left"

# A socket that never appears: unhealthy with the reason, the start not held.
silent=$(jq -cn '{command: "/bin/sleep", args: ["600"], logs: false,
    plugin: {type: "csi", name: "silent", socket_timeout_ms: 1000, health_interval_ms: 500}}')
t0=$(date +%s%N)
mgr StartTask sss $A silent "$silent" >/dev/null
echo "StartTask of a plugin that never listens answered in $((($(date +%s%N) - t0) / 1000000)) ms"
wait_until "the silent plugin registered" 300 has_signal PluginRegistered 2
grep '"member":"PluginRegistered"' "$MON" | tail -n1 | jq -e '.payload.data[1] == "silent" and .payload.data[4] == false' >/dev/null ||
    fail "silent PluginRegistered: $(grep PluginRegistered "$MON" | tail -n1)"
sobj=$(busctl --json=short call $I $RP $RI ListPlugins | jq -r '.data[0][0][5]')
msg=$(busctl --json=short get-property $I "$sobj" $PI Message | jq -r .data)
grep -q "did not appear within 1000 ms" <<<"$msg" || fail "silent plugin's message: $msg"
ok "a plugin whose socket never appears: unhealthy, '$msg'"
mgr StopTask sssx $A silent "" 0 >/dev/null
wait_until "PluginDeregistered of the silent plugin" 300 has_signal PluginDeregistered 2
cleanup
trap - EXIT
dir_gone() { [[ ! -e /var/lib/taskscope/tasks-root/$A ]]; }
wait_until "the task dir of $A to go" 100 dir_gone
ok "no task dir of this test left"
echo "csi plugin: all checks passed"
