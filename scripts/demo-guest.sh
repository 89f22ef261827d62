#!/usr/bin/env bash
# The demo itself, on a machine where taskscope is installed and PID 1 is
# systemd: the node's fingerprint, one allocation of three tasks with
# limits, what systemd and the kernel made of them, and their exits.
set -euo pipefail
alloc=5f1d9c2e-7a41-4c1b-9e0f-3a6b8d2c4e71
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "taskscope-fingerprint (what this node is)"
taskscope-fingerprint

step "start an allocation: web (limited), worker (oversubscribed memory), batch (exits 3)"
taskscopectl run --spec '{"resources":{"memory_mb":64,"cpu_shares":512,"pids_max":32}}' \
    $alloc web -- /bin/sh -c 'while :; do echo "web: serving"; sleep 1; done'
taskscopectl run --spec '{"resources":{"memory_mb":32,"memory_max_mb":128}}' \
    $alloc worker -- /bin/sleep 600
taskscopectl run $alloc batch -- /bin/sh -c 'echo batch done; exit 3'

step "taskscopectl list"
taskscopectl list

step "systemd-cgls /nomad.slice"
systemd-cgls --no-pager /nomad.slice

step "systemctl status $alloc-web.scope"
systemctl status --no-pager $alloc-web.scope | head -8 || true

step "limits as the kernel sees them (web)"
cg=/sys/fs/cgroup$(taskscopectl --json status $alloc web | jq -r .cgroup)
for f in memory.max memory.swap.max cpu.weight pids.max; do printf '%-16s %s\n' "$f" "$(cat "$cg/$f")"; done
cg=/sys/fs/cgroup$(taskscopectl --json status $alloc worker | jq -r .cgroup)
for f in memory.low memory.max; do printf 'worker %-9s %s\n' "$f" "$(cat "$cg/$f")"; done

step "busctl: the task objects"
busctl tree org.taskscope.Manager1 --no-pager
busctl get-property org.taskscope.Manager1 "$(taskscopectl --json status $alloc web | jq -r .object_path)" \
    org.taskscope.Task1 State

step "taskscopectl logs -n 3 (web's stdout, collected by the streamer)"
taskscopectl logs -n 3 $alloc web

step "taskscopectl exec: a command inside web (its scope, user, cwd, env)"
taskscopectl exec --timeout 10000 $alloc web -- /bin/sh -c 'echo "pid $$ in $(cut -d: -f3 /proc/self/cgroup)"; id'

step "taskscopectl stats (CPU, memory, pids of every task, from its cgroup)"
sleep 2
taskscopectl stats

step "how batch ended"
taskscopectl wait $alloc batch || true
taskscopectl status $alloc batch

step "stop the allocation (SIGTERM, then SIGKILL after the grace period)"
taskscopectl stop --grace 2000 $alloc web || true
taskscopectl stop $alloc worker || true
taskscopectl list
systemd-cgls --no-pager /nomad.slice || true
echo
echo "demo: done"
