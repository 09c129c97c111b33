#!/usr/bin/env bash
# mmdebstrap's customize hook for scripts/test-pi-vm.sh: turns the arm64
# root file system in $1 into the emulated board's. Runs on the host; arm64
# commands in the chroot run under qemu-user.
set -euo pipefail
root=$1
here=$(dirname "$0")

echo pi-vm >"$root/etc/hostname"
printf '127.0.0.1 localhost pi-vm\n10.0.2.100 gateway.local\n' >"$root/etc/hosts"
mkdir -p "$root/mnt/host"
cat >"$root/etc/fstab" <<'FSTAB'
/dev/vda / ext4 rw,relatime 0 1
host /mnt/host 9p trans=virtio,version=9p2000.L,msize=262144 0 0
FSTAB
# qemu's user-mode network hands out an address by DHCP.
cat >"$root/etc/systemd/network/10-virtio.network" <<'NET'
[Match]
Name=en* eth*

[Network]
DHCP=ipv4
NET
# The board has no network beyond the gateway: apt reads the host's local
# repository through the share.
echo 'deb [trusted=yes] file:/mnt/host/repo ./' >"$root/etc/apt/sources.list"
rm -f "$root/etc/apt/sources.list.d/"*
install -m 0644 "$here/fedberry-pi-vm-runner.service" \
  "$root/etc/systemd/system/fedberry-pi-vm-runner.service"
chroot "$root" systemctl enable systemd-networkd fedberry-pi-vm-runner \
  >/dev/null 2>&1
# A console without a login prompt in the way of the log.
chroot "$root" systemctl mask serial-getty@ttyAMA0.service >/dev/null 2>&1
