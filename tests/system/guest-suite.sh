#!/bin/bash
# Runs INSIDE the testbed guest: guest-suite.sh GUEST RESULTS_DIR BUILD_DIR INSTALL [ONLY]
# GUEST is deb13-v2, deb12-v2, deb12-v1 or deb13-v1; BUILD_DIR the build of its suite.
# Installs taskscope (INSTALL=deb: BUILD_DIR/packages/*.deb with apt, as an
# operator does; INSTALL=stage: the build's stage tree copied over /), then runs every tests/system/test_*.sh (or only the names in ONLY, space-separated,
# e.g. "test_streamer_exec"; the others are recorded as skipped) and leaves
# NAME.out / NAME.rc in RESULTS_DIR.
# Exits non-zero only when setup fails; the results carry pass/fail.
set -euo pipefail
# No way out of the setup without a reason (run.sh shows this output on the host).
trap 'echo "guest-suite: line $LINENO: \"$BASH_COMMAND\" failed (exit $?)" >&2' ERR

[ $# -eq 4 ] || [ $# -eq 5 ] || { echo "usage: $0 GUEST RESULTS_DIR BUILD_DIR deb|stage [ONLY]" >&2; exit 2; }
guest=$1 results=$2 build=$3 install=$4 only=${5:-}
variant=${guest##*-}
suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)

# It copies the stage tree over / : never let that happen on a developer's host.
mountpoint -q /run/testbed-ctl || { echo "guest-suite: refusing to run outside the testbed guest" >&2; exit 2; }

mkdir -p "$results"
# The guest's uptime now is its boot, and the install's time follows: both
# for CI's table of times (scripts/ci-times.sh).
awk '{printf "%.1f\n", $1}' /proc/uptime >"$results/boot.time"
install_start=$(date +%s.%N)

case "$install" in
deb)
	# Every binary package of the build: taskscope and nomad-driver-taskscope.
	debs=("$build"/packages/taskscope_*.deb "$build"/packages/nomad-driver-taskscope_*.deb)
	echo "guest-suite: apt-get install ${debs[*]}"
	# Everything they depend on is in the image: apt resolves against the
	# installed packages and downloads nothing.
	apt-get install -y -o Dpkg::Use-Pty=0 "${debs[@]}" >"$results/install.log" 2>&1 || {
		cat "$results/install.log" >&2
		echo "guest-suite: the package did not install" >&2
		exit 1
	}
	# The package enabled and started both daemons; nothing else is needed.
	# But on Debian 13 forced onto v1 the manager refuses to run: what it
	# does there is test_legacy_refused's to check.
	[ "$guest" = deb13-v1 ] || systemctl is-active --quiet taskscope-manager taskscope-streamer || {
		systemctl status --no-pager taskscope-manager taskscope-streamer >&2 || true
		echo "guest-suite: the daemons are not running after install" >&2
		exit 1
	}
	;;
stage)
	echo "guest-suite: installing $build/stage into /"
	# tar keeps the guest's /lib -> usr/lib symlink (units go to /lib/systemd/system, as in the .deb).
	tar -C "$build/stage" -cf - . | tar -C / -xf - --keep-directory-symlink
	systemctl daemon-reload
	systemctl reload dbus
	;;
*) echo "guest-suite: INSTALL must be deb or stage" >&2; exit 2 ;;
esac
echo "$install" >"$results/install.txt"
awk -v a="$install_start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f\n", b - a}' >"$results/install.time"

{
	uname -a
	systemctl --version | head -1
	cat /proc/cmdline
	nproc
} >"$results/env.txt"

# shellcheck source=variants.sh
. "$here/variants.sh"

# TASKSCOPE_VARIANT is the cgroup variant (v2, v1) the tests branch on;
# TASKSCOPE_SUITE the Debian suite (bookworm, trixie); TASKSCOPE_GUEST both.
export TASKSCOPE_VARIANT=$variant TASKSCOPE_SUITE=$suite TASKSCOPE_GUEST=$guest TASKSCOPE_BUILD_DIR=$build TASKSCOPE_SRC_DIR=$src

shopt -s nullglob
tests=("$here"/test_*.sh)
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	why=$(variant_skip "$t" "$guest" "$only")
	if [ -n "$why" ]; then
		echo "SKIP: $why" >"$results/$name.out"
		echo skip >"$results/$name.rc"
		echo "guest-suite: $name: skip ($why)"
		continue
	fi
	start=$(date +%s.%N)
	rc=0
	(cd "$src" && timeout -k 10 600 bash "$t") </dev/null >"$results/$name.out" 2>&1 || rc=$?
	[ $rc -ne 124 ] || echo "guest-suite: $name timed out after 600 s" >>"$results/$name.out"
	echo "$rc" >"$results/$name.rc"
	# The test's own time inside the guest, for CI's table of times (scripts/ci-times.sh).
	secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')
	echo "$secs" >"$results/$name.time"
	echo "guest-suite: $name: rc=$rc ($secs s)"
done
sync
