#!/usr/bin/env bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# nomad-driver-taskscope as installed by the package, loaded the way a
# Nomad client loads it (Nomad itself is not in Debian):
# - the go-plugin tier (tests/goplugin): HashiCorp's go-plugin client with
#   Nomad's exact ClientConfig walks a task's life through two agents (the
#   first dies, the second reattaches to the same plugin process), the
#   plugin's SIGKILL and a new plugin's recovery of the task, stats with
#   total_ticks, signal, exec with and without a terminal, SIGINT ignored,
#   bad input, stop, wait, destroy and Shutdown; then jobs written for
#   exec and raw_exec (issue 47): CapEff/CapBnd/NoNewPrivs, pid and ipc
#   namespaces per mode, work_dir, nobody without a user, a dynamic
#   workload user owning its files, a denied UID refused, denied_envvars,
#   NOMAD_UNIX_ADDR on the host's root, memory.max for Nomad's three
#   memory shapes, bad values refused naming the key, and log_journal
#   (logmon still reads every line through the fifos; journald has them);
# - the raw client (tests/nomad) for the rest: ExecTask past its deadline,
#   TaskEvents, an allocation network with a task in its own root joining
#   it, Shutdown;
# - and the refusal without the magic cookie.
source "$(dirname "$0")/lib.sh"

PLUGIN=/usr/lib/nomad/plugins/nomad-driver-taskscope
[ -x "$PLUGIN" ] || fail "$PLUGIN is not installed"
GOTEST=$TASKSCOPE_BUILD_DIR/tests/goplugin/nomad-goplugin-test
[ -x "$GOTEST" ] || fail "$GOTEST is not built (TASKSCOPE_GOPLUGIN_TESTS=OFF, or no Go: scripts/install-deps.sh)"
CLIENT=$TASKSCOPE_BUILD_DIR/tests/nomad/nomad-test-client
WORK=$(mktemp -d /tmp/nomad-alloc-XXXXXX)
cleanup() {
    # Whatever a failed run left (the go-plugin tier kills its own
    # plugins when a step fails): its tasks, its networks.
    for t in $($CTL list 2>/dev/null | awk '/^nomad(test|go)-/ {print $1" "$2}' | tr ' ' '/'); do
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
start=$(date +%s%N)
"$GOTEST" -plugin "$PLUGIN" -work "$WORK" -readme "$TASKSCOPE_SRC_DIR/README.md" -tier system -cgroup "$TASKSCOPE_VARIANT" ||
    fail "the go-plugin tier failed (see above)"
ok "the go-plugin tier passed in $((($(date +%s%N) - start) / 1000000)) ms of guest time"
"$CLIENT" "$PLUGIN" "$TASKSCOPE_VARIANT" "$WORK" || fail "the raw client's scenario failed (see above)"
ok "the raw client's scenario passed"

# Nothing of either is left with the manager, and no plugin runs on.
left=$($CTL list 2>/dev/null | grep -cE '^nomad(test|go)-' || true)
assert_eq "$left" 0 "tasks left behind"
left=$(ls /run/netns 2>/dev/null | grep -c '^nomadtest-' || true)
assert_eq "$left" 0 "network namespaces left behind"
left=$(pgrep -cx nomad-driver-ta || true)
assert_eq "$left" 0 "plugin processes left running"
