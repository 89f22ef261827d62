#!/bin/bash
# Builds (or reuses) a guest image of the system-test bed: Debian 12
# (bookworm, the default) or Debian 13 (trixie).
# Prints the cache directory (rootfs.img, vmlinuz, initrd.img) as its last line.
#   build-image.sh [SUITE]
#   TASKSCOPE_TESTBED_CACHE  where images live (default /var/cache/taskscope-testbed)
#   TASKSCOPE_TESTBED_DEBS   where downloaded .debs are kept between builds
#                            (default: debs/ in the image cache)
set -euo pipefail
# No way out of this script without a reason on stderr.
trap 'echo "build-image: line $LINENO: \"$BASH_COMMAND\" failed (exit $?)" >&2' ERR

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../scripts/suites.sh"
cache_root=${TASKSCOPE_TESTBED_CACHE:-/var/cache/taskscope-testbed}
suite=${1:-bookworm}
suite_require "$suite" build-image

say() { echo "build-image: $*" >&2; }

key=$(
	cd "$here"
	{
		printf '%s\n' packages.txt "packages.$suite.txt" build-image.sh ../scripts/suites.sh
		find guest initramfs -type f | LC_ALL=C sort
	} | while read -r f; do
		printf '%s\n' "$f"
		sha256sum <"$f"
	done | { echo "$suite"; cat; } | sha256sum | cut -c1-16
)
out=$cache_root/$suite-$key

if [ -f "$out/complete" ]; then
	echo "$out"
	exit 0
fi

mkdir -p "$cache_root" || { say "cannot create the image cache $cache_root"; exit 1; }
exec 9>"$cache_root/.lock"
flock 9 || { say "cannot lock $cache_root/.lock"; exit 1; }
if [ -f "$out/complete" ]; then
	echo "$out"
	exit 0
fi

tmp=$(mktemp -d "$cache_root/.build-$key.XXXXXX")
cleanup() { rm -rf "$tmp"; }
trap cleanup EXIT
t0=$(date +%s)

# The host's own mirrors (Debian only here) rather than naming one.
mapfile -t mirrors < <(suite_mirrors "$suite") || { say "no Debian mirror found in /etc/apt"; exit 1; }

pkgs=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/packages.txt" "$here/packages.$suite.txt" | grep -v '^$' | paste -sd,)
root=$tmp/root

# Keep the downloaded .debs between builds: a rebuild after a script change then needs no download.
debs=${TASKSCOPE_TESTBED_DEBS:-$cache_root/debs}/$suite
mkdir -p "$debs" "$tmp/debs"
say "mmdebstrap $suite (${mirrors[*]})"
mmdebstrap --quiet --variant=minbase --mode=root --format=directory \
	--skip=essential/unlink \
	--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
	--setup-hook="sync-in $debs /var/cache/apt/archives/" \
	--customize-hook="sync-out /var/cache/apt/archives $tmp/debs" \
	--include="$pkgs" \
	--aptopt='APT::Install-Recommends "false"' \
	--aptopt='Acquire::Languages "none"' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	"$suite" "$root" "${mirrors[@]}" >&2 || { say "mmdebstrap failed (its output is above)"; exit 1; }
t1=$(date +%s)

echo taskscope-testbed >"$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\ttaskscope-testbed\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
sed -i 's/^root:[^:]*:/root::/' "$root/etc/shadow"
echo '/dev/vda / ext4 rw,relatime,errors=remount-ro 0 1' >"$root/etc/fstab"
# A fixed machine-id: an empty one makes every boot a "first boot" (presets, firstboot units).
head -c16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$root/etc/machine-id"
echo >>"$root/etc/machine-id"
mkdir -p "$root/var/lib/dbus"
ln -sf /etc/machine-id "$root/var/lib/dbus/machine-id"

# Units that only cost boot time in a throwaway TCG guest.
for u in systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer \
	man-db.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer \
	dpkg-db-backup.timer logrotate.timer systemd-tmpfiles-clean.timer \
	systemd-networkd-wait-online.service networking.service \
	systemd-udev-settle.service systemd-fsck-root.service \
	getty@.service serial-getty@.service console-getty.service \
	systemd-firstboot.service systemd-random-seed.service \
	systemd-update-utmp.service systemd-update-utmp-runlevel.service; do
	ln -sf /dev/null "$root/etc/systemd/system/$u"
