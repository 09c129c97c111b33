#!/usr/bin/python3
"""Runs one federated job (fedberry-sim or fedavg_job.py), its output to
--log, and appends one JSON line to --results: wall seconds (launch to
exit), CPU seconds of the whole process tree (every process is waited for,
so RUSAGE_CHILDREN holds them all), peak RSS per process and final test
accuracy, both read from the job's closing table and summary line.

  measure.py --label fedberry --log f.log --results r.jsonl -- CMD ARGS...
"""
import argparse
import json
import re
import resource
import subprocess
import sys
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--label", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--results", required=True)
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(a.log, "w") as log:
        code = subprocess.call(cmd, stdout=log, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    text = open(a.log).read()
    rss = {m.group(1): float(m.group(3)) for m in re.finditer(
        r"^(server|client-\d+)\s+(-?\d+)\s+([\d.]+)\s*$", text, re.M)}
    acc = re.search(r"final test accuracy ([\d.]+)", text)
    row = {"label": a.label, "exit": code, "wall_s": round(wall, 3),
           "cpu_s": round(cpu, 3), "accuracy": float(acc.group(1)) if acc else None,
           "peak_rss_mib": rss}
    with open(a.results, "a") as out:
        out.write(json.dumps(row) + "\n")
    print(f"{a.label:<9} exit {code}  wall {wall:6.1f} s  CPU {cpu:6.1f} s  "
          f"accuracy {row['accuracy']}  peak RSS MiB {rss}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
