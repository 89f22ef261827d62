#!/usr/bin/env bash
# bench/fork_bomb.sh (issue 48) in one boot of the test bed (v2): both
# phases, protected and unprotected, against the same guest.
#   bench/bomb-in-guest.sh [STARTS] [PHASES]
# Env: BOMB_SMP (guest vCPUs, default 2), BOMB_MEM (MB, default 4096),
# BENCH_SUITE (bookworm or trixie; default this machine's): this machine's
# suite runs this build's stage install; the other suite installs the .debs
# of its build root (scripts/suite-build.sh SUITE build/suite-SUITE package)
# and runs that build's bench programs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
. "$root/scripts/suites.sh"
suite=${BENCH_SUITE:-$(suite_of_host)}
if [ "$suite" = "$(suite_of_host)" ]; then
	[[ -x $build/bench/taskscope-bench-reads ]] || { echo "no $build/bench/taskscope-bench-reads: build first" >&2; exit 2; }
	rm -rf "$build/stage"
	DESTDIR="$build/stage" cmake --install "$build" >/dev/null
	install="tar -C '$build/stage' -cf - . | tar -C / -xf - --keep-directory-symlink && systemctl daemon-reload && systemctl reload dbus"
	bench=$build
else
	bench=$build/suite-$suite
	ls "$bench"/packages/taskscope_*.deb >/dev/null 2>&1 || { echo "no $bench/packages: scripts/suite-build.sh $suite $bench package" >&2; exit 2; }
	install="apt-get install -y -qq $bench/packages/taskscope_*.deb >/dev/null"
fi
exec "$root/testbed/run.sh" --suite "$suite" --variant v2 --smp "${BOMB_SMP:-2}" --mem "${BOMB_MEM:-4096}" --timeout 3000 --share "$root" -- bash -c "
  set -e
  $install
  uname -r; systemctl --version | head -n1
  systemctl start taskscope-manager
  bash '$root/bench/fork_bomb.sh' ${1:-50} '$bench/bench/taskscope-bench-reads' '${2:-protected unprotected}'"
