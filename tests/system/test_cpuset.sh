#!/usr/bin/env bash
# variants: deb13-v2 deb12-v1 (deb12-v2)
# cpuset partitions and limits through systemd: reserved cores are
# exclusive, shared tasks follow the shared pool at once, nothing leaks
# across restarts, and daemon-reload changes nothing.
source "$(dirname "$0")/lib.sh"
systemctl start taskscope-manager

allowed() { awk '/^Cpus_allowed_list/ {print $2}' "/proc/$(task_field "$1" "$2" pid)/status"; }
# The nearest cgroup at or above the task's scope where cpuset is on: a
# reserved task's scope, a shared task's share slice (issue 31: one
# AllowedCPUs for every shared task), a flat task's scope.
effective() {
    local d
    d=$(task_cgroup_dir "$1" "$2")
    while [[ ! -e "$d/cpuset.cpus.effective" && "$d" != /sys/fs/cgroup ]]; do d=${d%/*}; done
    cat "$d/cpuset.cpus.effective"
}
shared() { busctl get-property $I $M $I SharedCPUs | awk '{print $2}' | tr -d '"'; }
expect_plan() {  # expect_plan TASK CPUS
    assert_eq "$(allowed c1 "$1")" "$2" "Cpus_allowed_list of $1"
    assert_eq "$(effective c1 "$1")" "$2" "cpuset.cpus.effective of $1"
}

if [[ "$TASKSCOPE_VARIANT" == v1 ]]; then
    $CTL run c1 shared -- /bin/sleep 600 >/dev/null
    assert_eq "$(task_field c1 shared state)" running "shared task on v1"
    out=$(mgr StartTask sss c1 res '{"command":"/bin/sleep","args":["600"],"resources":{"cores":1}}' 2>&1) \
        && fail "reserved cores on v1"
    [[ "$out" == *"needs cgroup v2"* ]] || fail "v1 reservation said: $out"
    ok "v1 refuses reservations: $out"
    assert_eq "$(shared)" "" "SharedCPUs on v1"
    $CTL stop --grace 0 c1 shared >/dev/null || true
    echo "cpuset (v1): all checks passed"
    exit 0
fi

n=$(nproc)
[[ $n -ge 4 ]] || fail "this test needs 4 CPUs, the guest has $n"
assert_eq "$(shared)" 0-3 "SharedCPUs with no reservation"

$CTL run c1 a -- /bin/sleep 600 >/dev/null
expect_plan a 0-3
$CTL run --spec '{"resources":{"cores":2}}' c1 b -- /bin/sleep 600 >/dev/null
expect_plan b 0-1
expect_plan a 2-3
assert_eq "$(task_field c1 b reserved_cores)" true "b reserved"

out=$(mgr StartTask sss c1 c '{"command":"/bin/sleep","args":["600"],"resources":{"cores":2}}' 2>&1) && fail "took the last shared cores"
[[ "$out" == *"leave no core for 1 running shared task"* ]] || fail "said: $out"
ok "refused: $out"
out=$(mgr StartTask sss c1 c '{"command":"/bin/sleep","args":["600"],"resources":{"cores":5}}' 2>&1) && fail "5 cores granted"
[[ "$out" == *"asked for 5 cores, 2 free (2-3)"* ]] || fail "said: $out"
ok "refused: $out"
systemctl list-units --all c1-c.scope | quiet_grep c1-c && fail "a refused start left a unit"

mkfifo /run/c1-go  # c runs until we write to it
$CTL run --spec '{"resources":{"cores":1}}' c1 c -- /bin/sh -c 'read x < /run/c1-go; exit 0' >/dev/null
expect_plan c 2
expect_plan a 3
assert_eq "$(shared)" 3 "SharedCPUs"

systemctl daemon-reload
expect_plan a 3
expect_plan b 0-1
ok "daemon-reload kept the plan"
systemctl restart taskscope-manager
expect_plan a 3
expect_plan c 2
assert_eq "$(shared)" 3 "SharedCPUs after restart"

$CTL stop c1 b >/dev/null
expect_plan a 0-1,3

# c ends while the manager is down: its core comes back on restart.
kill -9 "$(systemctl show -p MainPID --value taskscope-manager)"
echo go >/run/c1-go
wait_until "c's exit record" 300 test -e /var/lib/taskscope/exits/c1-c.scope
expect_plan a 0-3
assert_eq "$(shared)" 0-3 "SharedCPUs after c ended while the manager was down"

# Start/stop cycles, one kill -9 of the manager in the middle: no leak.
for i in $(seq 1 20); do
    $CTL run --spec '{"resources":{"cores":2}}' c1 "cycle$i" -- /bin/sleep 600 >/dev/null
    [[ $i == 10 ]] && kill -9 "$(systemctl show -p MainPID --value taskscope-manager)"
    $CTL stop --grace 0 c1 "cycle$i" >/dev/null || true
done
assert_eq "$(shared)" 0-3 "SharedCPUs after 20 cycles"
expect_plan a 0-3

# Limits: as asked, changed at runtime, kept across daemon-reload.
$CTL run --spec '{"resources":{"memory_mb":32,"memory_max_mb":64,"cpu_quota_percent":50}}' c1 d -- /bin/sleep 600 >/dev/null
d=$(task_cgroup_dir c1 d)
assert_eq "$(cat "$d/memory.low")" 33554432 "memory.low (memory_mb)"
assert_eq "$(cat "$d/memory.max")" 67108864 "memory.max (memory_max_mb)"
assert_eq "$(cat "$d/cpu.max")" "50000 100000" "cpu.max (50%)"
$CTL update c1 d '{"memory_mb":128,"cpu_shares":1024,"pids_max":20}'
assert_eq "$(cat "$d/memory.max")" 134217728 "memory.max after update"
assert_eq "$(cat "$d/memory.low")" 0 "memory.low after update"
assert_eq "$(cat "$d/cpu.weight")" 39 "cpu.weight after update"
assert_eq "$(cat "$d/pids.max")" 20 "pids.max after update"
systemctl daemon-reload
assert_eq "$(cat "$d/memory.max")" 134217728 "memory.max after daemon-reload"
assert_eq "$(cat "$d/pids.max")" 20 "pids.max after daemon-reload"
out=$(mgr UpdateTask sss c1 d '{"cores":1}' 2>&1) && fail "cores changed at runtime"
ok "cores stay fixed: $out"
for t in a d; do $CTL stop --grace 0 c1 $t >/dev/null || true; done
echo "cpuset (v2): all checks passed"
