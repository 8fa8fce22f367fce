#!/usr/bin/python3
"""NumPy matrix products on OpenBLAS's OpenMP build (libopenblas0-openmp: libgomp through libblas.so.3):
prints a checksum of each product. Usage: numpy_matmul.py [PRODUCTS]"""
import sys

import numpy as np

from common import report_runtime

products = int(sys.argv[1]) if len(sys.argv) > 1 else 10
rng = np.random.default_rng(0)
a = rng.standard_normal((1000, 1000))
b = rng.standard_normal((1000, 1000))
for i in range(products):
    c = a @ b
    print(i, f"{c.sum():.12e}", f"{np.abs(c).max():.12e}", flush=True)
    b = np.tanh(c) / 32.0
report_runtime()
