#!/usr/bin/env python3
"""Exports the built-in LeNet-5 (runtime/model_zoo.cc) as TorchScript, for
bench/loop_bench --model=lenet5.pt: the same network through both paths."""
import sys

import torch
from torch import nn
import torch.nn.functional as F


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


if __name__ == "__main__":
    torch.manual_seed(1)
    torch.jit.script(LeNet5()).save(sys.argv[1] if len(sys.argv) > 1
                                    else "lenet5.pt")
