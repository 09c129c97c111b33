#!/usr/bin/env bash
# Proves that AArch64 ELF files run on a Raspberry Pi 3 B+'s Cortex-A53:
# disassembles every executable section (aarch64-linux-gnu-objdump -d) and
# fails on any instruction beyond ARMv8.0-A with CRC32, which is all the
# A53 of a Pi 3 B+ (BCM2837) has: its /proc/cpuinfo says "fp asimd evtstrm
# crc32 cpuid", so the optional ARMv8.0 crypto instructions (AES, SHA-1,
# SHA-256, 64-bit PMULL) are refused too. Such an instruction in code the
# board runs dies with SIGILL, as PyTorch's arm64 wheels did in several
# releases.
#
# Refused, by feature: LSE atomics (v8.1: ld<op>, st<op>, swp, cas, casp),
# LOR and RDM (v8.1), dot products and i8mm (v8.2+), half-precision
# arithmetic on h registers or .4h/.8h lanes (v8.2 FP16; the v8.0
# conversions fcvt, fcvtl, fcvtn are fine), FHM, SHA-3, SHA-512, SM3/SM4
# (v8.2), RCPC ldapr (v8.3), pointer authentication outside the HINT space,
# complex numbers and fjcvtzs (v8.3), LRCPC2 and FlagM (v8.4), FRINTTS, SB
# and MTE (v8.5), BF16 (v8.6), LS64, WFxT (v8.7), MOPS (v8.8), SVE and SME
# (z and p registers, their own instructions), and the crypto extension.
# Allowed: the HINT-space pointer-authentication and BTI instructions
# (paciasp, autiasp, pacibsp, autibsp, bti, ...), which an ARMv8.0 core
# executes as NOPs.
#
# One exception, by shape, not by name: the outline-atomics helpers that
# GCC links into every program it builds for ARMv8.0 (libgcc's lse.S,
# __aarch64_ldadd4_acq_rel and the like) hold one LSE instruction that runs
# only when the kernel's HWCAP says the CPU has LSE; on an A53 the helper
# takes its ldxr/stxr loop instead. An LSE instruction is allowed when it is
# that helper's: `ldrb w16, [x16, ...]` (the __aarch64_have_lse_atomics
# flag), `cbz w16, L` over it, `ret` after it, and an exclusive load
# (ld[a]xr) at L. Stripped files keep no helper names, so the shape is
# what is checked; an LSE instruction anywhere else fails, even in a
# function named like a helper.
#
# Usage: scripts/armv8-scan.sh FILE...   (non-AArch64-ELF files are
# skipped with a note). Prints, per finding, the file, the symbol (the
# nearest one objdump names: a stripped file names only its dynamic
# symbols), the address, the instruction and its feature; per file a
# summary. Exit status 1 when anything was found, 2 on a usage error.
set -euo pipefail

objdump=${OBJDUMP:-aarch64-linux-gnu-objdump}
readelf=${READELF:-aarch64-linux-gnu-readelf}
max_listed=${ARMV8_SCAN_MAX_LISTED:-20}  # findings printed per file

