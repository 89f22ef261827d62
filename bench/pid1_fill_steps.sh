#!/usr/bin/env bash
# PID 1's CPU per start at the beginning of a fill and at N tasks (issue
# 49's flat PID 1, in the guest): for allocations of K tasks each, a first
# window of W starts on an empty node, a fill to N - W, and a last window
# of W; each window waits for PID 1 to be idle first and counts PID 1's CPU
# (utime + stime) over its starts. Prints both and their ratio, per shape.
# Root, where the .deb is installed and PID 1 is systemd (the guest):
#   BENCH_FILL_BIN=build/bench/taskscope-bench-fill bash bench/pid1_fill_steps.sh [N] [W] [K ...]
# (defaults 5000 300, shapes 1 and 10).
set -euo pipefail
N=${1:-5000}
W=${2:-300}
shift 2 || true
SHAPES=("$@")
((${#SHAPES[@]})) || SHAPES=(1 10)
FILL=${BENCH_FILL_BIN:-taskscope-bench-fill}
hz=$(getconf CLK_TCK)
pid1() { awk '{print $14 + $15}' /proc/1/stat; }
settle() { # until PID 1 used no CPU for a second (at most 2 minutes)
    local last now i
    last=$(pid1)
    for ((i = 0; i < 120; i++)); do
        sleep 1  # PID 1's CPU counter, read once a second
        now=$(pid1)
        [[ $now == "$last" ]] && return 0
        last=$now
    done
}
window() { # FROM: PID 1's ms per start over W starts from index FROM
    settle
    local c0 c1
    c0=$(pid1)
    BENCH_FILL_FROM=$1 "$FILL" start "$W" 16 >&2
    c1=$(pid1)
    awk -v c=$((c1 - c0)) -v w="$W" -v hz="$hz" 'BEGIN {printf "%.2f", c * 1000 / hz / w}'
}
echo "guest: $(nproc) CPUs, systemd $(systemctl --version | awk 'NR==1 {print $2}'); fill to $N, windows of $W"
for k in "${SHAPES[@]}"; do
    export BENCH_FILL_PER_ALLOC=$k
    first=$(window 0)
    BENCH_FILL_FROM=$W "$FILL" start $((N - 2 * W)) 32 >&2
    last=$(window $((N - W)))
    echo "allocations of $k: PID 1 $first ms per start over the first $W, $last over the last $W to $N:" \
        "ratio $(awk -v a="$first" -v b="$last" 'BEGIN {printf "%.2f", b / a}') (target <= 1.3)"
    "$FILL" stop "$N" 32 >&2
    settle
done
