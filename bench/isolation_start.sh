#!/usr/bin/env bash
# The cost of isolation (issue 14), in the guest (root, installed manager):
#  1. StartTask latency (the reply comes once the task has exec'd, so an
#     isolated start includes the shim's namespaces, binds and pivot_root):
#     isolated vs not isolated (target <= 1.3x), interleaved one of each per
#     round, and the floor (not isolated) measured twice to show its spread;
#     the anchor is a Nomad-style chroot of the same chroot_env built by
#     `cp -al` (hard links, Nomad's first choice) and by `cp -a` (its
#     fallback across filesystems) into a task dir, plus a start of a task
#     that chroots into it;
#  2. disk: df and du of the task dirs before/after N isolated tasks
#     (target: nothing beyond what the tasks write), against the copies;
#  3. memory: PSS growth of taskscope's processes and MemAvailable drop per
#     running task, isolated vs not.
# Usage: isolation_start.sh [ROUNDS] [TASKS] [COPIES]  (defaults 20 100 1)
set -euo pipefail
N=${1:-20}
TASKS=${2:-100}
COPIES=${3:-1}
I=org.taskscope.Manager1
M=/org/taskscope/Manager1
ROOTS=/var/lib/taskscope/tasks-root
ENV_DIRS=(/bin /etc /lib /lib32 /lib64 /sbin /usr)  # the default chroot_env that exists here
ANCHOR=/var/lib/taskscope-bench-chroot
now_us() { echo $(($(date +%s%N) / 1000)); }
mgr() { busctl call $I $M $I "$@"; }
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

PLAIN='{"command":"/bin/true","logs":false}'
ISO='{"command":"/bin/true","logs":false,"isolation":{}}'
start_us() { # ALLOC TASK SPEC -> microseconds of the StartTask call
    local t0 t1
    t0=$(now_us)
    mgr StartTask sss "$1" "$2" "$3" >/dev/null
    t1=$(now_us)
    echo $((t1 - t0))
}
forget_all() { # ALLOC COUNT PREFIX
    local i
    for ((i = 0; i < $2; i++)); do
        mgr StopTask sssx "$1" "$3$i" SIGKILL 0 >/dev/null 2>&1 || true
        mgr ForgetTask ss "$1" "$3$i" >/dev/null 2>&1 || true
    done
}

systemctl restart taskscope-manager
busctl call $I $M $I ListTasks >/dev/null
# Warm-up: the first isolated start pages in the shim's paths.
start_us bench-warm p "$PLAIN" >/dev/null; start_us bench-warm i "$ISO" >/dev/null
mgr ForgetTask ss bench-warm p >/dev/null 2>&1 || true; mgr ForgetTask ss bench-warm i >/dev/null 2>&1 || true

# --- 1. start latency ---
: >/tmp/iso-bench-plain; : >/tmp/iso-bench-plain2; : >/tmp/iso-bench-iso
for ((i = 0; i < N; i++)); do
    start_us bench-plain "p$i" "$PLAIN" >>/tmp/iso-bench-plain
    start_us bench-iso "i$i" "$ISO" >>/tmp/iso-bench-iso
    start_us bench-plain "q$i" "$PLAIN" >>/tmp/iso-bench-plain2
done
plain=$(median </tmp/iso-bench-plain); plain2=$(median </tmp/iso-bench-plain2); iso=$(median </tmp/iso-bench-iso)
forget_all bench-plain "$N" p; forget_all bench-plain "$N" q; forget_all bench-iso "$N" i
echo "StartTask median over $N rounds: not isolated ${plain} us (again in the same rounds: ${plain2} us, floor spread $(ratio "$plain2" "$plain")), isolated ${iso} us, ratio $(ratio "$iso" "$plain") (target <= 1.3)"

# The anchor: Nomad's chroot, built per task by copying the chroot_env.
envsize=$(du -scx "${ENV_DIRS[@]}" 2>/dev/null | tail -1 | cut -f1) || true  # du says 1 for a missing /lib32
free_kib=$(df -k --output=avail /var/lib | tail -1)
for mode in al a; do
    if [[ $mode == a ]] && ((free_kib < envsize * 12 / 10)); then
        echo "cp -a skipped: ${envsize} KiB to copy, ${free_kib} KiB free"
        continue
    fi
    total=0
    for ((c = 0; c < COPIES; c++)); do
        rm -rf "$ANCHOR"; mkdir -p "$ANCHOR"
        t0=$(now_us)
        for d in "${ENV_DIRS[@]}"; do [[ -e $d ]] && cp -$mode "$d" "$ANCHOR/"; done
        t1=$(now_us)
        s=$(start_us bench-anchor "c$mode$c" '{"command":"/usr/sbin/chroot","args":["'$ANCHOR'","/bin/true"],"logs":false}')
        total=$((total + t1 - t0 + s))
    done
    used=$(du -sxk "$ANCHOR" | cut -f1)
    per=$((total / COPIES))
    echo "Nomad-style chroot by cp -$mode of ${envsize} KiB of chroot_env, plus a start that chroots: ${per} us per task, $(ratio "$per" "$iso")x the isolated start; its task dir holds ${used} KiB"
    for ((c = 0; c < COPIES; c++)); do mgr ForgetTask ss bench-anchor "c$mode$c" >/dev/null 2>&1 || true; done
    rm -rf "$ANCHOR"
done

# --- 2. disk and 3. memory, with TASKS running tasks of each kind ---
source "$(dirname "$0")/pss.sh"
avail() { awk '/^MemAvailable:/ {print $2}' /proc/meminfo; }
run_many() { # ALLOC SPEC -> "pss_kib_per_task avail_kib_per_task"
    local p0 a0 p1 a1 i
    sync; echo 3 >/proc/sys/vm/drop_caches
    p0=$(pss_sum); a0=$(avail)
    for ((i = 0; i < TASKS; i++)); do mgr StartTask sss "$1" "t$i" "$2" >/dev/null; done
    sync; echo 3 >/proc/sys/vm/drop_caches
    p1=$(pss_sum); a1=$(avail)
    echo "$(((p1 - p0) / TASKS)) $(((a0 - a1) / TASKS))"
}
SLEEP='{"command":"/bin/sleep","args":["3600"],"logs":false}'
ISLEEP='{"command":"/bin/sleep","args":["3600"],"logs":false,"isolation":{}}'
read -r ppss pavail < <(run_many bench-memp "$SLEEP")
df0=$(df -B1 --output=used /var/lib/taskscope | tail -1)
read -r ipss iavail < <(run_many bench-memi "$ISLEEP")
df1=$(df -B1 --output=used /var/lib/taskscope | tail -1)
du_dirs=$(du -sxk $ROOTS/bench-memi | cut -f1)
echo "memory per running task over $TASKS: not isolated ${ppss} KiB PSS (${pavail} KiB MemAvailable), isolated ${ipss} KiB PSS (${iavail} KiB MemAvailable; the mount namespace and its ~40 mounts are kernel memory, outside PSS)"
echo "disk per isolated task: df $(((df1 - df0) / TASKS)) bytes, du of the task dirs $((du_dirs * 1024 / TASKS)) bytes (mount points and the task dir layout: directories, no file data)"
forget_all bench-memp "$TASKS" t
forget_all bench-memi "$TASKS" t
