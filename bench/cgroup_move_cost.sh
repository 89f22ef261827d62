#!/usr/bin/env bash
# What one cgroup migration costs on this node: a short process that writes
# itself into a cgroup.procs file, against the same process writing to
# /dev/null, 200 of each per round (default 3 rounds). The difference is the
# move: the writer takes the kernel's cgroup_threadgroup_rwsem, which waits
# for an RCU grace period. It is why the shim reports its task's pid before
# it moves itself into taskscope-shims.scope. cgroup v2, root; the probe
# cgroup is removed at the end.
set -euo pipefail
ROUNDS=${1:-3}
cg=/sys/fs/cgroup/taskscope-move-probe
mkdir -p "$cg"
trap 'rmdir "$cg" 2>/dev/null || true' EXIT
us_per() { # command run 200 times -> microseconds per run
    local s
    s=$(date +%s%N)
    for _ in $(seq 200); do "$@"; done
    echo $(( ($(date +%s%N) - s) / 200000 ))
}
for r in $(seq "$ROUNDS"); do
    plain=$(us_per sh -c 'echo $$ > /dev/null')
    moved=$(us_per sh -c "echo \$\$ > $cg/cgroup.procs")
    echo "round $r: $plain us per process, $moved us with a cgroup move: $(( moved - plain )) us per move"
done
