#!/usr/bin/env bash
# bench/fork_bomb.sh (issue 48) in one boot of the test bed (v2): both
# phases, protected and unprotected, against the same guest.
#   bench/bomb-in-guest.sh [STARTS] [PHASES]
# Env: BOMB_SMP (guest vCPUs, default 2), BOMB_MEM (MB, default 4096),
# BENCH_SUITE (bookworm or trixie; default this machine's): which suite's
# taskscope and kernel (bench/in-guest.sh says how each is installed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/suites.sh"
exec bash "$root/bench/in-guest.sh" --suite "${BENCH_SUITE:-$(suite_of_host)}" --smp "${BOMB_SMP:-2}" \
	--mem "${BOMB_MEM:-4096}" -- \
	bash -c 'uname -r; systemctl --version | head -n1; bash bench/fork_bomb.sh "$1" "$BENCH_BIN/taskscope-bench-reads" "$2"' \
	bomb "${1:-50}" "${2:-protected unprotected}"
