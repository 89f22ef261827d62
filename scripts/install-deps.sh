#!/usr/bin/env bash
# Installs every build, test and test-bed dependency from Debian's packages
# of the suite this machine runs (Debian 12 bookworm or Debian 13 trixie,
# scripts/suites.sh), plus any package names given as arguments
# (packaging/build-deb.sh passes its tools). Idempotent: a second run only
# checks. Needs root. On any other system it stops before installing
# anything, naming the suites it supports.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/suites.sh"
suite=$(suite_of_host)
suite_require "$suite" install-deps

# The system tier boots Debian guests under qemu (testbed/), made with
# mmdebstrap, and builds the other suite's .deb in a build root of its own
# (scripts/suite-root.sh).
testbed_deps=(qemu-system-x86 qemu-utils mmdebstrap e2fsprogs busybox-static cpio zstd xz-utils
	debian-archive-keyring)

all=("${suite_build_deps[@]}" "${suite_goplugin_deps[@]}" "${suite_bus_deps[@]}" "${testbed_deps[@]}"
	"${suite_package_deps[@]}" "$@")
missing=()
for p in "${all[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "install-deps: Debian $(suite_number "$suite") ($suite): installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# One transaction: apt installs all of them or none.
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "install-deps: Debian $(suite_number "$suite") ($suite): all ${#all[@]} packages present"
