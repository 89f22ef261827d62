#!/usr/bin/env bash
# Boots the test bed (cgroup v2), installs the build and runs the benchmarks.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
rm -rf "$build/stage"
DESTDIR="$build/stage" cmake --install "$build" >/dev/null
exec "$root/testbed/run.sh" --variant v2 --smp 2 --mem 4096 --share "$root" -- bash -c "
  set -e
  tar -C '$build/stage' -cf - . | tar -C / -xf - --keep-directory-symlink && systemctl daemon-reload && systemctl reload dbus
  systemctl start taskscope-manager
  '$build/bench/taskscope-bench-start' \${BENCH_N:-50}
  bash '$root/bench/network_create.sh' \${BENCH_NET_N:-10}
  bash '$root/bench/isolation_start.sh' \${BENCH_ISO_N:-20} \${BENCH_ISO_TASKS:-100}
  '$build/bench/taskscope-bench-concurrency' \${BENCH_CONC_N:-1000} \${BENCH_CONC_LEVELS:-8,32,128}
  systemctl start taskscope-streamer
  '$build/bench/taskscope-bench-exec' \${BENCH_N:-50}
  '$build/bench/taskscope-bench-nomad' /usr/lib/nomad/plugins/nomad-driver-taskscope \${BENCH_N:-50} \${BENCH_NOMAD_TASKS:-100}
  '$build/bench/taskscope-bench-nomad' /usr/lib/nomad/plugins/nomad-driver-taskscope --options \${BENCH_N:-50}
  bash '$root/bench/memory_per_task.sh' \${BENCH_TASKS:-1000}
  bash '$root/bench/shim_pss.sh' /usr/libexec/taskscope/taskscope-shim 200
  BENCH_STATS_BIN='$build/bench/taskscope-bench-stats' bash '$root/bench/stats_cpu.sh' \${BENCH_TASKS:-1000} \${BENCH_STATS_SECONDS:-60}"
