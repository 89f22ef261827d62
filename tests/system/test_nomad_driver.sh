#!/usr/bin/env bash
# variants: v2 v1
# nomad-driver-taskscope against the installed taskscope, with the build's
# nomad-test-client playing Nomad's client (Nomad itself is not in
# Debian): the go-plugin handshake, base plugin, fingerprint, a task
# started with its output in Nomad's fifos, inspect, stats, signal, exec,
# an interactive exec on a terminal with a resize, wait with an exit code,
# the plugin killed and a new one recovering the task from its handle,
# stop, destroy; an allocation network made through the driver, a task in
# its own root joining it (its interfaces, a read-only mount, Nomad's
# secrets), the network destroyed; shutdown; and the refusal without the
# magic cookie.
source "$(dirname "$0")/lib.sh"

PLUGIN=/usr/lib/nomad/plugins/nomad-driver-taskscope
[ -x "$PLUGIN" ] || fail "$PLUGIN is not installed"
CLIENT=$TASKSCOPE_BUILD_DIR/tests/nomad/nomad-test-client
WORK=$(mktemp -d /tmp/nomad-alloc-XXXXXX)
cleanup() {
    for t in $($CTL list 2>/dev/null | awk '/^nomadtest-/ {print $1" "$2}' | tr ' ' '/' ); do
        $CTL stop --grace 0 "${t%%/*}" "${t#*/}" >/dev/null 2>&1 || true
        $CTL forget "${t%%/*}" "${t#*/}" >/dev/null 2>&1 || true
    done
    for n in $($CTL network list 2>/dev/null | awk '/^nomadtest-/ {print $1}'); do
        $CTL network destroy "$n" >/dev/null 2>&1 || true
    done
    rm -rf "$WORK" /tmp/nomad-driver-taskscope-*
}
trap cleanup EXIT

# Run by hand, the plugin says what it is and exits 1.
set +e
out=$("$PLUGIN" 2>&1 </dev/null)
rc=$?
set -e
assert_eq "$rc" 1 "exit status without the magic cookie"
grep -q "This binary is a plugin" <<<"$out" || fail "no message for humans: '$out'"
set +e
out=$(NOMAD_PLUGIN_MAGIC_COOKIE=wrong "$PLUGIN" 2>&1 </dev/null)
rc=$?
set -e
assert_eq "$rc" 1 "exit status with a wrong cookie"

systemctl start taskscope-manager taskscope-streamer
"$CLIENT" "$PLUGIN" "$TASKSCOPE_VARIANT" "$WORK" || fail "the driver scenario failed (see above)"
ok "the driver scenario passed"

# Nothing of the scenario is left with the manager.
left=$($CTL list 2>/dev/null | grep -c '^nomadtest-' || true)
assert_eq "$left" 0 "tasks left behind"
left=$(ls /run/netns 2>/dev/null | grep -c '^nomadtest-' || true)
assert_eq "$left" 0 "network namespaces left behind"
