#!/usr/bin/env bash
# A node drain through taskscope (issue 31), in one boot of the test bed
# (v2): for each stop_window given, the node is filled with N one-task
# allocations (logs on) and drained the way Nomad drains it, every task
# stopped and forgotten (taskscope-bench-fill drain), while a new task is
# started every 2 s. Prints how long systemd took to collect everything and
# how long those starts took meanwhile.
#   bench/drain-in-guest.sh STAGE [N] [WINDOWS]
# STAGE: a tree made by `DESTDIR=DIR cmake --install BUILD`, under this
# checkout. N: tasks (default 10000). WINDOWS: stop_window values, comma
# separated (default 64,0; 0 sends every stop at once, as before).
# DRAIN_VERBOSE=1: the manager logs at debug level (journald unthrottled),
# and the step profile of each new start during the drain is printed at
# the end (where its time went: prepare, record on disk, systemd job...).
# DRAIN_PID1_DEBUG=1: PID 1 logs at debug level during the drain, and a
# table per second of uptime says how many method calls it read and how
# many scopes it collected (stop 42: it reads none while it collects).
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
  cp -a --remove-destination '$stage/.' /
  systemctl daemon-reload
  systemctl reload dbus
  mkdir -p /etc/taskscope/manager.json.d
  if [[ '${DRAIN_VERBOSE:-0}' == 1 ]]; then
    mkdir -p /etc/systemd/journald.conf.d /etc/systemd/system/taskscope-manager.service.d
    printf '[Journal]\\nRateLimitIntervalSec=0\\n' >/etc/systemd/journald.conf.d/90-drain-bench.conf
    systemctl restart systemd-journald
    exe=\$(systemctl show -P ExecStart taskscope-manager | sed -n 's/.*path=\\([^ ;]*\\).*/\\1/p')
    printf '[Service]\\nExecStart=\\nExecStart=%s -v\\n' \"\$exe\" >/etc/systemd/system/taskscope-manager.service.d/90-verbose.conf
    systemctl daemon-reload
  fi
  for w in ${windows//,/ }; do
    echo \"=== stop_window \$w, $n one-task allocations\"
    systemctl stop taskscope-manager taskscope-streamer 2>/dev/null || true
    rm -rf /var/lib/taskscope /run/taskscope /var/lib/taskscope-streamer
    echo \"{\\\"stop_window\\\": \$w}\" >/etc/taskscope/manager.json.d/90-drain-bench.json
    systemctl start taskscope-manager
    BENCH_FILL_PER_ALLOC=1 '$build/bench/taskscope-bench-fill' start $n 32 | tail -3
    [[ '${DRAIN_PID1_DEBUG:-0}' == 1 ]] && systemd-analyze log-level debug
    BENCH_FILL_PER_ALLOC=1 '$build/bench/taskscope-bench-fill' drain $n 32
    if [[ '${DRAIN_PID1_DEBUG:-0}' == 1 ]]; then
      systemd-analyze log-level info
      echo \"--- PID 1 during the drain, per second of uptime: method calls read, scopes collected\"
      journalctl _PID=1 -o short-monotonic --no-pager |
        awk -F'[][]' '/Got message type=method_call/{m[int(\$2)]++; s[int(\$2)]=1} /: Collecting\./{c[int(\$2)]++; s[int(\$2)]=1} END{for (t in s) print t, m[t]+0, c[t]+0}' | sort -n
    fi
    if [[ '${DRAIN_VERBOSE:-0}' == 1 ]]; then
      echo \"--- step profiles of the starts during the drain (manager's debug log)\"
      journalctl -u taskscope-manager -o short-monotonic --no-pager | grep 'Start of drainprobe' || true
    fi
  done"
