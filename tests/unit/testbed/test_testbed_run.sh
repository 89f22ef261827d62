#!/bin/bash
# The test bed's own decisions, without booting anything: testbed/run.sh with a
# stand-in qemu first on PATH that hangs, fails, aborts, exits 0 without
# booting, or boots under KVM. Whatever it does, run.sh must reach a verdict,
# say it in one line, go on to boot, and never die silently.
#   test_testbed_run.sh SRC_DIR
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 SRC_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH="$here/stand-in:$PATH" TMPDIR=$work TASKSCOPE_TESTBED_NO_LOCK=1
export TASKSCOPE_TESTBED_PROBE_TIMEOUT=2 FAKE_QEMU_LOG=$work/qemu.calls
unset TASKSCOPE_TESTBED_ACCEL
# A writable file stands in for /dev/kvm: the probe only asks whether it may open it.
: >"$work/kvm"
export TASKSCOPE_TESTBED_KVM_DEV=$work/kvm

passed=0 failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
ok() { echo "ok: $*"; passed=$((passed + 1)); }

new_image() {
	local img=$work/image.$1
	mkdir -p "$img"
	: >"$img/vmlinuz"; : >"$img/initrd.img"; : >"$img/rootfs.img"
	date >"$img/complete"
	echo "$img"
}

# run_case NAME PROBE BOOT WANT_RC WANT_ACCEL WANT_STDERR_REGEX
run_case() {
	local name=$1 probe=$2 boot=$3 want_rc=$4 want_accel=$5 want_err=$6 img rc=0 started took
	img=$(new_image "$name")
	: >"$FAKE_QEMU_LOG"
	started=$(date +%s)
	FAKE_QEMU_PROBE=$probe FAKE_QEMU_BOOT=$boot TASKSCOPE_TESTBED_IMAGE=$img \
		bash "$src/testbed/run.sh" --variant v2 --timeout 30 -- true \
		>"$work/$name.out" 2>"$work/$name.err" || rc=$?
	took=$(($(date +%s) - started))
	echo "-- $name: probe=$probe boot=$boot -> rc $rc in ${took} s, verdict $(cat "$img/accel" 2>/dev/null || echo none)"
	sed 's/^/   stderr: /' "$work/$name.err" | tail -n 5
	[ "$rc" = "$want_rc" ] && ok "$name: run.sh exits $want_rc" || fail "$name: run.sh exited $rc, wanted $want_rc"
	if [ -n "$want_accel" ]; then
		[ "$(cat "$img/accel" 2>/dev/null)" = "$want_accel" ] && ok "$name: verdict $want_accel" ||
			fail "$name: verdict '$(cat "$img/accel" 2>/dev/null)', wanted $want_accel"
		grep -q "fake guest ran with $want_accel" "$work/$name.out" && ok "$name: went on to boot under $want_accel" ||
			fail "$name: no boot under $want_accel (stdout: $(cat "$work/$name.out"))"
	fi
	grep -Eq "$want_err" "$work/$name.err" && ok "$name: says '$want_err'" ||
		fail "$name: stderr does not match '$want_err'"
	[ "$took" -lt 20 ] && ok "$name: done in ${took} s" || fail "$name: took ${took} s"
}

run_case hang hang ok 0 tcg 'accelerator: tcg \(qemu under KVM hung; killed after 2 s\)'
run_case fail fail ok 0 tcg 'accelerator: tcg \(qemu under KVM failed \(exit 1\)'
run_case abort abort ok 0 tcg 'accelerator: tcg \(qemu under KVM failed \(exit 134\)'
run_case silent silent ok 0 tcg 'accelerator: tcg \(qemu under KVM exited 0 without booting'
run_case marker marker ok 0 kvm 'accelerator: kvm \(a KVM guest booted'
# A boot that never comes up: a named reason, never a silent exit.
run_case bootfail fail fail 125 "" 'testbed: guest did not finish: boot failed \(qemu rc 1\)'

