#!/usr/bin/env bash
# Runs one bench script in one boot of the test bed (cgroup v2), on the
# installed taskscope of a suite, with the manager started:
#   bench/in-guest.sh [--suite bookworm|trixie] [--smp N] [--mem MB] -- COMMAND [ARGS...]
# This machine's suite installs this build's stage tree; the other suite
# installs the .debs of its build root (scripts/suite-build.sh SUITE
# build/suite-SUITE package). COMMAND runs from the source tree with
# BENCH_BIN naming that suite's bench programs (BUILD/bench), e.g.
#   bench/in-guest.sh --suite trixie -- bash bench/cpu_max_writes.sh 20 300 2
# Kernel against kernel: the same COMMAND with --suite bookworm (6.1) and
# --suite trixie (6.12), one after the other on an otherwise idle host.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
. "$root/scripts/suites.sh"
suite=$(suite_of_host) smp=2 mem=4096
while [ $# -gt 0 ]; do
	case "$1" in
	--suite) suite=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--) shift; break ;;
	*) sed -n '2,5p' "$0" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { sed -n '2,5p' "$0" >&2; exit 2; }
suite_require "$suite" in-guest
if [ "$suite" = "$(suite_of_host)" ]; then
	[[ -d $build/bench ]] || { echo "no $build/bench: build first" >&2; exit 2; }
	rm -rf "$build/stage"
	DESTDIR="$build/stage" cmake --install "$build" >/dev/null
	install="tar -C '$build/stage' -cf - . | tar -C / -xf - --keep-directory-symlink && systemctl daemon-reload && systemctl reload dbus"
	bench=$build
else
	bench=$build/suite-$suite
	ls "$bench"/packages/taskscope_*.deb >/dev/null 2>&1 || { echo "no $bench/packages: scripts/suite-build.sh $suite $bench package" >&2; exit 2; }
	install="apt-get install -y -qq $bench/packages/taskscope_*.deb >/dev/null"
fi
shares=(--share "$root")
case "$bench/" in "$root"/*) ;; *) shares+=(--share "$bench") ;; esac
exec "$root/testbed/run.sh" --suite "$suite" --variant v2 --smp "$smp" --mem "$mem" --timeout 3000 "${shares[@]}" -- bash -c "
  set -e
  DEBIAN_FRONTEND=noninteractive
  export DEBIAN_FRONTEND
  $install
  echo \"guest: \$(nproc) CPUs, kernel \$(uname -r), \$(systemctl --version | head -n1)\"
  systemctl start taskscope-manager
  cd '$root'
  BENCH_BIN='$bench/bench' \"\$@\"" in-guest "$@"
