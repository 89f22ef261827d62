#!/usr/bin/env bash
# StartTask against `systemd-run --scope` (taskscope-bench-start, with one
# allocation, with a new allocation per task, and that again with each
# measurement on an idle PID 1, also after 256 allocations) and the
# concurrency benchmark (taskscope-bench-concurrency) for two builds of the
# daemons in one boot of the test bed (v2), taking turns A B A B ..., so
# their ratios compare in the same guest. The bench programs themselves
# are this build's (they talk to the daemons over D-Bus only).
#   bench/ab-in-guest.sh A_STAGE B_STAGE [ROUNDS]
# A_STAGE, B_STAGE: trees made by `DESTDIR=DIR cmake --install BUILD`, under
# this checkout. BENCH_N (default 20), BENCH_CONC_N (300) and
# BENCH_CONC_LEVELS (32) size the runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
a=$(realpath -e "$1")
b=$(realpath -e "$2")
rounds=${3:-2}
exec "$root/testbed/run.sh" --variant v2 --smp 2 --mem 4096 --timeout 3000 --share "$root" -- bash -c "
  set -e
  # Each side from a clean node: no daemon, shim, task scope or state of
  # the other side's left (a running shim holds its binary busy).
  use() {
    systemctl stop taskscope-manager taskscope-streamer 2>/dev/null || true
    systemctl stop taskscope-shims.scope 2>/dev/null || true
    systemctl kill -s KILL nomad.slice 2>/dev/null || true
    rm -rf /var/lib/taskscope /run/taskscope /var/lib/taskscope-streamer
    tar -C \"\$1\" -cf - . | tar -C / -xf - --keep-directory-symlink
    systemctl daemon-reload
    systemctl reload dbus
    systemctl start taskscope-manager
  }
  for r in \$(seq $rounds); do
    for side in 'A $a' 'B $b'; do
      set -- \$side
      echo \"=== round \$r: \$1 (\$2)\"
      use \"\$2\"
      '$build/bench/taskscope-bench-start' ${BENCH_N:-20}
      '$build/bench/taskscope-bench-start' ${BENCH_N:-20} --new-alloc
      '$build/bench/taskscope-bench-start' ${BENCH_N:-20} --new-alloc --settle
      '$build/bench/taskscope-bench-start' ${BENCH_N:-20} --new-alloc --settle --warm
      '$build/bench/taskscope-bench-concurrency' ${BENCH_CONC_N:-300} ${BENCH_CONC_LEVELS:-32}
    done
  done"
