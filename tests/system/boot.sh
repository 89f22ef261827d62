#!/bin/bash
# boot.sh GUEST SRC_DIR BUILD_DIR [CMAKE_COMMAND]
# Boots GUEST once (deb13-v2, deb12-v2, deb12-v1 or deb13-v1: a Debian suite and a cgroup
# variant), installs that suite's .deb there (BUILD_DIR/packages when the suite
# is this machine's, from system.package.build; else BUILD_DIR/suite-<suite>/packages,
# from suite.<suite>.build) and runs the guest's tests (or only those named in
# TASKSCOPE_SYSTEM_ONLY, e.g. "test_cpuset test_testbed"). TASKSCOPE_ALL_VARIANTS=1
# also runs the tests whose "# variants:" line puts this guest in parentheses.
# TASKSCOPE_SYSTEM_INSTALL=stage installs the build's stage tree instead of the .deb.
set -euo pipefail
# No way out of this script without a reason on stderr.
trap 'echo "boot: line $LINENO: \"$BASH_COMMAND\" failed (exit $?)" >&2' ERR
[ $# -ge 3 ] || { echo "usage: $0 GUEST SRC_DIR BUILD_DIR [CMAKE_COMMAND]" >&2; exit 2; }
guest=$1 src=$(realpath -e "$2") build=$(realpath -e "$3") cmake=${4:-cmake}
results=$build/system-results/$guest
legacy=()
case "$guest" in
deb13-v2) suite=trixie variant=v2 ;;
deb12-v2) suite=bookworm variant=v2 ;;
deb12-v1) suite=bookworm variant=v1 ;;
# Debian 13 forced onto v1: where taskscope must refuse to run.
deb13-v1) suite=trixie variant=v1 legacy=(--force-legacy) ;;
*) echo "boot: unknown guest '$guest' (deb13-v2, deb12-v2, deb12-v1 or deb13-v1)" >&2; exit 2 ;;
esac
. "$src/scripts/suites.sh"
# The guest runs binaries built for its suite: this build's, or the one
# compiled in the suite's build root.
guest_build=$build
[ "$suite" = "$(suite_of_host)" ] || guest_build=$build/suite-$suite

install=${TASKSCOPE_SYSTEM_INSTALL:-deb}
rm -rf "$results" "$build/stage"
mkdir -p "$results"

# A guest that no test of this run is for is not booted (deb12-v2 and
# deb13-v1 outside the all-variants mode): its tests are reported skipped,
# with the reason the guest would have given (which guest-suite.sh writes
# again, the same, for a guest that boots).
# shellcheck source=tests/system/variants.sh
. "$src/tests/system/variants.sh"
runs=0
for t in "$src"/tests/system/test_*.sh; do
	why=$(variant_skip "$t" "$guest" "${TASKSCOPE_SYSTEM_ONLY:-}")
	if [ -z "$why" ]; then
		runs=$((runs + 1))
		continue
	fi
	name=$(basename "$t" .sh)
	echo "SKIP: $why" >"$results/$name.out"
	echo skip >"$results/$name.rc"
done
if [ "$runs" -eq 0 ]; then
	echo "boot: no test of this run is for $guest: not booted"
	exit 0
fi
case "$install" in
deb)
	ls "$guest_build"/packages/taskscope_*.deb >/dev/null 2>&1 || {
		echo "boot: no $guest_build/packages/taskscope_*.deb (system.package.build or suite.$suite.build makes it)" >&2
		exit 1
	}
	;;
stage)
	[ "$guest_build" = "$build" ] || { echo "boot: the stage tree is this suite's only ($guest needs its .deb)" >&2; exit 2; }
	DESTDIR=$build/stage "$cmake" --install "$build" >/dev/null || { echo "boot: cmake --install into $build/stage failed" >&2; exit 1; } ;;
*) echo "boot: TASKSCOPE_SYSTEM_INSTALL must be deb or stage, not '$install'" >&2; exit 2 ;;
esac

shares=(--share "$src")
case "$build/" in "$src"/*) ;; *) shares+=(--share "$build") ;; esac

cd "$src"
# The guest's whole suite within TASKSCOPE_TESTBED_TIMEOUT (run.sh's own
# default, 1800 s, is for one command): the v2 suite took 1,308 s on one
# CI machine and passed 1,800 s on a slower one (stop 46), where the
# guest was cut off with six tests to go. ctest's TIMEOUT for the boot is
# above it (tests/system/CMakeLists.txt).
exec "$src/testbed/run.sh" --suite "$suite" --variant "$variant" "${legacy[@]}" --smp "${TASKSCOPE_TESTBED_SMP:-4}" \
	--timeout "${TASKSCOPE_TESTBED_TIMEOUT:-3300}" "${shares[@]}" -- \
	env TASKSCOPE_ALL_VARIANTS="${TASKSCOPE_ALL_VARIANTS:-0}" \
	bash "$src/tests/system/guest-suite.sh" "$guest" "$results" "$guest_build" "$install" "${TASKSCOPE_SYSTEM_ONLY:-}"
