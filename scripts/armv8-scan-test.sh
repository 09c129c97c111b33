#!/usr/bin/env bash
# Tests scripts/armv8-scan.sh on tiny objects assembled here with
# aarch64-linux-gnu-as: ARMv8.0 code (with the HINT-space paciasp/autiasp
# and an outline-atomics helper shaped like libgcc's) passes; an added
# ldadd, an ldadd in a function named like a helper but unguarded, sdot,
# SVE, FP16 arithmetic, AES and casal each fail, and the output names the
# file, the symbol and the instruction. Run by scripts/test-rpi3.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "armv8-scan-test: FAIL: $*" >&2; failures=$((failures + 1)); }

# An object from assembly text, every extension the scan refuses enabled.
assemble() {
  printf '%s\n' "$2" >"$tmp/$1.s"
  aarch64-linux-gnu-as -march=armv8.5-a+sve+fp16+dotprod+crypto+lse+memtag \
    -o "$tmp/$1.o" "$tmp/$1.s"
}

# ARMv8.0 only: arithmetic, an ldxr/stxr loop, NEON, CRC32, fcvt to half,
# the HINT-space pointer authentication, and libgcc's helper shape:
# ldrb w16 of __aarch64_have_lse_atomics, cbz over the LSE instruction,
# ret, and the ldaxr/stlxr fallback.
clean_asm='
  .text
  .globl clean_function
  .type clean_function, %function
clean_function:
  paciasp
  add x0, x0, x1
1: ldaxr w2, [x3]
  add w2, w2, w0
  stlxr w4, w2, [x3]
  cbnz w4, 1b
  fmla v0.4s, v1.4s, v2.4s
  crc32cw w0, w0, w1
  fcvt h0, s0
  fcvtn v0.4h, v1.4s
  add v0.8h, v1.8h, v2.8h
  autiasp
  ret
  .globl __aarch64_ldadd4_acq_rel
  .type __aarch64_ldadd4_acq_rel, %function
__aarch64_ldadd4_acq_rel:
  adrp x16, have_lse
  ldrb w16, [x16, #:lo12:have_lse]
  cbz w16, 8f
  ldaddal w0, w0, [x1]
  ret
8: mov w16, w0
0: ldaxr w0, [x1]
  add w17, w0, w16
  stlxr w15, w17, [x1]
  cbnz w15, 0b
  ret
  .data
have_lse: .byte 0'
assemble clean "$clean_asm"
if ! out=$(scripts/armv8-scan.sh "$tmp/clean.o" 2>&1); then
  fail "ARMv8.0 code was refused: $out"
elif ! grep -q 'ok: .*1 LSE instruction(s) in outline-atomics helpers' <<<"$out"; then
  fail "the helper's LSE instruction was not counted as allowed: $out"
fi

# Each refused instruction: its object, a function with it, and the words
# the scan must print for it.
check_refused() {
  local name=$1 insn=$2 words=$3 out
  assemble "$name" "
  .text
  .globl uses_$name
  .type uses_$name, %function
uses_$name:
  add x0, x0, x1
  $insn
  ret"
  if out=$(scripts/armv8-scan.sh "$tmp/$name.o" 2>&1); then
    fail "$name: the scan passed an object with '$insn': $out"
    return
  fi
  grep -q "$tmp/$name.o: uses_$name+0x4 (0x4): $words" <<<"$out" ||
    fail "$name: the scan did not name file, symbol and '$words': $out"
}
check_refused ldadd 'ldadd w0, w1, [x2]' 'ldadd w0, w1, \[x2\]: LSE atomics (ARMv8.1)'
check_refused casal 'casal x0, x1, [x2]' 'casal x0, x1, \[x2\]: LSE atomics'
check_refused sdot 'sdot v0.4s, v1.16b, v2.16b' 'sdot v0.4s, v1.16b, v2.16b: dot product'
check_refused sve 'ld1w {z0.s}, p0/z, [x0]' 'ld1w {z0.s}, p0/z, \[x0\]: SVE'
check_refused fp16 'fadd h0, h1, h2' 'fadd h0, h1, h2: half-precision arithmetic'
check_refused fp16vec 'fmla v0.8h, v1.8h, v2.8h' 'fmla v0.8h, v1.8h, v2.8h: half-precision'
check_refused aes 'aese v0.16b, v1.16b' 'aese v0.16b, v1.16b: crypto extension'
check_refused pacia 'pacia x0, x1' 'pacia x0, x1: pointer authentication outside the HINT space'
check_refused ldapr 'ldapr w0, [x1]' 'ldapr w0, \[x1\]: RCPC'

# An LSE instruction in a function named like a helper, not guarded by
# the HWCAP flag: refused (the name alone allows nothing).
assemble fake_helper '
  .text
  .globl __aarch64_ldadd4_relax
  .type __aarch64_ldadd4_relax, %function
__aarch64_ldadd4_relax:
  ldadd w0, w0, [x1]
  ret'
out=$(scripts/armv8-scan.sh "$tmp/fake_helper.o" 2>&1) &&
  fail "an unguarded ldadd in __aarch64_ldadd4_relax passed: $out"
grep -q '__aarch64_ldadd4_relax+0x0 (0x0): ldadd w0, w0, \[x1\]: LSE' <<<"$out" ||
  fail "the unguarded helper's ldadd was not named: $out"

# The guard without the exclusive-load fallback is not the helper either.
assemble no_fallback '
  .text
  .globl guarded
  .type guarded, %function
guarded:
  ldrb w16, [x16]
  cbz w16, 8f
  ldaddal w0, w0, [x1]
  ret
8: mov w0, #0
  ret'
out=$(scripts/armv8-scan.sh "$tmp/no_fallback.o" 2>&1) &&
  fail "a guarded ldaddal without an exclusive-load fallback passed: $out"

# A file that is not AArch64 is skipped, not passed as scanned.
out=$(scripts/armv8-scan.sh /bin/sh 2>&1) ||
  fail "a host binary made the scan fail: $out"
grep -q 'not an AArch64 ELF file, skipped' <<<"$out" ||
  fail "a host binary was not reported as skipped: $out"

if ((failures > 0)); then
  echo "armv8-scan-test: $failures failure(s)" >&2
  exit 1
fi
echo "armv8-scan-test: ok (ARMv8.0 code and libgcc's helper shape pass;" \
  "ldadd, casal, sdot, SVE, FP16, AES, pacia, ldapr and an unguarded helper fail, named)"
