#!/bin/bash
# Boots a Debian test guest under qemu, runs one command in it, returns its exit code.
#   testbed/run.sh [--suite bookworm|trixie] [--variant v2|v1] [--force-legacy] [--smp N] [--mem MB] [--timeout SEC] [--share HOSTPATH]... -- COMMAND [ARGS...]
#   --force-legacy  boots Debian 13 on v1 all the same (SYSTEMD_CGROUP_ENABLE_LEGACY_FORCE=1), for the
#                   test that taskscope refuses to run there
#   testbed/run.sh --prepare    builds the image and decides the accelerator, boots nothing
#                               (scripts/demo.sh runs it beside the compile)
set -euo pipefail
# No way out of this script without a reason on stderr: anything set -e stops is named.
trap 'echo "testbed: run.sh line $LINENO: \"$BASH_COMMAND\" failed (exit $?)" >&2' ERR

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The suite defaults to this machine's own (its builds run in the guest
# unchanged), Debian 12 elsewhere.
. "$here/../scripts/suites.sh"
suite=$(suite_of_host)
suite=${suite:-bookworm}
variant=v2 smp=2 mem=2048 timeout_s=1800
shares=()
prepare=0
force_legacy=0

usage() {
	sed -n '2,3p' "${BASH_SOURCE[0]}" >&2
	exit 125
}
die() {
	echo "testbed: $*" >&2
	exit 125
}

while [ $# -gt 0 ]; do
	case "$1" in
	--suite) suite=${2:?}; shift 2 ;;
	--variant) variant=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--timeout) timeout_s=${2:?}; shift 2 ;;
	--share) shares+=("$(realpath -e "${2:?}")") || die "no such share: $2"; shift 2 ;;
	--prepare) prepare=1; shift ;;
	--force-legacy) force_legacy=1; shift ;;
	--) shift; break ;;
	-h | --help) usage ;;
	*) usage ;;
	esac
done
[ $# -gt 0 ] || [ $prepare = 1 ] || usage
case "$variant" in
v2) cg_args="systemd.unified_cgroup_hierarchy=1 cgroup_no_v1=all" ;;
v1) cg_args="systemd.unified_cgroup_hierarchy=0" ;;
*) die "unknown variant '$variant' (v2 or v1)" ;;
esac
case "$suite" in
bookworm) ;;
# systemd 256 and later refuse the legacy and hybrid hierarchies (they stop
# at boot unless forced): a Debian 13 guest is cgroup v2 only, but for the
# one test that a node forced onto v1 gets a manager that refuses to run.
trixie)
	[ "$variant" = v2 ] || [ "$force_legacy" = 1 ] ||
		die "Debian 13 (systemd 257) boots on cgroup v2 only; v1 is a Debian 12 variant (--force-legacy boots it anyway)"
	[ "$variant" = v2 ] || cg_args+=" SYSTEMD_CGROUP_ENABLE_LEGACY_FORCE=1"
	;;
*) die "unknown suite '$suite' (bookworm or trixie)" ;;
esac
[[ "$smp" =~ ^[1-9][0-9]*$ && "$mem" =~ ^[1-9][0-9]*$ && "$timeout_s" =~ ^[1-9][0-9]*$ ]] ||
	die "--smp, --mem and --timeout take positive integers"

if [ -n "${TASKSCOPE_TESTBED_IMAGE:-}" ]; then
	img=$TASKSCOPE_TESTBED_IMAGE
else
	t_img=$SECONDS
	img=$("$here/build-image.sh" "$suite" | tail -n1) || die "the guest image did not build (build-image.sh's output is above)"
	# For CI's table of times (scripts/ci-times.sh); 0 when the image was cached.
	echo "timing: testbed.image $((SECONDS - t_img))" >&2
fi
[ -f "$img/complete" ] || die "no complete guest image in '$img'"

# Under TCG the guest cannot calibrate its TSC against the PIT: hand it the host's rate.
mhz=$(awk -F: '/^cpu MHz/ {printf "%d", $2 * 1000; exit}' /proc/cpuinfo)
tsc_args=""
[ -z "$mhz" ] || tsc_args="tsc_early_khz=$mhz tsc=reliable"
base_cmdline="console=ttyS0 panic=-1 quiet mitigations=off $tsc_args"

qemu_common=(qemu-system-x86_64 -M pc -nodefaults -no-user-config -display none -no-reboot
	-kernel "$img/vmlinuz" -initrd "$img/initrd.img")

