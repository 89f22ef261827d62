#!/usr/bin/env bash
# Where a start spends the manager's loop, in the guest (issue 12): runs the
# manager with debug logging, drives starts with taskscope-bench-start and
# taskscope-bench-concurrency, and sums each step of the starts' profiles
# ("Start of ... took loop X ms (step a, ...); waited ...", task_manager.cpp).
#   bash bench/profile-start.sh [N_SINGLE] [N_CONC] [LEVELS]
# Run inside the guest as root against the installed manager.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD_DIR:-$here/../build}
n1=${1:-30} nc=${2:-300} levels=${3:-8,32,128}
exe=$(systemctl show -P ExecStart taskscope-manager | sed -n 's/.*path=\([^ ;]*\).*/\1/p')
mkdir -p /run/systemd/system/taskscope-manager.service.d
printf '[Service]\nExecStart=\nExecStart=%s --verbose\n' "$exe" >/run/systemd/system/taskscope-manager.service.d/verbose.conf
systemctl daemon-reload
systemctl reset-failed taskscope-manager 2>/dev/null || true
systemctl restart taskscope-manager

# Sums of each named step over the starts logged since $1 (a journal cursor time).
summarize() {
	journalctl -u taskscope-manager --since "$1" -o cat | grep '^Start of .* took ' |
		awk '
		{
			n++
			line = $0
			sub(/.* took /, "", line)
			# loop X ms (a 1.0, b 2.0); waited Y ms (c 3.0); total Z ms
			split(line, parts, /\); /)
			for (p = 1; p <= 2; p++) {
				kind = (p == 1) ? "loop" : "wait"
				s = parts[p]
				match(s, /[0-9.]+ ms/); tot = substr(s, RSTART, RLENGTH - 3) + 0
				total[kind] += tot
				if (tot > max[kind]) max[kind] = tot
				sub(/^[^(]*\(/, "", s)
				m = split(s, items, /, /)
				for (i = 1; i <= m; i++) {
					k = split(items[i], f, / /)
					name = f[1]; for (j = 2; j < k; j++) name = name " " f[j]
					step[kind ":" name] += f[k]
					if (f[k] > smax[kind ":" name]) smax[kind ":" name] = f[k]
				}
			}
		}
		END {
			if (n == 0) { print "  (no start profiles logged)"; exit }
			printf "  %d starts; on the loop per start: mean %.2f ms (max %.2f); waiting: mean %.2f ms\n", n, total["loop"] / n, max["loop"], total["wait"] / n
			for (k in step) printf "    %-5s %-16s mean %8.2f ms  max %8.2f ms\n", substr(k, 1, 4), substr(k, 6), step[k] / n, smax[k]
		}' | sort -k1,1 -s
}

since=$(date '+%Y-%m-%d %H:%M:%S'); sleep 1
"$build/bench/taskscope-bench-start" "$n1"
echo "profile of the single starts (logs off):"
summarize "$since"

since=$(date '+%Y-%m-%d %H:%M:%S'); sleep 1
"$build/bench/taskscope-bench-concurrency" "$nc" "$levels"
echo "profile of the concurrent starts (logs on):"
summarize "$since"

rm -f /run/systemd/system/taskscope-manager.service.d/verbose.conf
systemctl daemon-reload
