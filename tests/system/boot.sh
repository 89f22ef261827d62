#!/bin/bash
# boot.sh VARIANT SRC_DIR BUILD_DIR [CMAKE_COMMAND]
# Stages the project's install tree, boots the guest once for VARIANT, runs the whole suite
# (or only the tests named in TASKSCOPE_SYSTEM_ONLY, e.g. "test_cpuset test_testbed").
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 VARIANT SRC_DIR BUILD_DIR [CMAKE_COMMAND]" >&2; exit 2; }
variant=$1 src=$(realpath -e "$2") build=$(realpath -e "$3") cmake=${4:-cmake}
results=$build/system-results/$variant

rm -rf "$results" "$build/stage"
mkdir -p "$results"
DESTDIR=$build/stage "$cmake" --install "$build"

shares=(--share "$src")
case "$build/" in "$src"/*) ;; *) shares+=(--share "$build") ;; esac

cd "$src"
exec "$src/testbed/run.sh" --variant "$variant" --smp "${TASKSCOPE_TESTBED_SMP:-4}" "${shares[@]}" -- \
	bash "$src/tests/system/guest-suite.sh" "$variant" "$results" "$build" "${TASKSCOPE_SYSTEM_ONLY:-}"
