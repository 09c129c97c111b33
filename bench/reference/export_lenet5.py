#!/usr/bin/env python3
"""Exports the built-in LeNet-5 (runtime/model_zoo.cc; common.LeNet5 here) as
TorchScript, for bench/loop_bench --model=lenet5.pt: the same network through
both paths.

    /usr/bin/python3 bench/reference/export_lenet5.py lenet5.pt
"""
import sys

import torch

from common import LeNet5

if __name__ == "__main__":
    torch.manual_seed(1)
    torch.jit.script(LeNet5()).save(sys.argv[1] if len(sys.argv) > 1
                                    else "lenet5.pt")
