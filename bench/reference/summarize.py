#!/usr/bin/python3
"""Prints the medians of bench/vs_python.sh's runs side by side, and the
ratios of each Python variant to fedberry (above 1: fedberry is faster or
smaller). Labels: "fedberry", then the Python runs in the order first seen
("python", "python+sgemm", "python+sgemm+heap")."""
import json
import statistics
import sys


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    jobs = {}
    for r in rows:
        jobs.setdefault(r["label"], []).append(r)
    a = jobs.get("fedberry", [])
    others = [(label, runs) for label, runs in jobs.items() if label != "fedberry"]
    if not a or not others:
        sys.exit("summarize.py: need runs of fedberry and of python")

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
    counts = ", ".join(f"{len(runs)} {label}" for label, runs in [("fedberry", a)] + others)
    print(f"\nmedians of {counts} runs"
          + (f" ({failed} runs exited non-zero)" if failed else ""))
    header = f"{'':34} {'fedberry':>10}"
    header += "".join(f" {label:>12}" for label, _ in others)
    header += "".join(f" {label + '/fedberry':>20}" for label, _ in others)
    print(header)
    for name, f, fmt in lines:
        x = med(a, f)
        ys = [med(runs, f) for _, runs in others]
        row = f"{name:34} {fmt % x:>10}" + "".join(f" {fmt % y:>12}" for y in ys)
        if not name.startswith("final"):
            row += "".join(f" {'%.2fx' % (y / x):>20}" for y in ys)
        print(row)


if __name__ == "__main__":
    main(sys.argv[1])
