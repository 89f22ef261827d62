#!/usr/bin/env bash
# Prints, one per line, the CMake options with which Debian's debhelper
# (13.11, Debian 12; 13.24, Debian 13: Debian/Debhelper/Buildsystem/cmake.pm, compat 13) and
# packaging/debian/rules configure the package build: dpkg-buildflags'
# compiler and linker flags with hardening=+all, CPPFLAGS folded into
# C(XX)FLAGS as debhelper does (CMake ignores CPPFLAGS), the install
# layout, and the rules file's own options. scripts/build.sh configures
# build/ with them, so that packaging/build-deb.sh --prebuilt packages the
# very compile the tests ran (CI compiles once). Run it from the source
# root: dpkg-buildflags maps the current directory to "." in debug info.
set -euo pipefail
. "$(dirname "$0")/suites.sh"
suite=$(suite_of_host)
suite_require "$suite" debian-flags
eval "$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh)"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
printf '%s\n' \
	"-DCMAKE_C_FLAGS=$CFLAGS $CPPFLAGS" \
	"-DCMAKE_CXX_FLAGS=$CXXFLAGS $CPPFLAGS" \
	"-DCMAKE_EXE_LINKER_FLAGS=$LDFLAGS" \
	"-DCMAKE_SHARED_LINKER_FLAGS=$LDFLAGS" \
	"-DCMAKE_MODULE_LINKER_FLAGS=$LDFLAGS" \
	-DCMAKE_INSTALL_PREFIX=/usr \
	-DCMAKE_INSTALL_SYSCONFDIR=/etc \
	-DCMAKE_INSTALL_LOCALSTATEDIR=/var \
	-DCMAKE_INSTALL_RUNSTATEDIR=/run \
	"-DCMAKE_INSTALL_LIBDIR=lib/$multiarch" \
	-DCMAKE_EXPORT_NO_PACKAGE_REGISTRY=ON \
	-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
	-DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON \
	-DFETCHCONTENT_FULLY_DISCONNECTED=ON \
	-DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON \
	-DCMAKE_BUILD_RPATH_USE_ORIGIN=ON \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo \
	"-DTASKSCOPE_UNITDIR=$(suite_unitdir "$suite")"
