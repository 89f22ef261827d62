#!/usr/bin/env bash
# The include map of src/ by room (directory under src/): for each room, the
# rooms its files include (quoted project includes only, generated headers
# under dbus/ and the generated protobuf headers left out), with the number of
# #include lines behind each arrow; then the lines per room; then any file over
# the size bar. The rooms of src/manager and src/stream are counted each on
# its own (manager/tasks, stream/logs, ...).
#   scripts/include-map.sh [--check] [SRC_DIR]
# --check: fails when rooms include one another in a circle (the manager's
# rooms run one way: daemon -> tasks -> launch, node, records) or a file is over
# the size bar; ctest runs it in the unit tier.
set -euo pipefail
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
src=${1:-$(cd "$(dirname "$0")/.." && pwd)/src}
cd "$src"
edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
room_of() {
	local p=$1
	case "$p" in
	manager/*/* | stream/*/*) echo "$p" | cut -d/ -f1-2 ;;
	*/*) echo "${p%%/*}" ;;
	*) echo "." ;;
	esac
}
echo "== include arrows (from -> to: #include lines)"
grep -rHoE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"]+"' --include='*.c' --include='*.h' --include='*.cpp' --include='*.hpp' . |
	sed -E 's#^\./##; s#:[[:space:]]*\#[[:space:]]*include[[:space:]]+"# #; s#"$##' |
	while read -r file inc; do
		from=$(room_of "$file")
		# A bare include is of the file's own directory.
		case "$inc" in
		*/*) to=$(room_of "$inc") ;;
		*) to=$from ;;
		esac
		[ "$to" = dbus ] && continue
		[ -e "$inc" ] || [ -e "$(dirname "$file")/$inc" ] || continue
		[ "$from" = "$to" ] && continue
		echo "$from -> $to"
	done | sort | uniq -c >"$edges"
awk '{printf "  %-10s -> %-10s %3d\n", $2, $4, $1}' "$edges"
echo "== circles between rooms (tsort)"
failed=0
if loops=$(awk '{print $2, $4}' "$edges" | tsort 2>&1 >/dev/null) && [ -z "$loops" ]; then
	echo "  none; rooms from the bottom up:"
	awk '{print $2, $4}' "$edges" | tsort | tac | tr '\n' ' ' | sed 's/^/  /; s/ $/\n/'
else
	echo "$loops" | sed 's/^/  /'
	failed=1
fi
echo "== lines per room (.c .h .cpp .hpp)"
for d in */ manager/*/ stream/*/; do
	d=${d%/}
	n=$(find "$d" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' \) -print0 | xargs -0 cat 2>/dev/null | wc -l)
	f=$(find "$d" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' \) | wc -l)
	printf "  %-12s %6d lines %3d files\n" "$d" "$n" "$f"
done
echo "== files over 600 lines"
find . -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' \) -print0 | xargs -0 wc -l |
	awk '$2 != "total" && $1 > 600 {printf "  %5d %s\n", $1, substr($2, 3)}' | sort -rn
if ((check)); then
	over=$(find . -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' \) -print0 | xargs -0 wc -l |
		awk '$2 != "total" && $1 > 600' | wc -l)
	((over == 0)) || failed=1
	((failed == 0)) || { echo "include-map: rooms in a circle, or files over 600 lines (above)" >&2; exit 1; }
fi
