#!/bin/bash
# build-package.sh SRC_DIR: the system tier's first step. Builds the .deb the
# guests install (packaging/build-deb.sh), unless TASKSCOPE_SYSTEM_INSTALL=stage
# asks for the build's stage tree instead.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 SRC_DIR" >&2; exit 2; }
if [ "${TASKSCOPE_SYSTEM_INSTALL:-deb}" = stage ]; then
	echo "build-package: TASKSCOPE_SYSTEM_INSTALL=stage: the guests install the stage tree, no .deb built"
	exit 0
fi
exec bash "$1/packaging/build-deb.sh"
