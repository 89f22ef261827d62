#!/usr/bin/env bash
# StartTask latency with two shim binaries under the same manager (root, in
# the guest, installed manager): the cost of a change inside the shim alone
# (issue 32: outputs opened without following symlinks and checked on the
# fd; an isolated task's own cgroup namespace and cgroup mount). For each
# round and each shim (A, B, A, B, ... by a drop-in's shim_path and a
# manager restart) it times ROUNDS starts of a task on the host's root whose
# stdout/stderr go to a fifo (stdout_path, as Nomad's), and of an isolated
# task; prints the medians per shim and B/A.
# Usage: shim_ab_start.sh SHIM_A SHIM_B [ROUNDS] [PASSES]  (defaults 15 2)
set -euo pipefail
A=$1
B=$2
N=${3:-15}
PASSES=${4:-2}
I=org.taskscope.Manager1
M=/org/taskscope/Manager1
DROPIN=/etc/taskscope/manager.json.d/90-bench-shim.json
W=/run/shim-ab
now_us() { echo $(($(date +%s%N) / 1000)); }
mgr() { busctl call $I $M $I "$@"; }
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
cleanup() { rm -f "$DROPIN"; rm -rf "$W"; systemctl restart taskscope-manager; }
trap cleanup EXIT
mkdir -p "$W" "${DROPIN%/*}"
mkfifo -m 600 "$W/out" "$W/err"
exec {hold}<>"$W/out" {hold2}<>"$W/err" # the collector's ends, as Nomad's logmon holds them
PLAIN=$(printf '{"command":"/bin/true","stdout_path":"%s/out","stderr_path":"%s/err"}' "$W" "$W")
ISO='{"command":"/bin/true","logs":false,"isolation":{}}'

run() { # LABEL SHIM -> appends "label kind us" lines
    local label=$1 shim=$2 i t0
    echo "{\"shim_path\":\"$shim\"}" >"$DROPIN"
    systemctl restart taskscope-manager
    mgr ListTasks >/dev/null
    for ((i = 0; i < N; i++)); do
        for kind in plain iso; do
            local spec=$PLAIN
            [[ $kind == iso ]] && spec=$ISO
            t0=$(now_us)
            mgr StartTask sss bench-ab "$kind$i" "$spec" >/dev/null
            echo "$label $kind $(($(now_us) - t0))" >>"$W/times"
            mgr StopTask sssx bench-ab "$kind$i" SIGKILL 0 >/dev/null 2>&1 || true
            for _ in $(seq 100); do mgr ForgetTask ss bench-ab "$kind$i" >/dev/null 2>&1 && break; sleep 0.05; done
        done
    done
}
for ((p = 0; p < PASSES; p++)); do
    run A "$A"
    run B "$B"
done
for kind in plain iso; do
    a=$(awk -v k=$kind '$1 == "A" && $2 == k {print $3}' "$W/times" | median)
    b=$(awk -v k=$kind '$1 == "B" && $2 == k {print $3}' "$W/times" | median)
    echo "StartTask $kind: A $((a / 1000)) ms, B $((b / 1000)) ms, B/A $(awk -v a=$a -v b=$b 'BEGIN {printf "%.2f", b / a}') ($((N * PASSES)) starts each)"
done
