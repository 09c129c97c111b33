#!/usr/bin/env python3
"""Pretrains a small CNN on Fashion-MNIST classes 0-4 and prepares the boards' new task (classes 5-9).

    /usr/bin/python3 examples/pretrain_transfer.py --out transfer

Writes into --out:
  pretrained.pt  the CNN trained on the PC on classes 0-4 (TorchScript)
  scratch.pt     the same architecture with its random initialisation, for
                 comparison (TorchScript)
  new-task/      IDX files (train and t10k, gzipped, the bundled format)
                 holding only classes 5-9, with their original labels

The network has 10 outputs, so the five new classes (labels 5-9) fit the
same head; its parameters are features.* (two conv blocks and a 64-wide
embedding) and head.* (the last Linear, 64 -> 10). On the boards:

    fedberry-sim --model=transfer/pretrained.pt --trainable='head\\..*' \\
        --data=idx:transfer/new-task ...

--new_task_train=N keeps only the first N training images of classes 5-9
(boards with little data of the new task); --new_task_only writes new-task/
and nothing else.

Inputs are normalised as fedberry normalises IDX images (Fashion-MNIST's
mean 0.2860 and deviation 0.3530), so the boards see what the PC trained on.
CPU only, seeded, no downloads: it reads the bundled Debian data set.
"""
import argparse
import gzip
import os
import struct
import time

import numpy as np
import torch
from torch import nn

MEAN, STD = 0.2860, 0.3530  # fedberry's kFashionMnistMean / kFashionMnistStd


class TransferCnn(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 5), nn.ReLU(), nn.MaxPool2d(2),   # 16x12x12
            nn.Conv2d(16, 32, 5), nn.ReLU(), nn.MaxPool2d(2),  # 32x4x4
            nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU())
        self.head = nn.Linear(64, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def read_idx(path: str) -> np.ndarray:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    dims = struct.unpack(">" + "I" * (magic & 0xFF), data[4:4 + 4 * (magic & 0xFF)])
    return np.frombuffer(data, np.uint8, offset=4 + 4 * len(dims)).reshape(dims)


def idx_path(folder: str, name: str) -> str:
    path = os.path.join(folder, name)
    return path if os.path.exists(path) else path + ".gz"


def write_idx(path: str, array: np.ndarray) -> None:
    magic = 0x0800 | array.ndim  # unsigned bytes, ndim dimensions
    header = struct.pack(">I" + "I" * array.ndim, magic, *array.shape)
    # mtime=0: the same data gives the same file, so fedberry's caches agree.
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb",
                                                 mtime=0) as f:
        f.write(header + np.ascontiguousarray(array, np.uint8).tobytes())


def load_split(folder: str, split: str):
    images = read_idx(idx_path(folder, f"{split}-images-idx3-ubyte"))
    labels = read_idx(idx_path(folder, f"{split}-labels-idx1-ubyte"))
    return images, labels


def to_tensor(images: np.ndarray) -> torch.Tensor:
    x = torch.from_numpy(images.astype(np.float32) / 255.0)
    return ((x - MEAN) / STD).unsqueeze(1)


def accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    model.eval()
    with torch.no_grad():
        correct = sum(int((model(x[i:i + 1000]).argmax(1) == y[i:i + 1000])
                          .sum()) for i in range(0, len(x), 1000))
    return correct / max(1, len(x))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist",
                        help="Fashion-MNIST IDX folder (the bundled default)")
    parser.add_argument("--out", default="transfer")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--train_samples", type=int, default=0,
                        help="use only this many samples of classes 0-4 "
                             "(0: all 30,000)")
    parser.add_argument("--new_task_train", type=int, default=0,
                        help="keep only the first N training images of "
                             "classes 5-9 in new-task/ (0: all 30,000)")
    parser.add_argument("--new_task_only", action="store_true",
                        help="write new-task/ only (no pretraining)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    os.makedirs(os.path.join(args.out, "new-task"), exist_ok=True)

    train_images, train_labels = load_split(args.data, "train")
    test_images, test_labels = load_split(args.data, "t10k")

    # The boards' new task: classes 5-9 only, labels kept (5..9).
    for split, images, labels in (("train", train_images, train_labels),
                                  ("t10k", test_images, test_labels)):
        keep = labels >= 5
        if split == "train" and args.new_task_train:
            keep &= np.cumsum(keep) <= args.new_task_train
        write_idx(os.path.join(args.out, "new-task",
                               f"{split}-images-idx3-ubyte.gz"), images[keep])
        write_idx(os.path.join(args.out, "new-task",
                               f"{split}-labels-idx1-ubyte.gz"), labels[keep])
        print(f"new-task/{split}: {int(keep.sum())} images of classes 5-9")
    if args.new_task_only:
        return

    model = TransferCnn()
    # The untrained network, saved before any step: the from-scratch baseline.
    torch.jit.script(model).save(os.path.join(args.out, "scratch.pt"))

    old = train_labels < 5
    x = to_tensor(train_images[old])
    y = torch.from_numpy(train_labels[old].astype(np.int64))
    if args.train_samples:
        x, y = x[:args.train_samples], y[:args.train_samples]
    test_old = test_labels < 5
    tx = to_tensor(test_images[test_old])
    ty = torch.from_numpy(test_labels[test_old].astype(np.int64))

    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    start = time.time()
    for epoch in range(args.epochs):
        model.train()
        order = torch.randperm(len(x))
        total = 0.0
        for i in range(0, len(x), 64):
            batch = order[i:i + 64]
            optimizer.zero_grad()
            loss = loss_fn(model(x[batch]), y[batch])
            loss.backward()
            optimizer.step()
            total += float(loss) * len(batch)
        print(f"epoch {epoch + 1}/{args.epochs}: loss {total / len(x):.4f}, "
              f"test accuracy on classes 0-4 {accuracy(model, tx, ty):.4f} "
              f"({time.time() - start:.0f} s)")

    model.eval()
    scripted = torch.jit.script(model)
    # The same forward pass fedberry will run: fail here, not on the boards.
    scripted(torch.zeros(2, 1, 28, 28))
    scripted.save(os.path.join(args.out, "pretrained.pt"))
    head = sum(p.numel() for p in model.head.parameters())
    print(f"saved {args.out}/pretrained.pt and {args.out}/scratch.pt: "
          f"{sum(p.numel() for p in model.parameters())} parameters, "
          f"{head} in head.* (input [N, 1, 28, 28], 10 outputs)")


if __name__ == "__main__":
    main()
