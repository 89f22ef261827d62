#!/usr/bin/env bash
# variants: deb13-v2 (deb12-v2) (deb12-v1)
# Dangling scopes (seed 002's reconciler): a scope started under nomad.slice
# behind the manager's back, named like a task's, is killed once older than
# the creation grace, with a journal line and a DanglingScopeStopped signal;
# a tracked task, a scope in another slice and one not named like a task
# are left alone. In dry-run mode the scope is only reported.
source "$(dirname "$0")/lib.sh"

DROPIN=/etc/taskscope/manager.json.d/50-test-reconciler.json
MON=/run/reconciler-monitor.json
cleanup() {
    set +e
    [[ -n "${MONITOR_PID:-}" ]] && kill "$MONITOR_PID" 2>/dev/null
    for u in rc1-dangling rc1-dry rc1-other plain rc9-left; do systemctl stop "$u.scope" 2>/dev/null; done
    systemctl stop nomad-reserve-rc9.slice 2>/dev/null
    rm -f "$DROPIN" "$MON"
    systemctl restart taskscope-manager
}
trap cleanup EXIT

mkdir -p "$(dirname "$DROPIN")"
echo '{"dangling_scopes_period_ms": 5000, "dangling_scopes_creation_grace_ms": 5000}' >"$DROPIN"
systemctl restart taskscope-manager
mgr ListTasks >/dev/null
journalctl -q -u taskscope-manager -n 20 --no-pager | quiet_grep "Dangling scopes: first pass in 5000 ms" ||
    fail "the manager did not take the drop-in: $(journalctl -q -u taskscope-manager -n 5 --no-pager)"
ok "manager restarted with a 5 s period and a 5 s grace"

busctl monitor --json=short --match "type=signal,interface=$I,member=DanglingScopeStopped" >"$MON" 2>/dev/null &
MONITOR_PID=$!
$CTL run rc1 tracked -- /bin/sleep 600 >/dev/null
since=$(date +%s)
systemd-run --quiet --scope --unit=rc1-dangling --slice=nomad.slice sleep 600 >/dev/null 2>&1 </dev/null &
systemd-run --quiet --scope --unit=rc1-other --slice=system.slice sleep 600 >/dev/null 2>&1 </dev/null &
systemd-run --quiet --scope --unit=plain --slice=nomad.slice sleep 600 >/dev/null 2>&1 </dev/null &
all_active() { for u in "$@"; do systemctl is-active --quiet "$u" || return 1; done; }
wait_until "the hand-made scopes" 300 all_active rc1-dangling.scope rc1-other.scope plain.scope
ok "a tracked task and three hand-made scopes run"

wait_until "rc1-dangling.scope to be stopped" 900 bash -c '! systemctl is-active --quiet rc1-dangling.scope'
took=$(($(date +%s) - since))
ok "rc1-dangling.scope stopped ${took}s after it started (grace 5 s, period 5 s)"
((took >= 5)) || fail "stopped before its grace ran out"
assert_eq "$(task_field rc1 tracked state)" running "tracked task"
systemctl is-active --quiet rc1-other.scope || fail "a scope in another slice was stopped"
systemctl is-active --quiet plain.scope || fail "a scope not named like a task was stopped"
ok "the tracked task, rc1-other.scope (system.slice) and plain.scope still run"
journalctl -q -u taskscope-manager --no-pager | quiet_grep "Stopped dangling scope rc1-dangling.scope" ||
    fail "no journal line for the stop"
wait_until "the DanglingScopeStopped signal" 100 grep -q 'rc1-dangling.scope' "$MON"
grep 'rc1-dangling.scope' "$MON" | jq -e '.payload.data == ["rc1-dangling.scope", false]' >/dev/null ||
    fail "signal: $(cat "$MON")"
ok "journal line and signal DanglingScopeStopped(rc1-dangling.scope, false)"
stopped_signals=$(grep -c . "$MON")
echo "dangling scopes stopped: 1; signals: $stopped_signals; tracked tasks touched: 0"
assert_eq "$stopped_signals" 1 "DanglingScopeStopped signals"

# Dry run: reported, left running.
echo '{"dangling_scopes_period_ms": 5000, "dangling_scopes_creation_grace_ms": 5000, "dangling_scopes_dry_run": true}' >"$DROPIN"
systemctl restart taskscope-manager
mgr ListTasks >/dev/null
systemd-run --quiet --scope --unit=rc1-dry --slice=nomad.slice sleep 600 >/dev/null 2>&1 </dev/null &
wait_until "rc1-dry.scope" 300 systemctl is-active --quiet rc1-dry.scope
wait_until "the dry-run signal" 900 grep -q 'rc1-dry.scope' "$MON"
grep 'rc1-dry.scope' "$MON" | sed -n 1p | jq -e '.payload.data == ["rc1-dry.scope", true]' >/dev/null ||
    fail "dry-run signal: $(cat "$MON")"
systemctl is-active --quiet rc1-dry.scope || fail "dry run stopped rc1-dry.scope"
journalctl -q -u taskscope-manager --no-pager | quiet_grep "Found dangling scope rc1-dry.scope.*dry run" ||
    fail "no dry-run journal line"
assert_eq "$(task_field rc1 tracked state)" running "tracked task after the dry run"
ok "dry run: DanglingScopeStopped(rc1-dry.scope, true), journal line, the scope still runs"

# The nested layout (issue 31): a scope left in an allocation's slice that
# no task names, and that slice, both go; the tracked task's slice stays.
echo '{"dangling_scopes_period_ms": 5000, "dangling_scopes_creation_grace_ms": 5000}' >"$DROPIN"
systemctl restart taskscope-manager
mgr ListTasks >/dev/null
systemd-run --quiet --scope --unit=rc9-left --slice=nomad-reserve-rc9.slice sleep 600 >/dev/null 2>&1 </dev/null &
wait_until "rc9-left.scope" 300 systemctl is-active --quiet rc9-left.scope
wait_until "rc9-left.scope to be stopped" 900 bash -c '! systemctl is-active --quiet rc9-left.scope'
wait_until "nomad-reserve-rc9.slice to be stopped" 900 bash -c '! systemctl is-active --quiet nomad-reserve-rc9.slice'
tracked_slice=$(task_field rc1 tracked alloc_slice)
systemctl is-active --quiet "$tracked_slice" || fail "the tracked task's slice $tracked_slice was stopped"
assert_eq "$(task_field rc1 tracked state)" running "tracked task after the slice pass"
ok "a leftover allocation slice and its scope went; $tracked_slice stays"

mgr StopTask sssx rc1 tracked "" 0 >/dev/null
wait_until "rc1/tracked to exit" 600 bash -c "[[ \$(busctl --json=short call $I $M $I GetTask ss rc1 tracked | jq -r '.data[0]' | jq -r .state) == exited ]]"
mgr ForgetTask ss rc1 tracked >/dev/null
echo "reconciler: all checks passed"
