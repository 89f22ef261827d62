#!/usr/bin/env bash
# What stats cost the streamer: with N running tasks (default 1000) sampled
# every second, the CPU time taskscope-streamer uses over SECONDS (default
# 60), in percent of one core (target <= 1%), and per task sample. The CPU
# time of dbus-daemon over the same span is shown too (it routes the
# Samples signals). Before the measurement the same span is measured with
# sampling off (DefaultIntervalMs 0) as the floor. Runs where taskscope is
# installed and PID 1 is systemd (the test bed guest).
set -euo pipefail
N=${1:-1000}
SECONDS_MEASURED=${2:-60}
I=org.taskscope.Manager1
M=/org/taskscope/Manager1
S=org.taskscope.Streamer1
P=/org/taskscope/Streamer1
SI=org.taskscope.Stats1
TCK=$(getconf CLK_TCK)

# utime + stime of a process, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
sampled() { busctl get-property $S $P $SI SampledTasks | awk '{print $2}'; }

systemctl start taskscope-manager taskscope-streamer
streamer=$(systemctl show -p MainPID --value taskscope-streamer)
bus=$(systemctl show -p MainPID --value dbus)
before_tasks=$(sampled)
start=$(date +%s)
for ((i = 0; i < N; i++)); do
    busctl call $I $M $I StartTask sss statsbench "t$i" '{"command":"/bin/sleep","args":["3600"],"logs":false}' >/dev/null
done
echo "started $N tasks in $(($(date +%s) - start)) s"
for ((i = 0; i < 600; i++)); do
    (($(sampled) >= before_tasks + N)) && break
    sleep 1
done
echo "the streamer samples $(sampled) tasks"

measure() {  # measure LABEL: CPU of the streamer and dbus-daemon over SECONDS_MEASURED
    local s0 b0 s1 b1 t0 t1
    s0=$(cpu_ticks "$streamer")
    b0=$(cpu_ticks "$bus")
    t0=$(date +%s%N)
    sleep "$SECONDS_MEASURED"
    s1=$(cpu_ticks "$streamer")
    b1=$(cpu_ticks "$bus")
    t1=$(date +%s%N)
    awk -v l="$1" -v s=$((s1 - s0)) -v b=$((b1 - b0)) -v ns=$((t1 - t0)) -v tck="$TCK" -v n="$N" \
        -v iv="$2" 'BEGIN {
        wall = ns / 1e9; scpu = s / tck; bcpu = b / tck
        printf "%s: streamer %.3f s CPU in %.1f s = %.2f%% of one core; dbus-daemon %.2f%%\n",
            l, scpu, wall, scpu / wall * 100, bcpu / wall * 100
        if (iv > 0) printf "%s: %.1f us of streamer CPU per task sample (%d tasks every %d ms)\n",
            l, scpu / (n * wall * 1000 / iv) * 1e6, n, iv
    }'
}

busctl set-property $S $P $SI DefaultIntervalMs t 0
sleep 2
measure "sampling off (floor)" 0
busctl set-property $S $P $SI DefaultIntervalMs t 1000
sleep 2
measure "$N tasks every 1 s" 1000
echo "target: <= 1% of one core at 1000 tasks every 1 s (TCG emulation inflates CPU costs 5-20x)"
# The sampling cost of the same cgroups, without the daemon and the bus.
if [[ -x "${BENCH_STATS_BIN:-}" ]]; then
    v=$(busctl get-property $S $P $SI CgroupVersion | awk '{print $2}' | tr -d '"')
    "$BENCH_STATS_BIN" /sys/fs/cgroup "$v" --children /nomad.slice 20 || true
fi

for ((i = 0; i < N; i++)); do
    busctl call $I $M $I StopTask sssx statsbench "t$i" SIGKILL 0 >/dev/null || true
done
