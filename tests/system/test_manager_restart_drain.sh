#!/usr/bin/env bash
# variants: v2 v1
# `systemctl restart taskscope-manager` while callers start tasks: the
# starts under way finish before the old manager exits, later ones are
# refused with ShuttingDown or served by the new manager. No task is left
# half-started ("lost"); every start answered with a task path runs; every
# start refused left nothing behind, so asking again works.
source "$(dirname "$0")/lib.sh"
A=drain1
N=120
OUT=/run/drain-answers
again() { systemctl reset-failed taskscope-manager 2>/dev/null || true; }
cleanup() {
    again
    systemctl start taskscope-manager || true
    seq $N | xargs -P 8 -I{} sh -c "$CTL stop --grace 0 $A t{} >/dev/null 2>&1; $CTL forget $A t{} >/dev/null 2>&1" || true
    rm -rf "$OUT"
}
trap cleanup EXIT
again
systemctl start taskscope-manager
rm -rf "$OUT" && mkdir -p "$OUT"

start_one() {
    busctl --timeout=300 call $I $M $I StartTask sss $A "t$1" '{"command":"/bin/sleep","args":["600"]}' \
        >"$OUT/t$1" 2>&1 || true
}
export -f start_one
export A I M OUT
seq $N | xargs -P 16 -I{} bash -c 'start_one {}' &
starts=$!
# The restart lands among the starts: once a few run, with most to come.
wait_until "the first starts" 600 bash -c "busctl call $I $M $I ListTasks | grep -q running"
again
systemctl restart taskscope-manager
wait $starts
under=$(journalctl -u taskscope-manager --no-pager | grep -o 'waiting for [0-9]* starts under way' | tail -1 || true)
echo "at the restart: ${under:-no start under way}"

started=0 refused=0 other=0
for i in $(seq $N); do
    if grep -q '^o "' "$OUT/t$i"; then
        started=$((started + 1))
    elif grep -q 'ShuttingDown\|the manager is stopping' "$OUT/t$i"; then
        refused=$((refused + 1))
    else
        other=$((other + 1))
        echo "t$i: $(cat "$OUT/t$i")"
    fi
done
echo "starts: $started answered with a task, $refused refused with ShuttingDown, $other otherwise"

lost=$($CTL list | awk -v a=$A '$1==a && $3=="lost"' | wc -l)
assert_eq "$lost" 0 "tasks left lost by the restart"
for i in $(seq $N); do
    if grep -q '^o "' "$OUT/t$i"; then
        st=$(task_field $A t$i state)
        [[ "$st" == running ]] || fail "t$i was answered with a task but is $st"
    else
        # Refused or cut off before the manager read it: nothing was made,
        # and the same start now works.
        out=$(mgr GetTask ss $A "t$i" 2>&1) && fail "t$i exists after a failed start: $out"
        start_one "$i"
        grep -q '^o "' "$OUT/t$i" || fail "t$i could not be started again: $(cat "$OUT/t$i")"
    fi
done
ok "every answered start runs; every refused one left nothing and starts when asked again"
assert_eq "$($CTL list | awk -v a=$A '$1==a && $3=="running"' | wc -l)" $N "tasks running"
echo "PASS"
