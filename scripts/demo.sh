#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs a real demo of
# an allocation's tasks under systemd. Where PID 1 is systemd with cgroup
# v2 the demo runs right here (installing taskscope into /usr); elsewhere
# it boots the project's test bed guest and runs there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
host_systemd=false
[[ "$(cat /proc/1/comm 2>/dev/null)" == systemd && "$(stat -fc %T /sys/fs/cgroup)" == cgroup2fs ]] && host_systemd=true
# "timing:" lines feed CI's table of times (scripts/ci-times.sh).
t=$SECONDS
bash "$root/scripts/install-deps.sh"
echo "timing: demo.deps $((SECONDS - t))"

# The guest's image (built from nothing on a new machine: minutes of
# downloads and unpacking) and its accelerator verdict are made beside the
# compile, which they do not need.
prepare_pid="" prepare_log=""
if ! $host_systemd; then
    prepare_log=$(mktemp)
    "$root/testbed/run.sh" --prepare >"$prepare_log" 2>&1 &
    prepare_pid=$!
fi
t=$SECONDS
bash "$root/scripts/build.sh"
echo "timing: demo.build $((SECONDS - t))"

if $host_systemd; then
    echo "demo: PID 1 is systemd; installing taskscope into / and running here"
    cmake --install "$build" >/dev/null
    systemctl daemon-reload
    systemctl reload dbus
    exec bash "$root/scripts/demo-guest.sh"
fi

echo "demo: PID 1 is not systemd here; booting the test bed guest (cgroup v2)"
t=$SECONDS
prc=0
wait "$prepare_pid" || prc=$?
cat "$prepare_log"
rm -f "$prepare_log"
[ $prc -eq 0 ] || { echo "demo: the test bed's image could not be made (above)" >&2; exit 1; }
echo "timing: demo.image-wait $((SECONDS - t))"
rm -rf "$build/stage"
DESTDIR="$build/stage" cmake --install "$build" >/dev/null
shares=(--share "$root")
[[ "$build" == "$root"/* ]] || shares+=(--share "$build")
exec "$root/testbed/run.sh" --variant v2 --smp 4 "${shares[@]}" -- \
    bash -c "tar -C '$build/stage' -cf - . | tar -C / -xf - --keep-directory-symlink && systemctl daemon-reload && systemctl reload dbus && bash '$root/scripts/demo-guest.sh'"
