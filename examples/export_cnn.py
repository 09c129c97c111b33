#!/usr/bin/env python3
"""Exports a small CNN for C x H x W images (batch norm, dropout) as TorchScript.

    /usr/bin/python3 examples/export_cnn.py --channels 3 --size 32 \
        --classes 3 --out cnn.pt

Then: fedberry-server --model=cnn.pt --eval_data=images:photos/test \
          --input_shape=3,32,32 ...
"""
import argparse

import torch
from torch import nn


class SmallCnn(nn.Module):
    def __init__(self, channels: int, classes: int):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(channels, 16, 3, padding=1), nn.BatchNorm2d(16),
            nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1))
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(32, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.features(x), 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", type=int, default=3)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--classes", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="cnn.pt")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    model = SmallCnn(args.channels, args.classes)
    scripted = torch.jit.script(model)
    # The same forward pass fedberry will run: fail here, not on the boards.
    scripted(torch.zeros(2, args.channels, args.size, args.size))
    scripted.save(args.out)
    print(f"saved {args.out}: {sum(p.numel() for p in model.parameters())} "
          f"parameters, input [N, {args.channels}, {args.size}, {args.size}]")


if __name__ == "__main__":
    main()