# The accelerator is probed once per image (testbed/probe-accel.sh says why)
# and the verdict kept beside it; the probe itself never fails the run.
accel_file=$img/accel
if [ ! -s "$accel_file" ]; then
	exec 8>"$img/.accel.lock" || die "cannot open $img/.accel.lock"
	flock 8 || die "cannot lock $img/.accel.lock"
	if [ ! -s "$accel_file" ]; then
		t_probe=$SECONDS
		verdict=$("$here/probe-accel.sh" "$img/vmlinuz" "$img/initrd.img") || verdict=tcg
		echo "timing: testbed.probe $((SECONDS - t_probe))" >&2
		case "$verdict" in kvm | tcg) ;; *) verdict=tcg ;; esac
		echo "$verdict" >"$accel_file.tmp" && mv -f "$accel_file.tmp" "$accel_file" ||
			die "cannot record the accelerator verdict in $accel_file"
	fi
	exec 8>&-
fi
if [ $prepare = 1 ]; then
	echo "testbed: image $img ready, accelerator $(cat "$accel_file")" >&2
	exit 0
fi
if [ "$(cat "$accel_file")" = kvm ]; then
	accel=(-accel kvm -cpu host)
else
	accel=(-accel tcg,thread=multi,tb-size=512 -cpu max,la57=off)
fi

# One guest at a time on this machine: each wants every host core, and two
# under TCG only make both slow enough to trip their timeouts. Waits, never fails.
if [ -z "${TASKSCOPE_TESTBED_NO_LOCK:-}" ]; then
	exec 9>"${TMPDIR:-/tmp}/taskscope-testbed.lock" || die "cannot open the machine-wide guest lock"
	flock 9 || die "cannot take the machine-wide guest lock"
fi

ctl=$(mktemp -d "${TMPDIR:-/tmp}/taskscope-testbed.XXXXXX") || die "cannot create a control directory in ${TMPDIR:-/tmp}"
chmod 0755 "$ctl"

share_args=()
: >"$ctl/shares"
cwd=$(pwd -P)
cd_to=/
for i in "${!shares[@]}"; do
	s=${shares[$i]}
	share_args+=(-fsdev "local,id=share$i,path=$s,security_model=none"
		-device "virtio-9p-pci,fsdev=share$i,mount_tag=share$i")
	echo "share$i $s" >>"$ctl/shares"
	case "$cwd/" in "$s"/*) cd_to=$cwd ;; esac
done
{
	echo '#!/bin/bash'
	printf 'cd %q || exit 125\n' "$cd_to"
	printf 'exec'
	printf ' %q' "$@"
	echo
} >"$ctl/cmd"

t0=$(date +%s.%N)
qrc=0
timeout -k 10 "$timeout_s" "${qemu_common[@]}" "${accel[@]}" -smp "$smp" -m "$mem" \
	-append "$base_cmdline $cg_args" \
	-drive "file=$img/rootfs.img,format=raw,if=virtio,snapshot=on,cache=unsafe" \
	-fsdev "local,id=tbctl,path=$ctl,security_model=none" \
	-device "virtio-9p-pci,fsdev=tbctl,mount_tag=tbctl" \
	"${share_args[@]}" \
	-device virtio-rng-pci \
	-serial "file:$ctl/serial.log" </dev/null >"$ctl/qemu.log" 2>&1 || qrc=$?
t1=$(date +%s.%N)
wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b - a}')

[ ! -f "$ctl/out" ] || cat "$ctl/out"

if [ -f "$ctl/rc" ]; then
	rc=$(cat "$ctl/rc")
	started=$(cat "$ctl/started" 2>/dev/null || echo "?")
	finished=$(cat "$ctl/finished" 2>/dev/null || echo "?")
	echo "testbed: $suite $variant ${accel[1]%%,*} smp=$smp: guest ready after ${started}s uptime, command done at ${finished}s, wall ${wall}s, rc=$rc" >&2
	if [ "$rc" = 0 ] && [ "${TASKSCOPE_TESTBED_KEEP:-0}" != 1 ]; then
		rm -rf "$ctl"
	else
		echo "testbed: control dir kept: $ctl" >&2
	fi
	exit "$rc"
fi

if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	reason="timeout after $timeout_s s"
elif [ -f "$ctl/started" ]; then
	reason="command started but guest ended without an exit code (qemu rc $qrc)"
else
	reason="boot failed (qemu rc $qrc)"
fi
{
	echo "---- qemu output:"
	tail -n 20 "$ctl/qemu.log" || true
	echo "---- serial log tail ($ctl/serial.log):"
	tail -n 60 "$ctl/serial.log" 2>/dev/null || echo "(no serial log)"
	echo "testbed: guest did not finish: $reason (wall ${wall}s)"
	echo "testbed: serial log: $ctl/serial.log"
} >&2
exit 125
