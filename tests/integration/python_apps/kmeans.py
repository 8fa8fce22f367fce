#!/usr/bin/python3
"""scikit-learn's KMeans (Lloyd's algorithm, OpenMP through libgomp in sklearn's compiled modules) on a
fixed data set: prints each fit's inertia and a digest of its labels. Usage: kmeans.py [FITS]"""
import hashlib
import sys

import numpy as np
from sklearn.cluster import KMeans

from common import report_runtime

fits = int(sys.argv[1]) if len(sys.argv) > 1 else 10
X = np.random.default_rng(0).normal(size=(40000, 16))
for i in range(fits):
    km = KMeans(n_clusters=16, n_init=1, max_iter=30, tol=0.0, random_state=i, algorithm="lloyd").fit(X)
    print(i, f"{km.inertia_:.12e}", hashlib.sha1(km.labels_.tobytes()).hexdigest()[:16], flush=True)
report_runtime()
