#!/usr/bin/env bash
# PID 1's CPU per start over a fill of one-task allocations
# (pid1_fill_steps.sh), with the slices' CPU weights paced at each of the
# given intervals (slice_weight_interval_ms), one after the other in ONE
# boot of the test bed (v2), so that the figures compare on equal terms:
# whether the buckets' weight calls are what grows PID 1's cost per start
# through StartTask when systemd alone stays near flat (bench/README.md,
# stop 47).
#   bench/weight_interval_ab.sh [N] [SETTING ...]   (defaults 5000; 60000 1000)
# A SETTING is slice_weight_interval_ms alone (a number), or a JSON object
# of manager keys, such as '{"slice_weight_node_interval_ms": 0}' (the
# node-wide pacing off: stop 48's A/B).
# Env: BUILD_DIR (default build/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
n=${1:-5000}
shift || true
intervals=("$@")
((${#intervals[@]})) || intervals=(60000 1000)
rm -rf "$build/stage"
DESTDIR="$build/stage" cmake --install "$build" >/dev/null
exec "$root/testbed/run.sh" --variant v2 --smp 2 --mem 8192 --timeout $((1500 * ${#intervals[@]} + 600)) --share "$root" -- bash -c "
  set -u
  tar -C '$build/stage' -cf - . | tar -C / -xf - --keep-directory-symlink && systemctl daemon-reload && systemctl reload dbus
  mkdir -p /etc/taskscope/manager.json.d
  for iv in $(printf '%q ' "${intervals[@]}"); do
    case \$iv in
    '{'*) echo \"\$iv\" ;;
    *) echo \"{\\\"slice_weight_interval_ms\\\": \$iv}\" ;;
    esac >/etc/taskscope/manager.json.d/50-weight-interval.json
    systemctl restart taskscope-manager
    echo \"=== \$(cat /etc/taskscope/manager.json.d/50-weight-interval.json)\"
    BENCH_FILL_BIN='$build/bench/taskscope-bench-fill' timeout 1500 bash '$root/bench/pid1_fill_steps.sh' $n 300 1 || echo \"rc=\\\$?\"
  done
"
