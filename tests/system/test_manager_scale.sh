#!/usr/bin/env bash
# variants: deb13-v2 (deb12-v2)
# Issue 12 in the small: the units' descriptor limits, what one task costs
# the manager in descriptors, a start refused near the limit (named, with
# the numbers, nothing created), and tasks whose unit names collide.
source "$(dirname "$0")/lib.sh"

mgr ListTasks >/dev/null  # activates the manager
mpid=$(systemctl show -p MainPID --value taskscope-manager)
[[ "$mpid" -gt 0 ]] || fail "manager not running"
nofile() { awk '/^Max open files/ {print $4 ":" $5}' /proc/"$1"/limits; }
assert_eq "$(nofile "$mpid")" 65536:65536 "manager's RLIMIT_NOFILE (soft:hard)"
systemctl start taskscope-streamer
assert_eq "$(systemctl show -p LimitNOFILE --value taskscope-streamer)" 131072 "streamer's LimitNOFILE"
assert_eq "$(systemctl show -p FileDescriptorStoreMax --value taskscope-streamer)" 32768 "streamer's FileDescriptorStoreMax"

fds() { ls /proc/"$mpid"/fd | wc -l; }

# Per task: the two held log fifos, nothing else.
mgr StartTask sss s0 warm '{"command":"/bin/sleep","args":["300"]}' >/dev/null  # lazily opened things first
n=20
before=$(fds)
for i in $(seq 1 $n); do
    mgr StartTask sss s1 "t$i" '{"command":"/bin/sleep","args":["300"]}' >/dev/null
done
after=$(fds)
per=$(( (after - before) ))
echo "manager fds: $before before, $after after $n tasks with logs"
(( per <= 2 * n + 2 )) || fail "$n tasks cost the manager $per descriptors, budget is $((2 * n))"
ok "$n tasks cost the manager $per descriptors (budget 2 per task)"

# Near the limit: refused up front, named, with the numbers; nothing exists.
open=$(fds)
prlimit --pid "$mpid" --nofile=$((open + 40)):65536
out=$(mgr StartTask sss s2 refused '{"command":"/bin/sleep","args":["300"]}' 2>&1) && fail "start near the limit accepted"
prlimit --pid "$mpid" --nofile=65536:65536
[[ "$out" == *ResourceExhausted* || "$out" == *"file descriptors"* ]] || fail "near the limit StartTask said: $out"
[[ "$out" == *"Too many open files"* ]] && fail "raw errno text: $out"
ok "near the limit: $out"
out=$(mgr GetTask ss s2 refused 2>&1) && fail "a refused start left a task: $out"
systemctl list-units --all 's2-refused.scope' | quiet_grep s2-refused && fail "a refused start left a unit"
ls /run/taskscope/logs/ | quiet_grep s2-refused && fail "a refused start left spool files"
mgr StartTask sss s2 refused '{"command":"/bin/sleep","args":["300"]}' >/dev/null || fail "start after the limit was raised"
ok "with room again the same start works"

# (x-a, b) and (x, a-b) are both x-a-b.scope: the second start is refused
# and names the first; calls on it never reach the first.
mgr StartTask sss x-a b '{"command":"/bin/sleep","args":["300"]}' >/dev/null
out=$(mgr StartTask sss x a-b '{"command":"/bin/sleep","args":["300"]}' 2>&1) && fail "colliding start accepted"
[[ "$out" == *UnitNameCollision* || "$out" == *"x-a/b"* ]] || fail "colliding start said: $out"
ok "collision: $out"
out=$(mgr StopTask sssx x a-b "" 0 2>&1) && fail "StopTask of the refused task succeeded"
assert_eq "$(task_field x-a b state)" running "state of x-a/b after StopTask x a-b"

for t in $(busctl --json=short call $I $M $I ListTasks | jq -r '.data[0][] | "\(.[0])/\(.[1])"'); do
    mgr StopTask sssx "${t%%/*}" "${t#*/}" "" 0 >/dev/null 2>&1 || true
done
echo "manager scale: all checks passed"
