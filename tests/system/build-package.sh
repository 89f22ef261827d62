#!/bin/bash
# build-package.sh SRC_DIR [BUILD_DIR]: the system tier's first step. Makes the
# .deb the guests install from BUILD_DIR, the tree the unit and bus tiers
# test (packaging/build-deb.sh --prebuilt: Debian's tools package the one
# compile, lintian checks it), unless TASKSCOPE_SYSTEM_INSTALL=stage asks
# for the build's stage tree instead.
set -euo pipefail
[ $# -eq 1 ] || [ $# -eq 2 ] || { echo "usage: $0 SRC_DIR [BUILD_DIR]" >&2; exit 2; }
if [ "${TASKSCOPE_SYSTEM_INSTALL:-deb}" = stage ]; then
	echo "build-package: TASKSCOPE_SYSTEM_INSTALL=stage: the guests install the stage tree, no .deb built"
	exit 0
fi
exec bash "$1/packaging/build-deb.sh" --prebuilt "${2:-${BUILD_DIR:-$1/build}}"