# The verdict is kept with the image: a second run does not probe again.
img=$work/image.hang
: >"$FAKE_QEMU_LOG"
FAKE_QEMU_PROBE=marker TASKSCOPE_TESTBED_IMAGE=$img bash "$src/testbed/run.sh" -- true >/dev/null 2>&1 &&
	! grep -q testbed.probe "$FAKE_QEMU_LOG" && grep -q -- '-accel tcg' "$FAKE_QEMU_LOG" &&
	ok "cached verdict reused, no second probe" || fail "cached verdict not reused: $(cat "$FAKE_QEMU_LOG")"

# No KVM device at all: TCG without calling qemu for a probe.
img=$(new_image nokvm)
: >"$FAKE_QEMU_LOG"
TASKSCOPE_TESTBED_KVM_DEV=$work/no-such-kvm TASKSCOPE_TESTBED_IMAGE=$img \
	bash "$src/testbed/run.sh" -- true >/dev/null 2>"$work/nokvm.err" &&
	[ "$(cat "$img/accel")" = tcg ] && ! grep -q testbed.probe "$FAKE_QEMU_LOG" &&
	grep -q "accelerator: tcg (no $work/no-such-kvm)" "$work/nokvm.err" &&
	ok "no KVM device: tcg, no probe" || fail "no KVM device: $(cat "$work/nokvm.err")"

# No image: a reason, exit 125.
rc=0
TASKSCOPE_TESTBED_IMAGE=$work/missing bash "$src/testbed/run.sh" -- true >/dev/null 2>"$work/noimg.err" || rc=$?
[ "$rc" = 125 ] && grep -q "no complete guest image" "$work/noimg.err" &&
	ok "missing image: exit 125 with a reason" || fail "missing image: rc $rc: $(cat "$work/noimg.err")"

# Debian 13 on v1: refused with a reason unless forced, and forced it asks
# systemd 257 for the legacy hierarchy on the kernel's command line.
img=$(new_image trixie-v1)
rc=0
TASKSCOPE_TESTBED_IMAGE=$img bash "$src/testbed/run.sh" --suite trixie --variant v1 -- true >/dev/null 2>"$work/t1.err" || rc=$?
[ "$rc" = 125 ] && grep -q "Debian 13 (systemd 257) boots on cgroup v2 only" "$work/t1.err" &&
	ok "Debian 13 on v1 unforced: exit 125 with a reason" || fail "Debian 13 on v1 unforced: rc $rc: $(cat "$work/t1.err")"
: >"$FAKE_QEMU_LOG"
FAKE_QEMU_PROBE=hang TASKSCOPE_TESTBED_IMAGE=$img \
	bash "$src/testbed/run.sh" --suite trixie --variant v1 --force-legacy -- true >/dev/null 2>"$work/t1f.err" &&
	grep -v testbed.probe "$FAKE_QEMU_LOG" | grep -q 'systemd.unified_cgroup_hierarchy=0 SYSTEMD_CGROUP_ENABLE_LEGACY_FORCE=1' &&
	ok "Debian 13 on v1 forced: booted with the legacy hierarchy forced" ||
	fail "Debian 13 on v1 forced: $(cat "$work/t1f.err") / $(cat "$FAKE_QEMU_LOG")"

# The probe script alone, under the strictest caller: it always prints a verdict and exits 0.
for mode in hang fail abort silent marker; do
	v=$( (set -euo pipefail; FAKE_QEMU_PROBE=$mode bash "$src/testbed/probe-accel.sh" "$work/k" "$work/i" 2>/dev/null | tr -d '\n'); echo " rc=$?")
	case "$mode:$v" in
	marker:"kvm rc=0" | hang:"tcg rc=0" | fail:"tcg rc=0" | abort:"tcg rc=0" | silent:"tcg rc=0") ok "probe-accel.sh $mode -> $v" ;;
	*) fail "probe-accel.sh $mode -> '$v'" ;;
	esac
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
