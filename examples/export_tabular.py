#!/usr/bin/env python3
"""Exports a small classifier for rows of numeric features as TorchScript.

    /usr/bin/python3 examples/export_tabular.py --features 8 --classes 3 \
        --out tabular.pt

The server ships the file to every board (fedberry-server --model=tabular.pt);
boards train it on their own CSV rows. torch.jit.script keeps the Python
control flow and train/eval behaviour (dropout here), unlike torch.jit.trace.
"""
import argparse

import torch
from torch import nn


class TabularNet(nn.Module):
    def __init__(self, features: int, classes: int, hidden: int = 32):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(features, hidden), nn.ReLU(), nn.Dropout(0.1),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class TabularRegressor(nn.Module):
    """One float target per row; trained with --task=regression --loss=mse."""

    def __init__(self, features: int, hidden: int = 32):
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", type=int, required=True)
    parser.add_argument("--classes", type=int, default=3,
                        help="classes; 0 exports a regressor")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="tabular.pt")
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    model = (TabularNet(args.features, args.classes) if args.classes > 0
             else TabularRegressor(args.features))
    torch.jit.script(model).save(args.out)
    print(f"saved {args.out}: {sum(p.numel() for p in model.parameters())} "
          f"parameters, input [N, {args.features}]")


if __name__ == "__main__":
    main()
