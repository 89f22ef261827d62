#!/usr/bin/env bash
# Issues 48 and 49's figures on a node at native speed: run inside the
# container of ../shared/native (the benches in /opt/bench, taskscope's .deb
# installed), as in-ct.sh runs its phases: add a phase to the copy of
# in-ct.sh in build/native, e.g. `case $PHASES in *y*) bash
# /opt/bench/native_issue49.sh wfdb $(($(left) - 20));; esac`, and call
# `device.sh 520 y`. Each phase prints as it goes.
#   bash /opt/bench/native_issue49.sh PHASES [SECONDS]
# PHASES, letters in this order:
#   w  cpu.max writes per start and stop, by cgroup level, with 1,000
#      one-task allocations running (cpu_max_writes.sh 20 1000 1)
#   f  PID 1's CPU per start over the first 300 and the last 300 of a
#      10,000-task fill through StartTask, one-task allocations and
#      allocations of 10 (pid1_fill_steps.sh; target <= 1.5x natively)
#   d  a drain of 10,000 through taskscope against systemd alone draining
#      the same units, a new task every 2 s during each (drain_ab.sh;
#      targets: <= 60 s, a start during it <= 0.5 s)
#   b  issue 48's fork bomb: 50 starts while a task forks at its pids
#      limit, the shipped defaults and the defaults before issue 48
#      (fork_bomb.sh; targets: >= 45 of 50 started, none failed leaving
#      anything, `systemctl status` <= 2 s)
# SECONDS (default 400): everything is cut to end by then.
# Phases w and b read answers with jq: add jq to mk-base.sh's --include.
# Phase w needs tracefs and kprobes in the container (it says so if not).
# Written at stop 48 with no lent machine: run natively, not yet.
set -uo pipefail
phases=${1:?phases}
end=$(($(date +%s) + ${2:-400}))
B=$(cd "$(dirname "$0")" && pwd)
export PATH=$B:$PATH
source "$B/native_phases.sh"

systemctl start taskscope-manager
if [[ $phases == *w* ]]; then
	sec "(w) cpu_max_writes.sh 20 1000 1"
	limited 120 bash "$B/cpu_max_writes.sh" 20 1000 1
fi
if [[ $phases == *f* ]]; then
	sec "(f) pid1_fill_steps.sh 10000 300 1 10"
	BENCH_FILL_BIN=$(command -v taskscope-bench-fill) limited 240 bash "$B/pid1_fill_steps.sh" 10000 300 1 10
fi
if [[ $phases == *d* ]]; then
	sec "(d) drain_ab.sh 10000"
	BENCH_DIR=$B limited 300 bash "$B/drain_ab.sh" 10000
fi
if [[ $phases == *b* ]]; then
	sec "(b) fork_bomb.sh 50"
	limited 300 bash "$B/fork_bomb.sh" 50 "$(command -v taskscope-bench-reads)" "protected unprotected"
fi
