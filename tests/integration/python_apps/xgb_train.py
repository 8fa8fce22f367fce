#!/usr/bin/python3
"""An XGBoost regression (hist trees, OpenMP through libgomp in libxgboost) on fixed data: prints the
training error of each round and a digest of the predictions. Usage: xgb_train.py [ROUNDS]"""
import hashlib
import sys

import numpy as np
import xgboost as xgb

from common import report_runtime

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
rng = np.random.default_rng(0)
X = rng.normal(size=(50000, 20))
y = 2 * X[:, 0] + np.sin(3 * X[:, 1]) + X[:, 2] * X[:, 3] + rng.normal(scale=0.1, size=len(X))
data = xgb.DMatrix(X, label=y, nthread=2)
history = {}
booster = xgb.train({"tree_method": "hist", "max_depth": 6, "eta": 0.1, "nthread": 2, "seed": 0}, data,
                    num_boost_round=rounds, evals=[(data, "train")], evals_result=history, verbose_eval=False)
for i, rmse in enumerate(history["train"]["rmse"]):
    print(i, f"{rmse:.12e}")
print("predictions", hashlib.sha1(booster.predict(data).tobytes()).hexdigest()[:16], flush=True)
report_runtime()