done
mkdir -p "$root/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\n' >"$root/etc/systemd/journald.conf.d/testbed.conf"

install -m 0755 "$here/guest/taskscope-testbed-run" "$root/usr/local/sbin/taskscope-testbed-run"
install -m 0644 "$here/guest/taskscope-testbed.service" "$root/etc/systemd/system/taskscope-testbed.service"
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -sf ../taskscope-testbed.service "$root/etc/systemd/system/multi-user.target.wants/taskscope-testbed.service"

rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*

vmlinuz=$(ls "$root"/boot/vmlinuz-* | sort -V | tail -1)
kver=${vmlinuz##*/vmlinuz-}
cp "$vmlinuz" "$tmp/vmlinuz"
moddir=$root/lib/modules/$kver

# initramfs: busybox plus virtio-blk/ext4/9p modules, dependencies first.
ird=$tmp/initramfs
mkdir -p "$ird/bin" "$ird/lib/modules"
cp /bin/busybox "$ird/bin/busybox"
install -m 0755 "$here/initramfs/init" "$ird/init"

declare -A dep_of=() seen=()
while IFS= read -r line; do
	m=${line%%:*}
	dep_of[$m]=${line#*:}
done <"$moddir/modules.dep"
path_of() {
	local want=${1//-/_} p b
	for p in "${!dep_of[@]}"; do
		b=${p##*/}
		b=${b%%.ko*}
		[ "${b//-/_}" = "$want" ] && { echo "$p"; return 0; }
	done
	return 1
}
order=()
add_mod() {
	local p=$1 d
	[ -z "${seen[$p]:-}" ] || return 0
	seen[$p]=1
	for d in ${dep_of[$p]}; do add_mod "$d"; done
	order+=("$p")
}
for m in virtio_pci virtio_mmio virtio_blk virtio_rng crc32c_generic crc32c_intel ext4 9pnet_virtio 9p; do
	if p=$(path_of "$m"); then
		add_mod "$p"
	elif grep -q "/${m//_/[_-]}\.ko" "$moddir/modules.builtin"; then
		:
	else
		say "warning: module $m neither loadable nor built in"
	fi
done
: >"$ird/lib/modules/load-order"
for p in "${order[@]}"; do
	b=${p##*/}
	case "$b" in
	*.ko.xz) xz -dc "$moddir/$p" >"$ird/lib/modules/${b%.xz}"; b=${b%.xz} ;;
	*.ko.zst) zstd -qdc "$moddir/$p" >"$ird/lib/modules/${b%.zst}"; b=${b%.zst} ;;
	*.ko.gz) gzip -dc "$moddir/$p" >"$ird/lib/modules/${b%.gz}"; b=${b%.gz} ;;
	*) cp "$moddir/$p" "$ird/lib/modules/$b" ;;
	esac
	echo "$b" >>"$ird/lib/modules/load-order"
done
say "initramfs modules: $(paste -sd' ' "$ird/lib/modules/load-order")"
# Uncompressed: decompressing under TCG costs more than loading a few MB.
(cd "$ird" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) >"$tmp/initrd.img"

used_mb=$(du -sm "$root" | cut -f1)
size_mb=$((used_mb + 900))
[ $size_mb -ge 1536 ] || size_mb=1536
mkfs.ext4 -q -F -L testbed-root -E lazy_itable_init=0,lazy_journal_init=0 \
	-d "$root" "$tmp/rootfs.img" "${size_mb}M" >&2
rm -rf "$root" "$ird"
rm -rf "$debs.old"
mv "$debs" "$debs.old" && mv "$tmp/debs" "$debs" && rm -rf "$debs.old"
echo "$kver" >"$tmp/kernel-version"
date -u +%FT%TZ >"$tmp/complete"

rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
# Keep the two newest images of each suite; a running guest keeps its open (deleted) image alive anyway.
ls -1dt "$cache_root/$suite"-*/ 2>/dev/null | tail -n +3 | xargs -r rm -rf
say "built $out in $(($(date +%s) - t0)) s (mmdebstrap $((t1 - t0)) s, rootfs ${used_mb} MB, image ${size_mb} MB)"
echo "$out"
