"""What the Python references share with fedberry's C++ runtime.

Plain PyTorch (Debian's python3-torch, run with /usr/bin/python3), no
torchvision: Fashion-MNIST read from Debian's IDX files, fedberry's IID
shards (the same rows: runtime/partition.cc's std::mt19937_64 and
Fisher-Yates, re-implemented below), runtime/model.cc's LeNet-5, and
runtime/trainer.cc's loop (batches normalised from uint8 one at a time, SGD
with momentum made anew for each local run, evaluation by summed
cross-entropy).
"""
import gzip
import math
import os
import resource
import struct

import torch
import torch.nn as nn
import torch.nn.functional as F

DEFAULT_DATA = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.2860, 0.3530  # runtime/trainer.cc's kMean, kStd
MASK64 = (1 << 64) - 1


class Mt19937_64:
    """std::mt19937_64, bit for bit."""

    def __init__(self, seed):
        self.mt = [seed & MASK64]
        for i in range(1, 312):
            prev = self.mt[-1]
            self.mt.append((6364136223846793005 * (prev ^ (prev >> 62)) + i) & MASK64)
        self.index = 312

    def _twist(self):
        mt = self.mt
        for i in range(312):
            x = (mt[i] & 0xFFFFFFFF80000000) | (mt[(i + 1) % 312] & 0x7FFFFFFF)
            mt[i] = mt[(i + 156) % 312] ^ (x >> 1) ^ (0xB5026F5AA96619E9 if x & 1 else 0)
        self.index = 0

    def __call__(self):
        if self.index >= 312:
            self._twist()
        x = self.mt[self.index]
        self.index += 1
        x ^= (x >> 29) & 0x5555555555555555
        x ^= (x << 17) & 0x71D67FFFEDA60000
        x ^= (x << 37) & 0xFFF7EEE000000000
        x ^= x >> 43
        return x & MASK64


def iid_shard(rows, index, count, seed=42):
    """runtime/partition.cc's SplitIid shard `index` of `count`, sorted."""
    rng = Mt19937_64(seed)
    order = list(range(rows))
    for i in range(rows, 1, -1):
        j = rng() % i
        order[i - 1], order[j] = order[j], order[i - 1]
    begin, end = rows * index // count, rows * (index + 1) // count
    return torch.tensor(sorted(order[begin:end]), dtype=torch.int64)


def _read_idx(path):
    """An IDX file as a uint8 tensor, read into one buffer (no extra copy)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        magic = f.read(4)
        ndim = magic[3]
        dims = struct.unpack(">" + "I" * ndim, f.read(4 * ndim))
        buf = bytearray(math.prod(dims))
        f.readinto(buf)
    return torch.frombuffer(buf, dtype=torch.uint8).reshape(dims)


def load_split(data_dir, split):
    """(images uint8 [n, 28, 28], labels int64 [n]) of 'train' or 't10k'."""
    def path(kind):
        base = os.path.join(data_dir, f"{split}-{kind}")
        return base + ".gz" if os.path.exists(base + ".gz") else base
    images = _read_idx(path("images-idx3-ubyte"))
    labels = _read_idx(path("labels-idx1-ubyte")).to(torch.int64)
    return images, labels


def image_batch(images, rows):
    """Normalised float batch [n, 1, 28, 28] of uint8 `images[rows]`."""
    return ((images[rows].to(torch.float32) / 255.0 - MEAN) / STD).unsqueeze(1)


class LeNet5(nn.Module):
    """runtime/model_zoo.cc's LeNet5."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.flatten(1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def train(net, images, labels, steps, batch_size, lr, momentum, seed):
    """`steps` batches of SGD (epochs re-shuffled); returns (samples, mean loss)."""
    net.train()
    sgd = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum)
    generator = torch.Generator().manual_seed(seed)
    rows = images.shape[0]
    per_epoch = (rows + batch_size - 1) // batch_size
    samples, loss_sum, order = 0, 0.0, None
    for step in range(steps):
        if step % per_epoch == 0:
            order = torch.randperm(rows, generator=generator)
        batch = order[(step % per_epoch) * batch_size:][:batch_size]
        x, y = image_batch(images, batch), labels[batch]
        sgd.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        sgd.step()
        samples += len(batch)
        loss_sum += loss.item() * len(batch)
    return samples, loss_sum / max(samples, 1)


@torch.no_grad()
def evaluate(net, images, labels, batch_size):
    """(mean loss, accuracy) over the whole split."""
    net.eval()
    loss_sum, correct = 0.0, 0
    for begin in range(0, images.shape[0], batch_size):
        rows = torch.arange(begin, min(begin + batch_size, images.shape[0]))
        logits = net(image_batch(images, rows))
        y = labels[rows]
        loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
        correct += int((logits.argmax(1) == y).sum())
    return loss_sum / images.shape[0], correct / images.shape[0]


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
