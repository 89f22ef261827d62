# shellcheck shell=bash
# Which guests run a system test (sourced by boot.sh on the host and by
# guest-suite.sh in the guest, so both decide alike).
#
# A test's "# variants:" line names the guests it runs on (tests/README.md):
#   # variants: deb13-v2 deb12-v1 (deb12-v2)
#     deb13-v2 and deb12-v1 in every run; deb12-v2 only in the all-variants
#     mode (scripts/test.sh --all-variants), where its behaviour does not
#     differ from the guests that run it every time
#   no line   every guest, in every run

# variant_skip TEST GUEST ONLY: why TEST does not run on GUEST in this run
# (ONLY: TASKSCOPE_SYSTEM_ONLY's names, or empty); prints nothing when it runs.
variant_skip() {
	local t=$1 guest=$2 only=$3 name line
	name=$(basename "$t" .sh)
	if [ -n "$only" ] && [[ " $only " != *" $name "* ]]; then
		echo "not in TASKSCOPE_SYSTEM_ONLY ($only)"
		return 0
	fi
	line=$(grep -m1 -E '^#[[:space:]]*variants:' "$t" || true)
	[ -n "$line" ] || return 0
	line=" ${line#*variants:} "
	if [[ "$line" == *" $guest "* ]]; then
		return 0
	elif [[ "$line" == *" ($guest) "* ]]; then
		[ "${TASKSCOPE_ALL_VARIANTS:-0}" = 1 ] ||
			echo "runs on $guest only in the all-variants mode (scripts/test.sh --all-variants): its behaviour does not differ there"
	else
		echo "not for $guest"
	fi
	return 0
}
