#!/usr/bin/env bash
# taskscope-bench-layout (PID 1's cost per start as a node fills, flat
# against nested slice layouts, issue 31) for several runs in ONE boot of
# the test bed (v2), so that their figures compare on equal terms. Each run
# starts from an empty probe.slice (the bench stops it at its end) and is
# cut at its own time limit, so that one slow run cannot eat the others'.
#   bench/layout-in-guest.sh 'N SHAPE LAYOUT [OPTIONS]' ...
# e.g.
#   bench/layout-in-guest.sh '2000 single flat --step 250' \
#       '10000 single nested:64 --drain' '10000 one nested:64 --cap 100'
# Env: LAYOUT_RUN_TIMEOUT (seconds per run, default 1800), LAYOUT_MEM
# (guest memory in MB, default 8192: 10,000 held processes and their units).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
bin=$build/bench/taskscope-bench-layout
[[ -x $bin ]] || { echo "no $bin: build first" >&2; exit 2; }
(($#)) || { echo "usage: $0 'N SHAPE LAYOUT [OPTIONS]' ..." >&2; exit 2; }
per_run=${LAYOUT_RUN_TIMEOUT:-1800}
runs=""
for r in "$@"; do runs+=$(printf ' %q' "$r"); done
total=$((per_run * $# + 600))
exec "$root/testbed/run.sh" --variant v2 --smp 2 --mem "${LAYOUT_MEM:-8192}" --timeout "$total" --share "$root" -- bash -c "
  set -u
  echo \"guest: \$(nproc) CPUs, \$(awk '/MemTotal/ {print int(\$2/1024)}' /proc/meminfo) MB, systemd \$(systemctl --version | awk 'NR==1 {print \$2}')\"
  rc=0
  for run in $runs; do
    echo \"=== \$run\"
    # A run cut by its limit leaves its units: the next starts clean, once
    # systemd has collected them (a call made meanwhile waits behind it).
    timeout --signal=INT $per_run '$bin' \$run || { echo \"  run ended with \$?\"; rc=1; }
    systemctl stop probe.slice 2>/dev/null || true
    systemctl reset-failed 2>/dev/null || true
    until [ \"\$(systemctl list-units --all --no-legend --plain 'probe*' 2>/dev/null | wc -l)\" -eq 0 ]; do sleep 5; done
    sleep 10
  done
  exit \$rc"
