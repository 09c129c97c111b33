#!/usr/bin/python3
"""Where a fedberry process's resident memory is, from /proc/PID/smaps:
file pages of shared libraries (split into LibTorch with what fedberry calls,
and the libraries Debian's libtorch_cpu.so loads only for its OpenCV and
FFmpeg entries), their relocated (private) pages, the heap and other
anonymous memory, against VmRSS and VmHWM.

  bench/memory_breakdown.py                # a client that waits for a server
                                           # that is not there, its shard of
                                           # the default job loaded: the floor
  bench/memory_breakdown.py --pid PID      # a running process (e.g. a client
                                           # of fedberry-sim, mid-round)

Prints figures, asserts nothing.
"""
import argparse
import functools
import os
import re
import subprocess
import sys
import tempfile
import time

# libtorch_cpu.so's DT_NEEDED entries that only Caffe2's image and video
# operators use; a trainer never calls them.
OPTIONAL_ROOT = re.compile(r"^(libopencv_|libav|libsw)")
LIB_DIRS = ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
            "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
            "/lib", "/usr/lib"]


@functools.lru_cache(maxsize=None)
def needed(path):
    out = subprocess.run(["objdump", "-p", path], capture_output=True,
                         text=True).stdout
    return re.findall(r"^\s+NEEDED\s+(\S+)", out, re.M)


def runpath(path):
    """The directories of an ELF file's RUNPATH (build/lib/fedberry for
    fedberry's programs: the repaired LibTorch copies)."""
    out = subprocess.run(["objdump", "-p", path], capture_output=True,
                         text=True).stdout
    m = re.search(r"^\s+RUNPATH\s+(\S+)", out, re.M)
    return [d for d in m.group(1).split(":") if d] if m else []


def resolve(soname, extra_dirs):
    for d in extra_dirs + LIB_DIRS:
        p = os.path.join(d, soname)
        if os.path.exists(p):
            return os.path.realpath(p)
    return None


def core_libraries(exe, extra_dirs):
    """Libraries reachable from the executable without following
    libtorch_cpu's OpenCV/FFmpeg entries."""
    seen, todo = set(), [os.path.realpath(exe)]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        torch = "libtorch_cpu" in os.path.basename(path)
        for soname in needed(path):
            if torch and OPTIONAL_ROOT.match(soname):
                continue
            p = resolve(soname, extra_dirs)
            if p:
                todo.append(p)
    return seen


def smaps(pid):
    """(path or [name], rss kB, anonymous kB) per mapping."""
    rows, cur = [], None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                parts = line.split()
                cur = [parts[5] if len(parts) > 5 else "[anon]", 0, 0]
                rows.append(cur)
            elif line.startswith("Rss:"):
                cur[1] = int(line.split()[1])
            elif line.startswith("Anonymous:"):
                cur[2] = int(line.split()[1])
    return rows


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def report(pid):
    exe = os.readlink(f"/proc/{pid}/exe")
    rows = smaps(pid)
    loaded = {os.path.realpath(p) for p, _, _ in rows if p.startswith("/")}
    dirs = runpath(exe) + sorted({os.path.dirname(p) for p in loaded})
    core = core_libraries(exe, dirs)
    libs = {p for p in loaded if ".so" in os.path.basename(p)}
    optional = libs - core
    kb = {k: 0 for k in ["core_file", "opt_file", "core_reloc", "opt_reloc",
                         "exe", "heap", "anon", "other"]}
    for path, rss, anon in rows:
        real = os.path.realpath(path) if path.startswith("/") else path
        if real in libs:
            side = "opt" if real in optional else "core"
            kb[side + "_file"] += rss - anon
            kb[side + "_reloc"] += anon
        elif real == os.path.realpath(exe):
            kb["exe"] += rss
        elif path == "[heap]":
            kb["heap"] += rss
        elif path == "[anon]" or path.startswith("[stack"):
            kb["anon"] += rss
        else:
            kb["other"] += rss
    mib = lambda k: kb[k] / 1024
    print(f"{os.path.basename(exe)} (pid {pid}): {len(libs)} shared libraries "
          f"mapped, {len(optional)} of them only for libtorch_cpu's "
          f"OpenCV/FFmpeg entries")
    print(f"  file pages, LibTorch and the libraries fedberry calls "
          f"{mib('core_file'):7.1f} MiB")
    print(f"  file pages, OpenCV/FFmpeg and what they load        "
          f"{mib('opt_file'):7.1f} MiB")
    print(f"  relocated library pages (private), core / optional  "
          f"{mib('core_reloc'):7.1f} / {mib('opt_reloc'):.1f} MiB")
    print(f"  the executable                                      "
          f"{mib('exe'):7.1f} MiB")
    print(f"  heap (brk)                                          "
          f"{mib('heap'):7.1f} MiB")
    print(f"  other anonymous (mmap'd blocks, tensors, stacks)    "
          f"{mib('anon'):7.1f} MiB")
    if kb["other"]:
        print(f"  other mappings                                      "
              f"{mib('other'):7.1f} MiB")
    print(f"  VmRSS {status(pid, 'VmRSS') / 1024:.1f} MiB, "
          f"VmHWM (peak) {status(pid, 'VmHWM') / 1024:.1f} MiB")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pid", type=int, help="a running process to break down")
    p.add_argument("--client", default="build/bin/fedberry-client",
                   help="without --pid: the client binary to start")
    p.add_argument("--wait", type=float, default=3.0,
                   help="without --pid: seconds to let the client settle")
    a = p.parse_args()
    if a.pid:
        report(a.pid)
        return
    with tempfile.TemporaryDirectory() as tmp:
        # Port 9 (discard) has no fedberry server: the client loads its
        # libraries and its shard (1 of 4, as a board of the default job),
        # then backs off and retries, with no plan or model.
        proc = subprocess.Popen(
            [a.client, "--server=127.0.0.1:9", f"--checkpoint_dir={tmp}",
             "--partition_index=0", "--partition_count=4"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(a.wait)
            if proc.poll() is not None:
                sys.exit(f"{a.client} exited early ({proc.returncode})")
            print("a client waiting for its server (its shard, no model):")
            report(proc.pid)
        finally:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main()
