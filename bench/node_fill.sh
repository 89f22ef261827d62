#!/usr/bin/env bash
# Filling one node: N tasks (default 10000), each in its own scope with its
# logs collected, started P at a time (default 32) the way a scheduler would
# after a node joins. Then what an operator would check on such a node:
#   - every task running in its scope and its first log line on disk;
#   - descriptors of both daemons and the streamer's fd store, per task;
#   - memory: summed PSS of every taskscope process, the kernel's own
#     accounting (memory.current) of the daemons' cgroups, and PID 1's RSS
#     (systemd's cost of N scope units), each per task;
#   - ListTasks and GetManagedObjects: time and size of the answer;
#   - the manager killed (SIGKILL) and restarted: time until it answers with
#     all N running again; the streamer killed: every task's logs taken back;
#   - stop-all time, and nothing left under nomad.slice.
# Runs where the .deb is installed and PID 1 is systemd (the test bed guest);
# the calls go through taskscope-bench-fill (one process, P in flight):
#   BENCH_FILL_BIN=build/bench/taskscope-bench-fill bash bench/node_fill.sh [N] [P]
set -euo pipefail
N=${1:-10000}
P=${2:-32}
I=org.taskscope.Manager1
M=/org/taskscope/Manager1

FILL=${BENCH_FILL_BIN:-taskscope-bench-fill}
source "$(dirname "$0")/pss.sh"

