#!/usr/bin/python3
"""The Python reference of bench/loop_bench.cc: samples/s of one client's
training loop (LeNet-5, SGD 0.05 momentum 0.9, batch 32, 1 thread, shard 0
of 4 of Fashion-MNIST) and of evaluating the 10k test split at several batch
sizes. Debian's python3-torch: /usr/bin/python3 bench/reference/loop_bench.py
"""
import argparse
import resource
import time

import torch

import common


def cpu_seconds():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def timed(f):
    t0, c0 = time.perf_counter(), cpu_seconds()
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    out = f()
    return (time.perf_counter() - t0, cpu_seconds() - c0,
            resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0, out)


def median(runs):
    return sorted(runs, key=lambda r: r[0])[len(runs) // 2]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", default=common.DEFAULT_DATA)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--partition_count", type=int, default=4)
    p.add_argument("--steps", type=int, default=0, help="0: one epoch of the shard")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--eval_batches", default="50,100,250,500,1000,10000")
    a = p.parse_args()

    torch.set_num_threads(a.threads)
    images, labels = common.load_split(a.data, "train")
    shard = common.iid_shard(images.shape[0], 0, a.partition_count)
    images, labels = images[shard].contiguous(), labels[shard].contiguous()
    test_images, test_labels = common.load_split(a.data, "t10k")
    print(f"loop_bench.py: Python PyTorch {torch.__version__}, "
          f"threads={torch.get_num_threads()}")

    torch.manual_seed(1)
    net = common.LeNet5()
    steps = a.steps or (images.shape[0] + a.batch_size - 1) // a.batch_size
    common.train(net, images, labels, 20, a.batch_size, 0.05, 0.9, 99)  # warm-up
    runs = [timed(lambda r=r: common.train(net, images, labels, steps, a.batch_size,
                                           0.05, 0.9, 100 + r))
            for r in range(a.reps)]
    wall, cpu, faults, (samples, loss) = median(runs)
    print(f"train  batch={a.batch_size:<5d} {samples / wall:8.0f} samples/s  "
          f"(median of {len(runs)}: {samples} samples in {wall:.3f} s wall, "
          f"{cpu:.3f} s CPU, {faults} minor faults; loss {loss:.4f})")

    for batch in [int(b) for b in a.eval_batches.split(",") if b]:
        common.evaluate(net, test_images, test_labels, batch)  # warm-up
        runs = [timed(lambda: common.evaluate(net, test_images, test_labels, batch))
                for _ in range(a.reps)]
        wall, cpu, faults, (_, accuracy) = median(runs)
        n = test_images.shape[0]
        print(f"eval   batch={batch:<5d} {n / wall:8.0f} samples/s  "
              f"(median of {len(runs)}: {n} samples in {wall:.3f} s wall, "
              f"{cpu:.3f} s CPU, {faults} minor faults; accuracy {accuracy:.4f})")


if __name__ == "__main__":
    main()
