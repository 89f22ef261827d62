#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs a real demo of
# an allocation's tasks under systemd. Where PID 1 is systemd with cgroup
# v2 the demo runs right here (installing taskscope into /usr); elsewhere
# it boots the project's test bed guest and runs there.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
# "timing:" lines feed CI's table of times (scripts/ci-times.sh).
t=$SECONDS
bash "$root/scripts/install-deps.sh"
echo "timing: demo.deps $((SECONDS - t))"
t=$SECONDS
bash "$root/scripts/build.sh"
echo "timing: demo.build $((SECONDS - t))"

if [[ "$(cat /proc/1/comm 2>/dev/null)" == systemd && "$(stat -fc %T /sys/fs/cgroup)" == cgroup2fs ]]; then
    echo "demo: PID 1 is systemd; installing taskscope into / and running here"
    cmake --install "$build" >/dev/null
    systemctl daemon-reload
    systemctl reload dbus
    exec bash "$root/scripts/demo-guest.sh"
fi

echo "demo: PID 1 is not systemd here; booting the test bed guest (cgroup v2)"
rm -rf "$build/stage"
DESTDIR="$build/stage" cmake --install "$build" >/dev/null
shares=(--share "$root")
[[ "$build" == "$root"/* ]] || shares+=(--share "$build")
exec "$root/testbed/run.sh" --variant v2 --smp 4 "${shares[@]}" -- \
    bash -c "tar -C '$build/stage' -cf - . | tar -C / -xf - --keep-directory-symlink && systemctl daemon-reload && systemctl reload dbus && bash '$root/scripts/demo-guest.sh'"