now_ms() { date +%s%3N; }
# systemctl can stop answering while PID 1 collects thousands of emptied
# scopes (seen after a 10,000 stop-all): fall back to the process itself
pid_of() {
    local p
    p=$(systemctl show -p MainPID --value "$1" 2>/dev/null) && [ "${p:-0}" != 0 ] && { echo "$p"; return; }
    pgrep -o -x "$(echo "${1%.service}" | cut -c1-15)"
}
fds() { ls "/proc/$(pid_of "$1")/fd" | wc -l; }
kib_pss() { awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup"; }
all_pss() { echo $(( $(pss_sum) + $(kib_pss "$(pid_of taskscope-streamer)") )); }
pid1_rss() { awk '/^VmRSS:/ {print $2}' /proc/1/status; }
# memory.current of a unit's cgroup in KiB (v2; the v1 memory controller
# keeps it as memory.usage_in_bytes)
cg_mem() {
    local cg
    cg=$(systemctl show -p ControlGroup --value "$1")
    if [ -r "/sys/fs/cgroup$cg/memory.current" ]; then
        echo $(( $(cat "/sys/fs/cgroup$cg/memory.current") / 1024 ))
    elif [ -r "/sys/fs/cgroup/memory$cg/memory.usage_in_bytes" ]; then
        echo $(( $(cat "/sys/fs/cgroup/memory$cg/memory.usage_in_bytes") / 1024 ))
    else
        echo 0
    fi
}
scopes() {
    local d=/sys/fs/cgroup/nomad.slice
    [ -d "$d" ] || d=/sys/fs/cgroup/systemd/nomad.slice
    find "$d" -maxdepth 1 -name 'fill*.scope' 2>/dev/null | wc -l
}
running() { busctl call $I $M $I ListTasks | grep -o '"running"' | wc -l || true; }

# median of five timed runs of a command, in ms
timed5() {
    local t=() i s
    for i in 1 2 3 4 5; do
        s=$(now_ms)
        "$@" >/dev/null
        t+=($(( $(now_ms) - s )))
    done
    printf '%s\n' "${t[@]}" | sort -n | sed -n 3p
}

echo "== node_fill: $N tasks with logs, $P requests in flight"
systemctl reset-failed taskscope-manager taskscope-streamer 2>/dev/null || true
systemctl restart taskscope-manager taskscope-streamer
busctl call $I $M $I ListTasks >/dev/null
sleep 2
mf0=$(fds taskscope-manager) sf0=$(fds taskscope-streamer)
pss0=$(all_pss) mm0=$(cg_mem taskscope-manager.service) sm0=$(cg_mem taskscope-streamer.service)
hm0=$(cg_mem taskscope-shims.scope)
rss0=$(pid1_rss)

"$FILL" start "$N" "$P" || true
n_run=$(running)
n_scope=$(scopes)
# the streamer writes the first line asynchronously: give it a moment
for _ in $(seq 1 60); do
    n_logs=$(find /var/lib/taskscope/logs -path '*/fill*' -name '*.stdout.0' -size +0 | wc -l)
    [ "$n_logs" -ge "$n_run" ] && break
    sleep 1
done
echo "running: $n_run; scopes under nomad.slice: $n_scope; tasks with their first log line on disk: $n_logs"

mf1=$(fds taskscope-manager) sf1=$(fds taskscope-streamer)
store() { systemctl show -p NFileDescriptorStore --value "$1" 2>/dev/null || echo "?"; }
echo "descriptors: manager $mf0 -> $mf1 ($(( (mf1 - mf0) * 100 / N ))/100 per task), streamer $sf0 -> $sf1 ($(( (sf1 - sf0) * 100 / N ))/100 per task); fd stores: manager $(store taskscope-manager), streamer $(store taskscope-streamer)"
pss1=$(all_pss) mm1=$(cg_mem taskscope-manager.service) sm1=$(cg_mem taskscope-streamer.service)
hm1=$(cg_mem taskscope-shims.scope)
rss1=$(pid1_rss)
echo "memory per task: PSS of all taskscope processes (manager, streamer, shims) $(( (pss1 - pss0) / N )) KiB ($pss0 -> $pss1 KiB; target <= 64); memory.current manager $mm0 -> $mm1 KiB, streamer $sm0 -> $sm1 KiB, shims' scope $hm0 -> $hm1 KiB ($(( (mm1 - mm0 + sm1 - sm0 + hm1 - hm0) / N )) KiB per task); PID 1 RSS $rss0 -> $rss1 KiB ($(( (rss1 - rss0) / N )) KiB per task)"

"$FILL" reads
ltn=$(timed5 setpriv --reuid=nobody --regid=nogroup --clear-groups busctl call $I $M $I ListTasks)
lt_size=$(busctl call $I $M $I ListTasks | wc -c)
gmo_size=$(busctl call $I $M org.freedesktop.DBus.ObjectManager GetManagedObjects | wc -c)
echo "ListTasks through busctl as nobody: ${ltn} ms median of 5 (busctl's own start included); answers as busctl text: ListTasks $(( lt_size / 1024 )) KiB, GetManagedObjects $(( gmo_size / 1024 )) KiB"

# The manager killed mid-life: systemd restarts it (Restart=on-failure);
# recovery is done when it answers and counts all N running again.
echo -n "manager SIGKILL (systemd restarts it) -> "
systemctl kill -s KILL taskscope-manager
"$FILL" wait-running "$n_run" 900 || true
mf2=$(fds taskscope-manager)
echo "manager descriptors after recovery: $mf2"

s=$(now_ms)
systemctl kill -s KILL taskscope-streamer
until [ "$(busctl get-property org.taskscope.Streamer1 /org/taskscope/Streamer1 org.taskscope.Streamer1 Tasks 2>/dev/null | awk '{print $2}')" = "$n_run" ]; do
    sleep 0.2
    if [ $(( $(now_ms) - s )) -gt 900000 ]; then echo "streamer: not all tasks back after 900 s"; break; fi
done
echo "streamer SIGKILL -> collecting all $n_run tasks' logs again: $(( $(now_ms) - s )) ms; descriptors $(fds taskscope-streamer)"

s=$(now_ms)
"$FILL" stop "$N" "$P" || true
for _ in $(seq 1 60); do [ "$(scopes)" -eq 0 ] && break; sleep 1; done
# A shim stays, holding its task's fifos, until the streamer has drained them.
shims() { cat /sys/fs/cgroup/system.slice/taskscope-shims.scope/cgroup.procs /sys/fs/cgroup/systemd/system.slice/taskscope-shims.scope/cgroup.procs 2>/dev/null | wc -l; }
for _ in $(seq 1 900); do [ "$(shims)" -le 1 ] && break; sleep 1; done
echo "scopes left: $(scopes); tasks left: $(busctl call $I $M $I ListTasks | awk '{print $2}'); processes in taskscope-shims.scope: $(shims) (the placeholder: 1), $(( $(now_ms) - s )) ms after the stops began"
echo "manager descriptors at the end: $(fds taskscope-manager), streamer: $(fds taskscope-streamer)"

# PID 1 goes on removing the emptied scopes' cgroups after the stops: how
# long, whether systemctl answers meanwhile, and whether a new task starts
# (its start is a call to systemd) while it does
while [ "$(scopes)" -gt 0 ] && [ $(( $(now_ms) - s )) -lt $(( ${FILL_SETTLE_S:-1800} * 1000 )) ]; do
    echo "  $(( ($(now_ms) - s) / 1000 )) s after the stops began: scope cgroups left $(scopes); systemctl is-system-running: $(timeout 30 systemctl is-system-running 2>&1 | head -1)"
    t=$(now_ms)
    out=$("$FILL" start 1 1 2>&1) && r=started || r="failed ($(echo "$out" | grep -m1 ' x ' | sed 's/^ *//'))"
    "$FILL" stop 1 1 >/dev/null 2>&1 || r="$r, stop failed"
    echo "    one new task meanwhile: $r in $(( $(now_ms) - t )) ms (start and stop)"
    sleep 60
done
echo "scope cgroups left: $(scopes), $(( $(now_ms) - s )) ms after the stops began"
rm -rf /var/lib/taskscope/logs/fill*
