#!/usr/bin/env bash
# Memory cost of taskscope-shim per task: start N shims (default 200), each
# parenting a `sleep 1000`, sum Pss of the shims from smaps_rollup, divide.
# No cgroups involved (a dummy --cgroup-root disables the OOM watch, which
# costs one fd, not memory).
#
# usage: bench/shim_pss.sh /path/to/taskscope-shim [N]
set -euo pipefail

SHIM=$(readlink -f "${1:?usage: shim_pss.sh /path/to/taskscope-shim [N]}")
N=${2:-200}
W=$(mktemp -d "${TMPDIR:-/tmp}/shimpss.XXXXXX")
SHIMS=()
TASKS=()
cleanup() {
  local p
  for p in "${TASKS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  for p in "${SHIMS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$W"
}
trap cleanup EXIT

# Every shim reads its 'g' from a regular file and reports into one shared
# fifo (each report line is a single write < PIPE_BUF, so lines never mix).
printf g >"$W/go"
mkfifo "$W/report"
exec {R}<>"$W/report"

for ((i = 0; i < N; i++)); do
  "$SHIM" --exit-file "$W/exit.$i" --uid "$(id -u)" --gid "$(id -g)" --cwd / \
    --cgroup-root "$W/no-cgroups" -- /bin/sleep sleep 1000 \
    3>"$W/report" 4<"$W/go" </dev/null >/dev/null 2>&1 &
  SHIMS+=($!)
done

started=0
while ((started < N)); do
  read -r -t 30 -u "$R" line || { echo "timed out waiting for shims" >&2; exit 1; }
  case $line in
    pid\ *) TASKS+=("${line#pid }") ;;
    started) started=$((started + 1)) ;;
    *) echo "unexpected report: $line" >&2; exit 1 ;;
  esac
done

pss=0 rss=0
for p in "${SHIMS[@]}"; do
  read -r a b < <(awk '/^Pss:/{p=$2} /^Rss:/{r=$2} END{print p, r}' "/proc/$p/smaps_rollup")
  pss=$((pss + a)); rss=$((rss + b))
done
echo "shims: $N, total Pss: $pss KiB, mean Rss: $((rss / N)) KiB" >&2
echo "shim PSS per task: $((pss / N)) KiB"

# Kill the tasks; the shims then write their exit records and leave.
for p in "${TASKS[@]}"; do kill -9 "$p"; done
TASKS=()
for p in "${SHIMS[@]}"; do wait "$p"; done
SHIMS=()
bad=$(grep -L '^exit_code=137$' "$W"/exit.* | wc -l)
[[ $bad == 0 ]] || { echo "$bad shims wrote an unexpected exit record" >&2; exit 1; }
