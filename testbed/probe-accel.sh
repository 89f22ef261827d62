#!/bin/bash
# Decides how the test guest runs: prints "kvm" or "tcg" on stdout and one line
# saying why on stderr. Always exits 0 with a verdict (2 only for bad usage).
#   testbed/probe-accel.sh KERNEL INITRD
#
# Why a probe at all: /dev/kvm exists on these machines, but it is a
# paravirtual KVM that may not run a stock kernel. Seen here: qemu aborts at
# once, or hangs until killed, or exits 0 without the guest ever running.
# Only a guest that really booted and printed the initramfs's probe marker
# earns "kvm"; every other outcome, including a probe that cannot even start,
# falls back to TCG. This script must never fail the run: no `set -e` here,
# every command's status is looked at by hand.
#
# Environment (for tests and odd machines):
#   TASKSCOPE_TESTBED_KVM_DEV        the KVM device (default /dev/kvm)
#   TASKSCOPE_TESTBED_PROBE_TIMEOUT  seconds the probe guest may take (default 20)
#   TASKSCOPE_TESTBED_ACCEL          kvm|tcg: skip the probe, take this verdict
set -u

if [ $# -ne 2 ]; then
	echo "usage: $0 KERNEL INITRD" >&2
	exit 2
fi
kernel=$1 initrd=$2
kvm_dev=${TASKSCOPE_TESTBED_KVM_DEV:-/dev/kvm}
probe_timeout=${TASKSCOPE_TESTBED_PROBE_TIMEOUT:-20}

verdict() {
	echo "$1"
	echo "testbed: accelerator: $1 ($2)" >&2
	exit 0
}

case "${TASKSCOPE_TESTBED_ACCEL:-}" in
'') ;;
kvm | tcg) verdict "$TASKSCOPE_TESTBED_ACCEL" "TASKSCOPE_TESTBED_ACCEL says so" ;;
*) verdict tcg "TASKSCOPE_TESTBED_ACCEL='$TASKSCOPE_TESTBED_ACCEL' is neither kvm nor tcg, ignored" ;;
esac

[ -e "$kvm_dev" ] || verdict tcg "no $kvm_dev"
[ -w "$kvm_dev" ] || verdict tcg "$kvm_dev is not writable"
[[ "$probe_timeout" =~ ^[1-9][0-9]*$ ]] || verdict tcg "probe timeout '$probe_timeout' is not a positive integer"

probe_log=$(mktemp "${TMPDIR:-/tmp}/taskscope-probe.XXXXXX") || verdict tcg "cannot create the probe's serial log"
started=$(date +%s)
# The initramfs prints the marker and powers off when it sees testbed.probe.
# In a group with stderr closed: bash's own "Aborted" line for a qemu that
# dies by a signal is noise next to the verdict below.
{ timeout -k 2 "$probe_timeout" qemu-system-x86_64 -M pc -nodefaults -no-user-config \
	-display none -no-reboot -kernel "$kernel" -initrd "$initrd" \
	-accel kvm -cpu host -smp 1 -m 512 \
	-append "console=ttyS0 panic=-1 quiet testbed.probe" \
	-serial "file:$probe_log" </dev/null >/dev/null 2>&1; } 2>/dev/null
qrc=$?
took=$(($(date +%s) - started))
marker=0
grep -q TESTBED-PROBE-OK "$probe_log" 2>/dev/null && marker=1
rm -f "$probe_log"

if [ "$marker" = 1 ]; then
	verdict kvm "a KVM guest booted in ${took} s"
fi
case "$qrc" in
124 | 137) verdict tcg "qemu under KVM hung; killed after ${probe_timeout} s" ;;
0) verdict tcg "qemu under KVM exited 0 without booting the guest" ;;
127) verdict tcg "qemu-system-x86_64 not found" ;;
*) verdict tcg "qemu under KVM failed (exit $qrc) after ${took} s" ;;
esac
