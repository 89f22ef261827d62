#!/usr/bin/env bash
# Two builds of nomad-driver-taskscope against each other, in one boot:
# taskscope-bench-nomad runs for A, B, A, B, ... (RUNS each, ROUNDS
# StartTasks per run), so that both meet the same guest, manager and
# systemd, and prints each run's summary lines. Root, in the guest, with
# the manager and the streamer installed and running, e.g. (from the
# source dir, after a build):
#   testbed/run.sh --variant v2 --smp 2 --mem 4096 --share "$PWD" -- bash -c '
#     tar -C build/stage -cf - . | tar -C / -xf - --keep-directory-symlink && systemctl daemon-reload && systemctl reload dbus &&
#     systemctl start taskscope-manager taskscope-streamer &&
#     BENCH=build/bench/taskscope-bench-nomad bash bench/nomad_start_ab.sh OLD_PLUGIN NEW_PLUGIN 3 30'
# Usage: nomad_start_ab.sh PLUGIN_A PLUGIN_B [RUNS] [ROUNDS]
set -euo pipefail
a=${1:?plugin A} b=${2:?plugin B} runs=${3:-3} rounds=${4:-30}
bench=${BENCH:?the taskscope-bench-nomad binary}
for ((i = 1; i <= runs; i++)); do
    for which in A B; do
        plugin=$a
        [[ $which == B ]] && plugin=$b
        echo "== run $i, plugin $which ($plugin)"
        # TASKS 10: the RSS part is not what is compared here.
        "$bench" "$plugin" "$rounds" 10 | grep -E '^(StartTask|driver|floor)'
    done
done
