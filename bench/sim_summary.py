#!/usr/bin/python3
"""Summarises fedberry-sim runs side by side (used by the bench/*.sh scripts).

    sim_summary.py [--per_round] [--boards] LABEL=OUTPUT_DIR ...

For each run: final test accuracy, the clients' RPC bytes up and down per
round (their own counters in clients.jsonl, all clients summed, mean over
rounds), updates refused per round and wall time of the rounds; with
--per_round also the test accuracy of every round; with --boards also a
board's peak RSS (the largest any board reported), bytes one board sends a
round and the mean seconds a round. Prints figures only.
"""
import json
import sys


def load(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def main(argv):
    per_round = "--per_round" in argv
    boards = "--boards" in argv
    runs = [a.split("=", 1) for a in argv
            if a not in ("--per_round", "--boards")]
    rows = []
    for label, out in runs:
        rounds = [r for r in load(f"{out}/rounds.jsonl") if "round" in r]
        clients = load(f"{out}/clients.jsonl")
        n = max(1, len(rounds))
        up = sum(c.get("rpc_sent_bytes", 0) for c in clients) / n
        down = sum(c.get("rpc_received_bytes", 0) for c in clients) / n
        rows.append(dict(
            label=label, rounds=len(rounds),
            final=rounds[-1].get("test_accuracy", float("nan")) if rounds
            else float("nan"),
            acc=[r.get("test_accuracy", float("nan")) for r in rounds],
            up=up, down=down,
            rejected=sum(r.get("rejected", 0) for r in rounds) / n,
            seconds=sum(r.get("round_seconds", 0) for r in rounds),
            rss=max((c.get("peak_rss_bytes", 0) for c in clients), default=0),
            board_up=sum(c.get("rpc_sent_bytes", 0) for c in clients)
            / max(1, len(clients))))
    base = rows[0] if rows else None
    print(f"{'run':<22} {'rounds':>6} {'final_acc':>9} {'up_KB/round':>12} "
          f"{'down_KB/round':>13} {'up_vs_first':>11} {'refused/round':>13} "
          f"{'rounds_s':>8}")
    for r in rows:
        ratio = r["up"] / base["up"] if base and base["up"] else float("nan")
        print(f"{r['label']:<22} {r['rounds']:>6} {r['final']:>9.4f} "
              f"{r['up'] / 1e3:>12.1f} {r['down'] / 1e3:>13.1f} "
              f"{ratio:>10.3f}x {r['rejected']:>13.1f} {r['seconds']:>8.1f}")
    if boards:
        print()
        print(f"{'run':<22} {'board_peak_rss_MiB':>18} "
              f"{'board_up_KB/round':>17} {'s/round':>8} {'final_acc':>9}")
        for r in rows:
            print(f"{r['label']:<22} {r['rss'] / 2**20:>18.1f} "
                  f"{r['board_up'] / 1e3:>17.1f} "
                  f"{r['seconds'] / max(1, r['rounds']):>8.2f} "
                  f"{r['final']:>9.4f}")
    if per_round:
        print()
        width = max((len(r["acc"]) for r in rows), default=0)
        print(f"{'run':<22} " + " ".join(f"{'r' + str(i + 1):>7}"
                                         for i in range(width)))
        for r in rows:
            print(f"{r['label']:<22} " +
                  " ".join(f"{a:>7.4f}" for a in r["acc"]))


if __name__ == "__main__":
    main(sys.argv[1:])
