#!/usr/bin/python3
"""The Python reference of fedberry's default job (what bench/vs_python.sh
runs beside fedberry-sim): FedAvg over --clients processes, each training
its IID shard of Fashion-MNIST (fedberry's shards) concurrently for one
local epoch per round (LeNet-5, SGD 0.05 momentum 0.9, batch 32, 1 thread),
the server process averaging the updates by sample count and evaluating the
10k test split after each round. Plain multiprocessing (spawned processes,
pipes), no Flower. Ends with fedberry-sim's per-process table and summary
line, so one parser reads both.
"""
import argparse
import multiprocessing as mp
import os
import time

import torch

import common


def client(index, args, conn):
    torch.set_num_threads(args.threads)
    images, labels = common.load_split(args.data, "train")
    shard = common.iid_shard(images.shape[0], index, args.clients, args.partition_seed)
    images, labels = images[shard].contiguous(), labels[shard].contiguous()
    del shard
    net = common.LeNet5()
    per_epoch = (images.shape[0] + args.batch_size - 1) // args.batch_size
    conn.send("ready")
    while True:
        msg = conn.recv()
        if msg is None:
            break
        round_no, state = msg
        net.load_state_dict(state)
        samples, loss = common.train(net, images, labels, per_epoch * args.local_epochs,
                                     args.batch_size, args.lr, args.momentum,
                                     args.seed * 1000 + round_no * 31 + index)
        conn.send((net.state_dict(), samples, loss))
    conn.send(common.peak_rss_mib())


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--data", default=common.DEFAULT_DATA)
    p.add_argument("--clients", type=int, default=4)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--local_epochs", type=int, default=1)
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--eval_batch", type=int, default=100)  # as fedberry-server
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--partition_seed", type=int, default=42)
    args = p.parse_args()
    start = time.perf_counter()

    ctx = mp.get_context("spawn")  # each client its own fresh process
    pipes, procs = [], []
    for i in range(args.clients):
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=client, args=(i, args, child), name=f"client-{i}")
        proc.start()
        pipes.append(parent)
        procs.append(proc)

    torch.set_num_threads(args.threads)
    test_images, test_labels = common.load_split(args.data, "t10k")
    torch.manual_seed(args.seed)
    net = common.LeNet5()
    for conn in pipes:
        conn.recv()  # ready

    print(f"{'round':<6} {'test_accuracy':<14} {'test_loss':<10} {'round_s':<8} {'eval_s':<8}")
    accuracy = 0.0
    for round_no in range(1, args.rounds + 1):
        t0 = time.perf_counter()
        state = net.state_dict()
        for conn in pipes:
            conn.send((round_no, state))
        updates = [conn.recv() for conn in pipes]
        total = sum(samples for _, samples, _ in updates)
        averaged = {}
        for name in state:
            averaged[name] = sum(u[name] * (samples / total) for u, samples, _ in updates)
        net.load_state_dict(averaged)
        t1 = time.perf_counter()
        loss, accuracy = common.evaluate(net, test_images, test_labels, args.eval_batch)
        t2 = time.perf_counter()
        print(f"{round_no:<6} {accuracy:<14.4f} {loss:<10.4f} {t2 - t0:<8.2f} {t2 - t1:<8.2f}",
              flush=True)

    for conn in pipes:
        conn.send(None)
    rss = [conn.recv() for conn in pipes]
    for proc in procs:
        proc.join()
    wall = time.perf_counter() - start
    print(f"\n{'process':<10} {'exit':<10} {'peak_rss_MiB':<14}")
    print(f"{'server':<10} {0:<10} {common.peak_rss_mib():<14.1f}")
    for i, (proc, r) in enumerate(zip(procs, rss)):
        print(f"{'client-' + str(i):<10} {proc.exitcode:<10} {r:<14.1f}")
    print(f"\nfedavg_job.py: {args.rounds}/{args.rounds} rounds, final test accuracy "
          f"{accuracy:.4f}, wall time {wall:.1f} s, pid {os.getpid()}")


if __name__ == "__main__":
    main()
