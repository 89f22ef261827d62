#!/usr/bin/env bash
# suite-run.sh SUITE COMMAND [ARGS...]: runs COMMAND as root inside SUITE's
# build root (scripts/suite-root.sh makes it), with this source tree at the
# same path, /proc, /sys, /dev and /tmp as in a chroot build (sbuild's shape). The
# mounts live in a private mount namespace and go with the command.
# TASKSCOPE_SUITE_BIND: one more host directory (a build directory outside
# the tree) mounted at its own path too.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
suite=${1:?usage: suite-run.sh SUITE COMMAND [ARGS...]}
shift
[ $# -gt 0 ] || { echo "usage: suite-run.sh SUITE COMMAND [ARGS...]" >&2; exit 2; }
root=$(bash "$here/suite-root.sh" "$suite" | tail -n1)
bind=${TASKSCOPE_SUITE_BIND:-}
[ -z "$bind" ] || bind=$(realpath -e "$bind")
# shellcheck disable=SC2016
exec unshare --mount --propagation private -- bash -c '
	set -euo pipefail
	root=$1 src=$2 bind=$3; shift 3
	# The root a mount point of its own: the network test of the bus tier
	# makes its mount namespace private (unshare); a plain directory refuses.
	mount --bind "$root" "$root"
	mount -t proc proc "$root/proc"
	mount --rbind /dev "$root/dev"
	# The streamer of the bus tier reads the cgroups of the host, as there.
	mount --rbind /sys "$root/sys"
	mount -t tmpfs tmpfs "$root/tmp"
	mkdir -p "$root$src"
	mount --bind "$src" "$root$src"
	case "$bind/" in
	/ | "$src"/*) ;;
	*) mkdir -p "$root$bind" && mount --bind "$bind" "$root$bind" ;;
	esac
	exec chroot "$root" env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 CI="${CI:-}" TASKSCOPE_SUITE_ROOT=1 "$@"
' suite-run "$root" "$src" "$bind" "$@"
