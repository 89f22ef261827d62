#!/usr/bin/env bash
# PID 1's own CPU per transient scope start as the scopes under one slice
# grow, with nothing of taskscope involved: `systemd-run --scope` N times
# (default 1500), 4 at a time, each holding `sleep infinity`; every 300
# starts, PID 1's CPU time per start over those 300. Whether a scope is
# up is read from the cgroup tree, not asked of PID 1 (a listing would be
# PID 1 work of its own). Root, PID 1 systemd (the test bed guest).
set -euo pipefail
N=${1:-1500}
cpu() { awk '{printf "%.2f", ($14+$15)/100}' /proc/1/stat; }
c0=$(cpu)
for ((i = 0; i < N; i++)); do
    systemd-run -q --scope --slice=probe.slice --unit="probe-$i" sleep infinity >/dev/null 2>&1 &
    if (((i + 1) % 4 == 0)); then
        until [ "$(find /sys/fs/cgroup/probe.slice -maxdepth 1 -name 'probe-*.scope' | wc -l)" -ge $((i + 1)) ]; do
            sleep 0.05
        done
    fi
    if (((i + 1) % 300 == 0)); then
        c1=$(cpu)
        echo "$((i + 1)) scopes: PID 1 $(awk -v a="$c0" -v b="$c1" 'BEGIN {printf "%.1f", (b - a) * 1000 / 300}') ms per start (last 300)"
        c0=$c1
    fi
done
systemctl stop probe.slice
