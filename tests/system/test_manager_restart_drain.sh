#!/usr/bin/env bash
# variants: deb13-v2 (deb12-v2) (deb12-v1)
# `systemctl restart taskscope-manager`, then `systemctl kill -s KILL`,
# while a caller keeps 32 starts in flight. At the restart the starts under
# way finish before the old manager exits, and later ones are refused with
# ShuttingDown or served by the new manager. Neither leaves a task
# half-started ("lost"); every start that failed left nothing, so asking
# again works. The starts come from one process (the fill bench's
# client: fill<i/100>/t<i%100>), since a busctl process per call is slower
# under emulation than the manager's start, and the restart would find
# none under way.
source "$(dirname "$0")/lib.sh"
N=300
FILL=$TASKSCOPE_BUILD_DIR/bench/taskscope-bench-fill
again() { systemctl reset-failed taskscope-manager 2>/dev/null || true; }
cleanup() {
    again
    systemctl start taskscope-manager || true
    "$FILL" stop $N 32 >/dev/null 2>&1 || true
}
trap cleanup EXIT
again
systemctl start taskscope-manager
journal_from=$(date '+%Y-%m-%d %H:%M:%S')

"$FILL" start $N 32 >/run/drain-fill.out 2>&1 &
fill=$!
wait_until "the first starts" 600 bash -c "busctl call $I $M $I ListTasks | grep -q running"
again
systemctl restart taskscope-manager
wait $fill || true
cat /run/drain-fill.out
journalctl -u taskscope-manager --since "$journal_from" --no-pager |
    grep -E "Received|starts under way|starts still under way" || true

states=$(busctl --json=short call $I $M $I ListTasks | jq -r '.data[0][] | .[2]' | sort | uniq -c | tr '\n' ' ')
echo "states after the restart: $states"
lost=$($CTL list | awk '$3=="lost"' | wc -l)
assert_eq "$lost" 0 "tasks left lost by the restart"
failed=$(sed -n 's/.*failed: \([0-9]*\).*/\1/p' /run/drain-fill.out | sed -n 1p)
running=$($CTL list | awk '$1 ~ /^fill/ && $3=="running"' | wc -l)
assert_eq "$running" $((N - ${failed:-0})) "tasks running (every start answered with a task)"
if ((${failed:-0} > 0)); then
    # What failed left nothing: the same starts now work.
    "$FILL" start $N 32 >/dev/null || true  # those running say TaskExists
    assert_eq "$($CTL list | awk '$1 ~ /^fill/ && $3=="running"' | wc -l)" $N "tasks running after the failed starts were asked again"
fi

# systemctl kill -s KILL among starts: no drain. A start whose shim already
# waits in taskscope-shims.scope for the go is cut off; the shim leaves
# without running the task and marks that, and the next manager removes the
# task instead of reporting it lost. Still none lost, and every task the
# fill was told started runs.
"$FILL" stop $N 32 >/dev/null
journal_from=$(date '+%Y-%m-%d %H:%M:%S')
"$FILL" start $N 32 >/run/drain-fill.out 2>&1 &
fill=$!
wait_until "the first starts of the second round" 600 bash -c "busctl call $I $M $I ListTasks | grep -q running"
again
systemctl kill -s KILL taskscope-manager
wait $fill || true
cat /run/drain-fill.out
"$FILL" wait-running 1 120 >/dev/null || true  # the manager is back
journalctl -u taskscope-manager --since "$journal_from" --no-pager | grep -E "never ran|is lost" | tail -3 || true
assert_eq "$($CTL list | awk '$3=="lost"' | wc -l)" 0 "tasks left lost by the kill"
failed=$(sed -n 's/.*failed: \([0-9]*\).*/\1/p' /run/drain-fill.out | sed -n 1p)
running=$($CTL list | awk '$1 ~ /^fill/ && $3=="running"' | wc -l)
((running >= N - ${failed:-0})) || fail "$running running, but $((N - ${failed:-0})) starts were answered with a task"
"$FILL" start $N 32 >/dev/null || true
assert_eq "$($CTL list | awk '$1 ~ /^fill/ && $3=="running"' | wc -l)" $N "tasks running after the failed starts were asked again"
echo "PASS"