if [[ $# -eq 0 ]]; then
  echo "usage: scripts/armv8-scan.sh FILE..." >&2
  exit 2
fi

# Reads `objdump -d --no-show-raw-insn -w` on stdin; prints findings and one
# "summary" line. Mnemonic and operands are matched with comments and
# <symbol> annotations removed.
scan_awk='
function feature(m, o,    ops) {
  if (m ~ /^(ld(add|clr|eor|set|smax|smin|umax|umin)|st(add|clr|eor|set|smax|smin|umax|umin))(a|l|al)?(b|h)?$/ ||
      m ~ /^swp(a|l|al)?(b|h)?$/ || m ~ /^casp?(a|l|al)?(b|h)?$/)
    return "LSE atomics (ARMv8.1)"
  if (m ~ /^(ldlar|stllr)(b|h)?$/) return "LOR (ARMv8.1)"
  if (m ~ /^sqrdml[as]h$/) return "RDM (ARMv8.1)"
  if (m ~ /^[su]dot$/) return "dot product (ARMv8.2 DotProd)"
  if (m ~ /^(usdot|sudot|smmla|ummla|usmmla)$/) return "int8 matrix multiply (ARMv8.2 I8MM)"
  if (m ~ /^bf(dot|mmla|mlalb|mlalt|cvt|cvtn|cvtn2)$/) return "BF16 (ARMv8.2)"
  if (m ~ /^fml[as]l2?$/) return "FHM (ARMv8.2)"
  if (m ~ /^(eor3|bcax|rax1|xar|sha512h|sha512h2|sha512su0|sha512su1)$/) return "SHA-3/SHA-512 (ARMv8.2)"
  if (m ~ /^(sm3ss1|sm3tt1a|sm3tt1b|sm3tt2a|sm3tt2b|sm3partw1|sm3partw2|sm4e|sm4ekey)$/) return "SM3/SM4 (ARMv8.2)"
  if (m ~ /^ldapr(b|h)?$/) return "RCPC (ARMv8.3)"
  if (m ~ /^(fcmla|fcadd|fjcvtzs)$/) return "complex numbers / JSCVT (ARMv8.3)"
  if (m ~ /^(pacia|pacib|pacda|pacdb|paciza|pacizb|pacdza|pacdzb|autia|autib|autda|autdb|autiza|autizb|autdza|autdzb|xpaci|xpacd|pacga|braa|brab|braaz|brabz|blraa|blrab|blraaz|blrabz|retaa|retab|eretaa|eretab|ldraa|ldrab)$/)
    return "pointer authentication outside the HINT space (ARMv8.3)"
  if (m ~ /^(ldapur(s?b|s?h|sw)?|stlur(b|h)?)$/) return "LRCPC2 (ARMv8.4)"
  if (m ~ /^(cfinv|rmif|setf8|setf16|axflag|xaflag)$/) return "FlagM (ARMv8.4/8.5)"
  if (m ~ /^frint(32|64)[xz]$/) return "FRINTTS (ARMv8.5)"
  if (m == "sb") return "SB (ARMv8.5)"
  if (m ~ /^(irg|gmi|addg|subg|subp|subps|stg|stzg|st2g|stz2g|stgp|ldg|ldgm|stgm|stzgm)$/) return "MTE (ARMv8.5)"
  if (m ~ /^(ld64b|st64b|st64bv|st64bv0|wfet|wfit)$/) return "LS64/WFxT (ARMv8.7)"
  if (m ~ /^(cpyf?|setg?)[pme][a-z]*$/) return "MOPS (ARMv8.8)"
  if (m ~ /^(smstart|smstop|rdsvl|addsvl|addspl)$/ || o ~ /(^|[^a-z0-9_])(za|zt0)([^a-z0-9_]|$)/)
    return "SME"
  if (m ~ /^(rdvl|addvl|addpl|cnt[bhwd]|inc[bhwd]|dec[bhwd]|[su]q(inc|dec)[bhwd]|setffr|rdffr|wrffr|ptrue|ptrues|pfalse|whilel[eots]|whilel[ot])$/ ||
      o ~ /(^|[^a-z0-9_])z[0-9]+(\.[bhsdq])?([^a-z0-9_]|$)/ ||
      o ~ /(^|[^a-z0-9_])p[0-9]+(\/[zm]|\.[bhsd])/)
    return "SVE"
  if (m ~ /^(aese|aesd|aesmc|aesimc|sha1c|sha1m|sha1p|sha1h|sha1su0|sha1su1|sha256h|sha256h2|sha256su0|sha256su1)$/ ||
      (m ~ /^pmull2?$/ && o ~ /\.1q/))
    return "crypto extension (optional in ARMv8.0; the Pi 3 B+ has none)"
  # Half precision: arithmetic and conversions to or from h registers or
  # .4h/.8h float lanes; fcvt, fcvtl(2), fcvtn(2) are ARMv8.0.
  if ((m ~ /^f/ && m !~ /^fcvt[ln]?2?$/) || m ~ /^[su]cvtf$/) {
    ops = " " o " "
    if (ops ~ /[^a-z0-9_]h[0-9]+[^a-z0-9_]/ || ops ~ /\.[248]h[^a-z0-9_]/ || ops ~ /\.h\[/)
      return "half-precision arithmetic (ARMv8.2 FP16)"
  }
  return ""
}
function is_lse(f) { return f ~ /^LSE/ }
function report(f, where) {
  found++
  count[f]++
  if (found <= max_listed)
    printf "armv8-scan: %s: %s: %s\n", file, where, f
}
function hex(s,   i, v) {
  v = 0
  for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
  return v
}
# The helper shape (state 1: its ret, 2: its fallback) not completed.
function unfinished() { if (state != 0) report(held_f, held); state = 0 }
BEGIN { sym = "?"; sym_addr = "0"; found = 0; helpers = 0; insns = 0; state = 0 }
/^[0-9a-f]+ <.*>:$/ {
  unfinished()
  sym = $0; sub(/^[0-9a-f]+ </, "", sym); sub(/>:$/, "", sym)
  sym_addr = $0; sub(/ .*/, "", sym_addr); p1 = ""; p2 = ""; next
}
/^ *[0-9a-f]+:\t/ {
  # "  405a540:<TAB>casalb<TAB>w0, w1, [x2]  // comment" (FS is a tab)
  m = $2; o = $3
  if (index(o, "/") || index(o, "<")) { sub(/[ \t]*\/\/.*$/, "", o); gsub(/[ ]*<[^>]*>/, "", o) }
  if (m == "" || m ~ /^\./ || m == "udf") { unfinished(); p2 = p1; p1 = ""; next }
  addr = $1; sub(/^ */, "", addr); sub(/:$/, "", addr)
  insns++
  if (state == 1) {  # the guarded LSE instruction must be followed by ret
    if (m == "ret") { state = 2; after = 0 } else unfinished()
  } else if (state == 2) {  # then the fallback: an exclusive-load loop
    after++
    if (after == 1 && addr != target) unfinished()
    else if (m ~ /^lda?x(r[bh]?|p)$/) { helpers++; state = 0 }
    else if (after >= 3) unfinished()
  }
  f = feature(m, o)
  if (f != "") {
    where = sprintf("%s+0x%x (0x%s): %s%s", sym, hex(addr) - hex(sym_addr), addr, m, o == "" ? "" : " " o)
    if (is_lse(f) && state == 0 && p1 ~ /^cbz w16, / && p2 ~ /^ldrb w16, \[x16/) {
      state = 1; held = where; held_f = f
      target = p1; sub(/^cbz w16, */, "", target); sub(/[ \t].*$/, "", target)
    } else {
      report(f, where)
    }
  }
  p2 = p1; p1 = m (o == "" ? "" : " " o)
  next
}
END {
  unfinished()
  printf "summary %d %d %d", insns, found, helpers
  for (f in count) printf "|%s: %d", f, count[f]
  printf "\n"
}
'

status=0
for file in "$@"; do
  if ! header=$("$readelf" -h "$file" 2>/dev/null) ||
    ! grep -q 'Machine: *AArch64' <<<"$header"; then
    echo "armv8-scan: $file: not an AArch64 ELF file, skipped"
    continue
  fi
  out=$("$objdump" -d --no-show-raw-insn -w "$file" |
    awk -F "\t" -v file="$file" -v max_listed="$max_listed" "$scan_awk")
  summary=$(grep '^summary ' <<<"$out" | tail -1)
  grep -v '^summary ' <<<"$out" || true
  read -r _ insns found helpers <<<"${summary%%|*}"
  if ((found > 0)); then
    status=1
    by_feature=${summary#*|}
    [[ $by_feature == "$summary" ]] && by_feature=
    echo "armv8-scan: $file: FAIL: $found instruction(s) beyond ARMv8.0-A" \
      "(${by_feature//|/; })$( ((found > max_listed)) && echo "; first $max_listed listed")"
  else
    echo "armv8-scan: $file: ok: $insns instructions, ARMv8.0-A + CRC32 only" \
      "($helpers LSE instruction(s) in outline-atomics helpers, taken only when HWCAP has LSE)"
  fi
done
exit "$status"
