#!/usr/bin/python3
"""A PyTorch 2-D convolution (intra-op parallelism through libgomp in libtorch) on fixed inputs: prints a
checksum of each output. Usage: torch_conv.py [STEPS]"""
import sys

import torch

from common import report_runtime

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
torch.manual_seed(0)
x = torch.randn(8, 32, 64, 64)
conv = torch.nn.Conv2d(32, 64, 3, padding=1)
with torch.no_grad():
    for i in range(steps):
        y = conv(x)
        print(i, f"{y.double().sum().item():.12e}", f"{y.abs().max().item():.12e}", flush=True)
        x = torch.tanh(y[:, :32])
report_runtime()
