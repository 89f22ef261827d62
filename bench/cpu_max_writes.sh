#!/usr/bin/env bash
# How many times the kernel writes a cpu.max per start and per stop (issue
# 49), counted by a kprobe on cpu_max_write (kernel/sched/core.c: the
# cgroup v2 file's write handler, which ends in tg_set_cfs_bandwidth and its
# walk of every task group on the node), through tracefs; and how many
# cgroups on the node have the cpu controller. Root, in the v2 guest, on
# the installed manager. Two shapes in one boot, interleaved per round:
#   delegated - scopes with "delegate": true, every controller delegated
#               (what every task scope had before issue 49);
#   default   - scopes delegated with no controllers (DelegateControllers=);
#   held      - the default, with the slices' weights held back
#               (slice_weight_node_interval_ms 60000, the manager
#               restarted for it, 5 s to settle: at most one weight call a
#               minute on the node, which the levels show if one falls in
#               a phase): what a start and a stop cost when their bucket's
#               weight is left unchanged.
# Each round starts K one-task allocations of each shape (cpu_shares 100,
# Nomad's default for `cpu = 100`) and stops and forgets them; then K
# more, K second tasks into them, and stops and forgets them all; the node
# holds FILL running tasks meanwhile. A phase's count includes what the
# manager sends after its calls were answered (slice weights, paced), until
# no cpu.max was written for 3 s (at most 20 s). A second probe, on
# do_sys_openat2, names the cgroup of each cpu.max PID 1 opened: each
# phase's writes are printed by level too (scope, allocation slice,
# bucket, above).
#   cpu_max_writes.sh [K] [FILL] [ROUNDS] [SHAPES]
#   (defaults 20 300 2 "delegated default")
set -euo pipefail
K=${1:-20}
FILL=${2:-300}
ROUNDS=${3:-2}
SHAPES=${4:-delegated default}
HOLD=/etc/taskscope/manager.json.d/70-bench-hold-weights.json
I=org.taskscope.Manager1
M=/org/taskscope/Manager1
T=/sys/kernel/tracing
[[ -e $T/kprobe_events ]] || mount -t tracefs tracefs $T
fn=cpu_max_write
grep -qw "$fn" $T/available_filter_functions || fn=tg_set_cfs_bandwidth
grep -qw "$fn" $T/available_filter_functions || { echo "no kprobe point (cpu_max_write, tg_set_cfs_bandwidth)"; exit 2; }
echo "p:taskscope_cpumax $fn" >>$T/kprobe_events
ev=$T/events/kprobes/taskscope_cpumax/enable
# x86-64: do_sys_openat2(dfd, filename, how), the filename in %si.
echo 'p:taskscope_open do_sys_openat2 path=+0(%si):ustring' >>$T/kprobe_events
echo 'path ~ "*cpu.max" && common_pid == 1' >$T/events/kprobes/taskscope_open/filter
oev=$T/events/kprobes/taskscope_open/enable
cleanup() {
    echo 0 >$ev 2>/dev/null || true
    echo 0 >$oev 2>/dev/null || true
    echo "-:taskscope_cpumax" >>$T/kprobe_events 2>/dev/null || true
    echo "-:taskscope_open" >>$T/kprobe_events 2>/dev/null || true
    rm -f "$levels_file"
    if [[ -e $HOLD ]]; then rm -f $HOLD && systemctl restart taskscope-manager; fi  # (an && list last would be the exit status)
}
trap cleanup EXIT

levels_file=$(mktemp)
levels() { cat "$levels_file"; }
count_during() { # COMMAND...: cpu.max writes the kernel saw while it ran and
    # until the manager's paced calls were done; levels: where PID 1 opened them
    local n last=-1 quiet=0 i
    echo >$T/trace
    echo 1 >$ev
    echo 1 >$oev
    "$@"
    for ((i = 0; i < 40 && quiet < 6; i++)); do
        sleep 0.5  # the settle's pace: 3 s without a write ends it
        n=$(grep -c taskscope_cpumax $T/trace || true)
        if [[ $n == "$last" ]]; then quiet=$((quiet + 1)); else quiet=0; fi
        last=$n
    done
    echo 0 >$ev
    echo 0 >$oev
    grep taskscope_open $T/trace | sed -n 's/.*path="\([^"]*\)".*/\1/p' | awk '
        /\.scope\/cpu\.max$/ {l["scope"]++; next}
        /nomad-share-b[0-9a-f]+-[^/]*\.slice\/cpu\.max$/ {l["alloc"]++; next}
        /nomad-share-b[0-9a-f]+\.slice\/cpu\.max$/ {l["bucket"]++; next}
        {l["other"]++}
        END {for (k in l) printf "%s%s %d", (n++ ? ", " : ""), k, l[k]}' >"$levels_file"
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
stop_all() { # PREFIX TASK...
    local i t p=$1
    shift
    for ((i = 0; i < K; i++)); do
        for t in "$@"; do busctl call $I $M $I StopTask sssx "$p$i" $t SIGKILL 0 >/dev/null; done
    done
    for ((i = 0; i < K; i++)); do
        for t in "$@"; do
            while [[ $(busctl --json=short call $I $M $I GetTask ss "$p$i" $t | jq -r '.data[0]' | jq -r .state) == running ]]; do
                sleep 0.05  # the poll's pace
            done
            busctl call $I $M $I ForgetTask ss "$p$i" $t >/dev/null
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
per() { awk -v n="$1" -v k=$K 'BEGIN {printf "%.2f", n / k}'; }
for ((r = 1; r <= ROUNDS; r++)); do
    for shape in $SHAPES; do
        d=false
        [[ $shape == delegated ]] && d=true
        if [[ $shape == held ]]; then
            mkdir -p "${HOLD%/*}"
            echo '{"slice_weight_node_interval_ms": 60000}' >$HOLD
            systemctl restart taskscope-manager
            sleep 5  # the restart's first weight call, if any, goes now
        fi
        p="cm$r$shape"
        a=$(count_during start_all "${p}x" a $d)
        la=$(levels)
        s1=$(count_during stop_all "${p}x" a)
        ls1=$(levels)
        start_all "$p" a $d
        b=$(count_during start_all "$p" b $d)
        lb=$(levels)
        cg=$(cpu_cgroups)
        s=$(count_during stop_all "$p" a b)
        ls=$(levels)
        echo "$shape, round $r ($cg cgroups with the cpu controller with the two-task allocations running), cpu.max writes:"
        echo "  per new one-task allocation  $(per $a)   ($la)"
        echo "  per stop of one              $(per $s1)   ($ls1)"
        echo "  per second task              $(per $b)   ($lb)"
        echo "  per stop of a two-task one   $(per $s)   ($ls)"
        if [[ $shape == held ]]; then
            rm -f $HOLD
            systemctl restart taskscope-manager
        fi
    done
done
for ((i = 0; i < FILL; i++)); do busctl call $I $M $I StopTask sssx "fill$i" t SIGKILL 0 >/dev/null; done
