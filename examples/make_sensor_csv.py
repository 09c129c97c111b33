#!/usr/bin/env python3
"""Writes a synthetic tabular data set as CSV files, for trying fedberry
without data of your own: rows of 8 sensor readings from three machine states
(idle, normal, faulty), a text column (the machine's name), and the label.
Give the server --feature_columns to leave the text column out.

    /usr/bin/python3 examples/make_sensor_csv.py --out sensors --boards 3

writes sensors/test.csv and sensors/board-0.csv ... board-2.csv (header row
first). Each machine state has its own mean per reading, plus noise, so a
small network reaches high accuracy in a few rounds.
"""
import argparse
import os
import random

FEATURES = ["temp", "vibration", "current", "voltage", "rpm", "pressure",
            "humidity", "noise"]
STATES = [  # per-state mean of each reading
    [40, 0.1, 1.0, 230, 0, 1.0, 40, 30],
    [60, 0.5, 5.0, 228, 1500, 1.2, 42, 55],
    [75, 1.4, 7.5, 221, 1350, 1.5, 45, 70],
]
SPREAD = [6, 0.25, 1.2, 3, 250, 0.12, 5, 8]


def row(rng: random.Random, state: int):
    values = [m + rng.gauss(0, s) for m, s in zip(STATES[state], SPREAD)]
    return [f"{v:.4f}" for v in values]


def write(path: str, rows: int, rng: random.Random) -> None:
    with open(path, "w") as f:
        f.write("machine," + ",".join(FEATURES) + ",state\n")
        for i in range(rows):
            state = rng.randrange(len(STATES))
            f.write(f"m{i % 17}," + ",".join(row(rng, state)) + f",{state}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="sensors")
    parser.add_argument("--boards", type=int, default=3)
    parser.add_argument("--rows", type=int, default=2000,
                        help="rows per board")
    parser.add_argument("--test_rows", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    write(os.path.join(args.out, "test.csv"), args.test_rows, rng)
    for b in range(args.boards):
        write(os.path.join(args.out, f"board-{b}.csv"), args.rows, rng)
    print(f"wrote {args.out}/test.csv and {args.boards} board files, "
          f"{len(FEATURES)} features, label column 'state'")


if __name__ == "__main__":
    main()
