# shellcheck shell=bash
# Sourced by the native_issue*.sh scripts: phases cut to end by $end (epoch
# seconds, set before sourcing).
left() { echo $((end - $(date +%s))); }
sec() { echo; echo "=== $* ($(left) s left)"; }
# limited CAP CMD...: CMD limited to CAP seconds, or to what is left
limited() {
	local cap=$1 t
	shift
	t=$(left)
	((t > cap)) && t=$cap
	((t < 5)) && { echo "[skipped: no time left]"; return 0; }
	timeout -k 5 "$t" stdbuf -oL -eL "$@"
	echo "[rc=$? (limit $t s)]"
}
