#!/usr/bin/env bash
# variants: deb13-v2 (deb12-v2) (deb12-v1)
# The manager's unit SIGKILLed while a burst of StartTask calls is in
# flight, as a scheduler sends them when a node joins: systemd restarts it,
# and every start is accounted for. A start that was answered is running;
# one whose answer was lost with the manager is either running or unknown,
# never left half-made (a scope, a process or a slice of it without its
# task) or stuck "starting"; the scheduler's retry of it starts it. Then
# everything stops and is forgotten, allocation slices included.
source "$(dirname "$0")/lib.sh"

A=kb$$
N=40
dir=$(mktemp -d)
# Ten allocations of four tasks, names as odd as a unit allows.
alloc_of() { echo "${A}x$(($1 % 10))"; }
task_of() { local n=(web db.1 x_y très); echo "${n[$(($1 % 4))]}$1"; }
spec='{"command":"/bin/sleep","args":["6007"]}'
cleanup() {
    set +e
    systemctl reset-failed taskscope-manager 2>/dev/null
    systemctl start taskscope-manager
    for i in $(seq 0 $((N - 1))); do
        $CTL stop --grace 0 "$(alloc_of $i)" "$(task_of $i)" >/dev/null 2>&1
        $CTL forget "$(alloc_of $i)" "$(task_of $i)" >/dev/null 2>&1
    done
    rm -rf "$dir"
}
trap cleanup EXIT
systemctl reset-failed taskscope-manager 2>/dev/null || true
systemctl start taskscope-manager
mgr ListTasks >/dev/null

for i in $(seq 0 $((N - 1))); do
    (mgr StartTask sss "$(alloc_of $i)" "$(task_of $i)" "$spec" >"$dir/$i.out" 2>&1 && echo ok >"$dir/$i.rc" ||
        echo failed >"$dir/$i.rc") &
done
# Killed once the first is answered: most are still on their way.
answered() { compgen -G "$dir/*.rc" >/dev/null; }
wait_until "the first answer" 600 answered
killed_after=$(cat "$dir"/*.rc | wc -l)
systemctl kill -s KILL taskscope-manager
wait
ok "manager's unit SIGKILLed after $killed_after of $N starts were answered"
wait_until "systemd to restart the manager" 600 bash -c "busctl call $I $M $I ListTasks >/dev/null 2>&1"

# A task's state, "unknown" when ListTasks does not have it (busctl shows
# an error's message, not its name).
state_of() {
    local s
    if s=$(busctl --json=short call $I $M $I GetTask ss "$1" "$2" 2>&1); then
        jq -r '.data[0] | fromjson | .state' <<<"$s"
    elif busctl --json=short call $I $M $I ListTasks | jq -e --arg a "$1" --arg t "$2" \
        'any(.data[0][]; .[0] == $a and .[1] == $t)' >/dev/null; then
        echo "error: $s"
    else
        echo unknown
    fi
}
settled() {
    local i s
    for i in $(seq 0 $((N - 1))); do
        s=$(state_of "$(alloc_of $i)" "$(task_of $i)")
        [[ $s == running || $s == unknown || $s == exited ]] || return 1
    done
}
# (each try asks for every task: about two seconds a try in the guest)
wait_until "no start left halfway" 60 settled

lost=0 retried=0
for i in $(seq 0 $((N - 1))); do
    a=$(alloc_of $i) t=$(task_of $i)
    s=$(state_of "$a" "$t")
    if [[ $(cat "$dir/$i.rc") == ok ]]; then
        [[ $s == running ]] || { echo "answered, then $s: $a/$t"; lost=$((lost + 1)); }
        continue
    fi
    if [[ $s == unknown ]]; then
        # A scope or process of it left behind would make the retry fail,
        # or show in the counts below.
        mgr StartTask sss "$a" "$t" "$spec" >/dev/null || fail "the retry of $a/$t failed"
        retried=$((retried + 1))
        s=$(state_of "$a" "$t")
    fi
    [[ $s == running ]] || fail "unanswered start of $a/$t ended $s, not running"
done
((lost == 0)) || fail "$lost answered starts lost"
ok "every answered start running; $retried unanswered ones unknown and started again by a retry, the rest running"

sleeps=$(pgrep -fc '^/bin/sleep 6007$' || true)
assert_eq "$sleeps" $N "task processes (one per task, none half-made)"
scopes=$(systemctl list-units --no-legend --plain "$A*.scope" | wc -l)
assert_eq "$scopes" $N "scopes of the burst"
for i in $(seq 0 $((N - 1))); do
    $CTL stop --grace 2000 "$(alloc_of $i)" "$(task_of $i)" >/dev/null
    $CTL forget "$(alloc_of $i)" "$(task_of $i)" >/dev/null
done
gone() {
    [[ $(pgrep -fc '^/bin/sleep 6007$' || true) == 0 ]] &&
        [[ $(systemctl list-units --all --no-legend --plain "$A*.scope" "*$A*.slice" | wc -l) == 0 ]]
}
wait_until "the burst's processes, scopes and allocation slices to go" 1200 gone
ok "all $N stopped and forgotten: no process, scope or allocation slice left"
