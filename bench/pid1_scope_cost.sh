#!/usr/bin/env bash
# PID 1's own CPU per transient scope start as the scopes grow, with
# nothing of taskscope involved: `systemd-run --scope` N times (default
# 1500), 4 at a time, each holding `sleep infinity`; every 300 starts,
# PID 1's CPU time per start over those 300. Whether a scope is up is read
# from the cgroup tree, not asked of PID 1 (a listing would be PID 1 work
# of its own). Root, PID 1 systemd (the test bed guest).
#
# Layout ($2): "flat" puts every scope in probe.slice (taskscope's layout:
# every task in nomad.slice); "spread" puts each 100 in a slice of their
# own under it (probe-<k>.slice), as per-allocation slices would.
#
# Then all N are stopped at once, as taskscope stops a drained node's
# tasks (SIGTERM to each task's process; systemd sees each scope empty and
# collects it, no stop job): every 10 s until no scope's cgroup is left,
# how many are left and how long one new scope takes to start meanwhile
# (what a start on that node waits for); at the end PID 1's CPU per scope
# collected. PROBE_KEEP=1 leaves them running instead.
set -euo pipefail
N=${1:-1500}
LAYOUT=${2:-flat}
slice_of() {
    case $LAYOUT in
    flat) echo probe.slice ;;
    spread) echo "probe-$(($1 / 100)).slice" ;;
    *) echo "layout must be flat or spread" >&2 && exit 2 ;;
    esac
}
cpu() { awk '{printf "%.2f", ($14+$15)/100}' /proc/1/stat; }
c0=$(cpu)
for ((i = 0; i < N; i++)); do
    systemd-run -q --scope --slice="$(slice_of "$i")" --unit="probe-$i" sleep infinity >/dev/null 2>&1 &
    if (((i + 1) % 4 == 0)); then
        until [ "$(find /sys/fs/cgroup/probe.slice -maxdepth 2 -name 'probe-*.scope' 2>/dev/null | wc -l)" -ge $((i + 1)) ]; do
            sleep 0.05
        done
    fi
    if (((i + 1) % 300 == 0)); then
        c1=$(cpu)
        echo "$LAYOUT, $((i + 1)) scopes: PID 1 $(awk -v a="$c0" -v b="$c1" 'BEGIN {printf "%.1f", (b - a) * 1000 / 300}') ms per start (last 300)"
        c0=$c1
    fi
done
[ "${PROBE_KEEP:-0}" = 1 ] && exit 0

left() { find /sys/fs/cgroup/probe.slice -maxdepth 2 -name 'probe-*.scope' 2>/dev/null | wc -l; }
now_ms() { date +%s%3N; }
c0=$(cpu) s=$(now_ms)
find /sys/fs/cgroup/probe.slice -path '*/probe-*.scope/cgroup.procs' -exec cat {} + | xargs kill -TERM
while :; do
    sleep 10
    n=$(left) t=$(now_ms)
    timeout 120 systemd-run -q --scope --slice=probe.slice --unit="fresh-$t" true >/dev/null 2>&1 && r=ok || r=failed
    echo "$LAYOUT, $(( (t - s) / 1000 )) s after the stops: $n scope cgroups left; one new scope: $r in $(( $(now_ms) - t )) ms"
    [ "$n" -eq 0 ] && break
done
# PID 1's CPU over the whole collection (the new scopes' starts included)
echo "$LAYOUT: all $N stopped and collected in under $(( ($(now_ms) - s) / 1000 )) s; PID 1 $(awk -v a="$c0" -v b="$(cpu)" -v n="$N" 'BEGIN {printf "%.1f", (b - a) * 1000 / n}') ms per scope collected"
