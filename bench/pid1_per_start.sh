#!/usr/bin/env bash
# PID 1's CPU per task started with `taskscopectl run`, 20 of each kind
# (long and short tasks, one allocation and a new one each), 0.3 s apart,
# for builds of the daemons installed one after the other in one boot;
# then systemd-run --scope for reference. Runs inside the test bed:
#   testbed/run.sh --variant v2 --smp 2 --mem 4096 --share "$PWD" -- \
#       bash "$PWD/bench/pid1_per_start.sh" "$PWD/STAGE_A" "$PWD/STAGE_B"[:VAR=1,...]
# STAGE: a tree made by `DESTDIR=DIR cmake --install BUILD`; after ':',
# environment for the manager's unit. The taskscopectl latency includes
# the CLI's own start (~150 ms here): compare it only side by side.
set -e
use() {
  systemctl stop taskscope-manager taskscope-streamer 2>/dev/null || true
  systemctl stop taskscope-shims.scope 2>/dev/null || true
  systemctl stop nomad.slice 2>/dev/null || true
  sleep 2
  rm -rf /var/lib/taskscope /run/taskscope /var/lib/taskscope-streamer
  tar -C "$1" -cf - . | tar -C / -xf - --keep-directory-symlink
  mkdir -p /run/systemd/system/taskscope-manager.service.d
  { echo "[Service]"; for kv in ${2//,/ }; do echo "Environment=$kv"; done; } > /run/systemd/system/taskscope-manager.service.d/diag.conf
  systemctl daemon-reload; systemctl reload dbus; systemctl start taskscope-manager
  sleep 2
}
pid1() { awk '{print $14+$15}' /proc/1/stat; }
N=20
measure() { # label allocmode cmd...
  local label=$1 mode=$2; shift 2
  local c0=$(pid1) lat=()
  for i in $(seq $N); do
    a=$mode; [[ $mode == new ]] && a="n$RANDOM$i"
    t0=$(date +%s%N); taskscopectl run "$a" "$label$i" -- "$@" >/dev/null; t1=$(date +%s%N)
    lat+=($(( (t1-t0)/1000000 )))
    sleep 0.3
  done
  local c1=$(pid1)
  med=$(printf '%s\n' "${lat[@]}" | sort -n | sed -n "$((N/2))p")
  echo "$label: PID1 $(( (c1-c0)*10/N )) ms per task; taskscopectl run median $med ms"
}
for spec in "$@"; do
  side=${spec%%:*}; env=; [[ $spec == *:* ]] && env=${spec#*:}
  echo "=== $side env=$env"
  use "$side" "$env"
  measure sleepsame same /bin/sleep 600
  measure sleepnew new /bin/sleep 600
  measure truesame tsame /bin/true
  measure truenew new /bin/true
done
c0=$(pid1); lat=(); for i in $(seq $N); do t0=$(date +%s%N); systemd-run --quiet --scope --slice=diag.slice /bin/true; t1=$(date +%s%N); lat+=($(( (t1-t0)/1000000 ))); sleep 0.3; done
echo "systemd-run: PID1 $(( ($(pid1)-c0)*10/N )) ms per task; median $(printf '%s\n' "${lat[@]}" | sort -n | sed -n "$((N/2))p") ms"
