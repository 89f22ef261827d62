#!/usr/bin/env bash
# How many times the kernel writes a cpu.max per start and per stop (issue
# 49), counted by a kprobe on cpu_max_write (kernel/sched/core.c: the
# cgroup v2 file's write handler, which ends in tg_set_cfs_bandwidth and its
# walk of every task group on the node), through tracefs; and how many
# cgroups on the node have the cpu controller. Root, in the v2 guest, on
# the installed manager. Two shapes in one boot, interleaved per round:
#   delegated - scopes with "delegate": true, every controller delegated
#               (what every task scope had before issue 49);
#   default   - scopes delegated with no controllers (DelegateControllers=).
# Each round starts K one-task allocations of each shape (cpu_shares 100,
# Nomad's default for `cpu = 100`), then K second tasks into them, then
# stops and forgets them all; the node holds FILL running tasks meanwhile.
#   cpu_max_writes.sh [K] [FILL] [ROUNDS]   (defaults 20 300 2)
set -euo pipefail
K=${1:-20}
FILL=${2:-300}
ROUNDS=${3:-2}
I=org.taskscope.Manager1
M=/org/taskscope/Manager1
T=/sys/kernel/tracing
[[ -e $T/kprobe_events ]] || mount -t tracefs tracefs $T
fn=cpu_max_write
grep -qw "$fn" $T/available_filter_functions || fn=tg_set_cfs_bandwidth
grep -qw "$fn" $T/available_filter_functions || { echo "no kprobe point (cpu_max_write, tg_set_cfs_bandwidth)"; exit 2; }
echo "p:taskscope_cpumax $fn" >>$T/kprobe_events
ev=$T/events/kprobes/taskscope_cpumax/enable
cleanup() {
    echo 0 >$ev 2>/dev/null || true
    echo "-:taskscope_cpumax" >>$T/kprobe_events 2>/dev/null || true
}
trap cleanup EXIT

count_during() { # COMMAND...: cpu.max writes the kernel saw while it ran
    echo >$T/trace
    echo 1 >$ev
    "$@"
    echo 0 >$ev
    grep -c taskscope_cpumax $T/trace || true
}
cpu_cgroups() { find /sys/fs/cgroup -name cpu.max 2>/dev/null | wc -l; }
spec_of() { # DELEGATE(true|false)
    jq -cn --argjson d "$1" '{command:"/bin/sleep", args:["3600"], logs:false, resources:{cpu_shares:100}} +
        (if $d then {delegate:true} else {} end)'
}
start_all() { # PREFIX TASK DELEGATE
    local i spec
    spec=$(spec_of "$3")
    for ((i = 0; i < K; i++)); do busctl call $I $M $I StartTask sss "$1$i" "$2" "$spec" >/dev/null; done
}
stop_all() { # PREFIX
    local i t
    for ((i = 0; i < K; i++)); do
        for t in a b; do busctl call $I $M $I StopTask sssx "$1$i" $t SIGKILL 0 >/dev/null; done
    done
    for ((i = 0; i < K; i++)); do
        for t in a b; do
            while [[ $(busctl --json=short call $I $M $I GetTask ss "$1$i" $t | jq -r '.data[0]' | jq -r .state) == running ]]; do
                sleep 0.05  # the poll's pace
            done
            busctl call $I $M $I ForgetTask ss "$1$i" $t >/dev/null
        done
    done
}

echo "guest: $(nproc) CPUs, systemd $(systemctl --version | awk 'NR==1 {print $2}'), kernel $(uname -r); kprobe on $fn"
echo "filling the node with $FILL one-task allocations (default shape)"
fillspec=$(spec_of false)
base=$(cpu_cgroups)
buckets0=$(find /sys/fs/cgroup/nomad.slice -maxdepth 2 -name 'nomad-share-b*.slice' 2>/dev/null | wc -l)
for ((i = 0; i < FILL; i++)); do busctl call $I $M $I StartTask sss "fill$i" t "$fillspec" >/dev/null; done
filled=$(cpu_cgroups)
buckets=$(find /sys/fs/cgroup/nomad.slice -maxdepth 2 -name 'nomad-share-b*.slice' 2>/dev/null | wc -l)
# Each one-task allocation adds its slice (and the first into a bucket, the
# bucket): the count at 10,000 is the node's base, the buckets and one per
# allocation, which this measures.
echo "cgroups with the cpu controller: $base before, $filled with $FILL one-task allocations in $buckets buckets" \
    "($((buckets - buckets0)) new): $(awk -v a=$filled -v b=$base -v n=$FILL -v k=$((buckets - buckets0)) \
        'BEGIN {printf "%.3f", (a - b - k) / n}') per allocation besides the buckets"
printf '%-10s %5s | %-28s | %-28s | %-18s\n' shape round "cpu.max writes per new alloc" "per second task (existing)" "per stop (2 tasks)"
for ((r = 1; r <= ROUNDS; r++)); do
    for shape in delegated default; do
        d=false
        [[ $shape == delegated ]] && d=true
        p="cm$r$shape"
        a=$(count_during start_all "$p" a $d)
        b=$(count_during start_all "$p" b $d)
        cg=$(cpu_cgroups)
        s=$(count_during stop_all "$p")
        printf '%-10s %5d | %-28s | %-28s | %-18s  (%s cpu cgroups with them running)\n' $shape $r \
            "$(awk -v n=$a -v k=$K 'BEGIN {printf "%.2f", n / k}')" "$(awk -v n=$b -v k=$K 'BEGIN {printf "%.2f", n / k}')" \
            "$(awk -v n=$s -v k=$K 'BEGIN {printf "%.2f", n / k}')" "$cg"
    done
done
for ((i = 0; i < FILL; i++)); do busctl call $I $M $I StopTask sssx "fill$i" t SIGKILL 0 >/dev/null; done
