#!/usr/bin/env bash
# Memory taskscope spends per running task: the growth of the summed PSS of
# every taskscope process (the manager and the per-task shims) from 0 to N
# running tasks (default 1000), divided by N. Runs where taskscope-manager
# is installed and PID 1 is systemd (the test bed guest).
set -euo pipefail
N=${1:-1000}
I=org.taskscope.Manager1
M=/org/taskscope/Manager1

source "$(dirname "$0")/pss.sh"

systemctl restart taskscope-manager
busctl call $I $M $I ListTasks >/dev/null
before=$(pss_sum)
for ((i = 0; i < N; i++)); do
    busctl call $I $M $I StartTask sss mem "t$i" '{"command":"/bin/sleep","args":["3600"],"logs":false}' >/dev/null
done
after=$(pss_sum)
shims=$(pgrep -xc taskscope-shim)
mgr=$(awk '/^Pss:/ {print $2}' "/proc/$(pgrep -x taskscope-manag)/smaps_rollup")
echo "memory per task: $(( (after - before) / N )) KiB PSS over $N tasks (before ${before} KiB, after ${after} KiB; manager now ${mgr} KiB; ${shims} shims)"
echo "target <= 64 KiB per task"
for ((i = 0; i < N; i++)); do
    busctl call $I $M $I StopTask sssx mem "t$i" SIGKILL 0 >/dev/null || true
done
