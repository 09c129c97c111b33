#!/usr/bin/env bash
# mmdebstrap's essential hook for scripts/test-pi-vm.sh, before the kernel
# is installed: its initramfs carries only the modules a qemu virt board
# needs to mount its root (MODULES=list). With Debian's default (most) it
# took over 10 minutes of emulated shell per generation, twice.
set -euo pipefail
root=$1
mkdir -p "$root/etc/initramfs-tools/conf.d" \
  "$root/usr/share/initramfs-tools/modules.d"
echo MODULES=list >"$root/etc/initramfs-tools/conf.d/fedberry-pi-vm"
printf '%s\n' virtio_pci virtio_blk virtio_net ext4 crc32c_generic \
  >"$root/usr/share/initramfs-tools/modules.d/fedberry-pi-vm.conf"
