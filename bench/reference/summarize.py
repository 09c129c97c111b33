#!/usr/bin/python3
"""Prints the medians of bench/vs_python.sh's runs side by side, and the
ratios Python / fedberry (above 1: fedberry is faster or smaller)."""
import json
import statistics
import sys


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    jobs = {}
    for r in rows:
        jobs.setdefault(r["label"], []).append(r)
    a, b = jobs.get("fedberry", []), jobs.get("python", [])
    if not a or not b:
        sys.exit("summarize.py: need runs of both fedberry and python")

    def med(runs, f):
        values = [v for v in (f(r) for r in runs) if v is not None]
        return statistics.median(values) if values else float("nan")

    def clients(r):
        v = [x for k, x in r["peak_rss_mib"].items() if k.startswith("client")]
        return statistics.mean(v) if v else None

    lines = [
        ("wall s", lambda r: r["wall_s"], "%.1f"),
        ("CPU s (all processes)", lambda r: r["cpu_s"], "%.1f"),
        ("peak RSS MiB, server", lambda r: r["peak_rss_mib"].get("server"), "%.1f"),
        ("peak RSS MiB, per client (mean)", clients, "%.1f"),
        ("final test accuracy", lambda r: r["accuracy"], "%.4f"),
    ]
    failed = sum(r["exit"] != 0 for r in rows)
    print(f"\nmedians of {len(a)} fedberry and {len(b)} python runs"
          + (f" ({failed} runs exited non-zero)" if failed else ""))
    print(f"{'':34} {'fedberry':>10} {'python':>10} {'python/fedberry':>16}")
    for name, f, fmt in lines:
        x, y = med(a, f), med(b, f)
        ratio = "" if name.startswith("final") else "%.2fx" % (y / x)
        print(f"{name:34} {fmt % x:>10} {fmt % y:>10} {ratio:>16}")


if __name__ == "__main__":
    main(sys.argv[1])
