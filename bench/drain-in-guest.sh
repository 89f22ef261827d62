#!/usr/bin/env bash
# A node drain through taskscope (issue 31), in one boot of the test bed
# (v2): bench/node_drain.sh in the guest, with STAGE installed. For each
# stop_window given, the node is filled with N one-task allocations (logs
# on) and drained the way Nomad drains it, while a new task is started
# every 2 s. Prints how long systemd took to collect everything and how
# long those starts took meanwhile.
#   bench/drain-in-guest.sh STAGE [N] [WINDOWS]
# STAGE: a tree made by `DESTDIR=DIR cmake --install BUILD`, under this
# checkout. N: tasks (default 10000). WINDOWS: stop_window values, comma
# separated (default 64,0; 0 sends every stop at once, as before).
# DRAIN_VERBOSE=1 and DRAIN_PID1_DEBUG=1 pass on to node_drain.sh (debug
# logs of the manager, of PID 1).
# DRAIN_MEM (MiB, default 12288) and DRAIN_TIMEOUT (s) size the guest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
stage=$(realpath -e "$1")
n=${2:-10000}
windows=${3:-64,0}
exec "$root/testbed/run.sh" --variant v2 --smp 2 --mem "${DRAIN_MEM:-12288}" --timeout "${DRAIN_TIMEOUT:-5400}" \
	--share "$root" -- bash -c "
  set -e
  tar -C '$stage' -cf - . | tar -C / -xf - --keep-directory-symlink
  systemctl daemon-reload
  systemctl reload dbus
  DRAIN_VERBOSE='${DRAIN_VERBOSE:-0}' DRAIN_PID1_DEBUG='${DRAIN_PID1_DEBUG:-0}' BENCH_FILL_BIN='$build/bench/taskscope-bench-fill' \
    bash '$root/bench/node_drain.sh' $n '$windows'"
