#!/bin/bash
# boot.sh VARIANT SRC_DIR BUILD_DIR [CMAKE_COMMAND]
# Boots the guest once for VARIANT, installs the project's .deb there (build/packages,
# from system.package.build) and runs the whole suite (or only the tests named in
# TASKSCOPE_SYSTEM_ONLY, e.g. "test_cpuset test_testbed"). TASKSCOPE_ALL_VARIANTS=1
# also runs the tests whose "# variants:" line puts this variant in parentheses.
# TASKSCOPE_SYSTEM_INSTALL=stage installs the build's stage tree instead of the .deb.
set -euo pipefail
# No way out of this script without a reason on stderr.
trap 'echo "boot: line $LINENO: \"$BASH_COMMAND\" failed (exit $?)" >&2' ERR
[ $# -ge 3 ] || { echo "usage: $0 VARIANT SRC_DIR BUILD_DIR [CMAKE_COMMAND]" >&2; exit 2; }
variant=$1 src=$(realpath -e "$2") build=$(realpath -e "$3") cmake=${4:-cmake}
results=$build/system-results/$variant

install=${TASKSCOPE_SYSTEM_INSTALL:-deb}
rm -rf "$results" "$build/stage"
mkdir -p "$results"
case "$install" in
deb)
	ls "$build"/packages/taskscope_*.deb >/dev/null 2>&1 || {
		echo "boot: no $build/packages/taskscope_*.deb (system.package.build makes it)" >&2
		exit 1
	}
	;;
stage) DESTDIR=$build/stage "$cmake" --install "$build" >/dev/null || { echo "boot: cmake --install into $build/stage failed" >&2; exit 1; } ;;
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
exec "$src/testbed/run.sh" --variant "$variant" --smp "${TASKSCOPE_TESTBED_SMP:-4}" \
	--timeout "${TASKSCOPE_TESTBED_TIMEOUT:-3300}" "${shares[@]}" -- \
	env TASKSCOPE_ALL_VARIANTS="${TASKSCOPE_ALL_VARIANTS:-0}" \
	bash "$src/tests/system/guest-suite.sh" "$variant" "$results" "$build" "$install" "${TASKSCOPE_SYSTEM_ONLY:-}"
