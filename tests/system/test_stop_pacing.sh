#!/usr/bin/env bash
# variants: deb13-v2 (deb12-v2) (deb12-v1)
# A drain's stops at systemd's pace (issue 31, stop_window): with a window
# of 4, forty tasks stopped at once are answered at once and all end with
# the signal asked for; the manager SIGKILLed while most of the stops still
# wait their turn sends them after its restart (they are on the records),
# none is lost or left running; a task that ignores SIGTERM leaves the
# window after a second and is killed when its own grace ends.
source "$(dirname "$0")/lib.sh"

DROPIN=/etc/taskscope/manager.json.d/50-test-stop-pacing.json
A=sp$$
N=40
cleanup() {
    set +e
    for i in $(seq $N) slow; do
        $CTL stop --grace 0 "$A$i" t >/dev/null 2>&1
        $CTL forget "$A$i" t >/dev/null 2>&1
    done
    rm -f "$DROPIN"
    systemctl restart taskscope-manager
}
trap cleanup EXIT

mkdir -p "$(dirname "$DROPIN")"
echo '{"stop_window": 4}' >"$DROPIN"
systemctl restart taskscope-manager || fail "the manager did not start: $(journalctl -q -u taskscope-manager -n 30 --no-pager)"
mgr ListTasks >/dev/null

for i in $(seq $N); do $CTL run "$A$i" t -- /bin/sleep 600 >/dev/null; done
$CTL run "${A}slow" t -- /bin/sh -c 'trap "" TERM; sleep 600 & wait; sleep 600' >/dev/null
ok "started $N tasks and one that ignores SIGTERM, each an allocation of its own"

# The graceful one first: it holds a place for a second only.
mgr StopTask sssx "${A}slow" t SIGTERM 4000 >/dev/null
pids=()
for i in $(seq $N); do
    mgr StopTask sssx "$A$i" t SIGTERM 600000 >/dev/null &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || fail "a StopTask failed"; done
# Mid-drain, at once: the stops that wait are on the records only.
systemctl kill -s KILL taskscope-manager
ok "every StopTask answered; the manager SIGKILLed"
alive=$(pgrep -fc '^/bin/sleep 600$' || true)
ok "$alive sleeps still alive while no manager runs (their stops waited their turn)"
wait_until "the manager to come back" 600 bash -c "busctl call $I $M $I ListTasks >/dev/null 2>&1"
ok "manager restarted"

all_exited() {
    local k
    for k in $(seq $N); do [[ "$(task_field "$A$k" t state)" == exited ]] || return 1; done
}
wait_until "all $N tasks to exit" 900 all_exited
for i in $(seq $N); do
    assert_eq "$(task_field "$A$i" t signal)" 15 "$A$i ended by" >/dev/null
done
ok "all $N ended by SIGTERM (15), none lost, none left running"

slow_exited() { [[ "$(task_field "${A}slow" t state)" == exited ]]; }
wait_until "the SIGTERM-proof task to be killed" 600 slow_exited
assert_eq "$(task_field "${A}slow" t signal)" 9 "the SIGTERM-proof task ended by"
