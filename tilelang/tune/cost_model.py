"""A learned cost model: predicts which candidate schedules run fastest.

Trained online from the tuning database -- the features of every measured candidate
(:mod:`tilelang.tune.features`) against its throughput, normalised by the best seen
for the workload (MetaSchedule's target) -- and retrained after each measured batch.
No pretrained weights: a database from an earlier run warm-starts it.

The regressor is LightGBM's gradient-boosted trees. We chose LightGBM over XGBoost
because its CPU wheel is small (3.5 MB against XGBoost's ~300 MB of bundled CUDA
libraries) and it trains the few-hundred-sample problems of tuning in milliseconds.
Without LightGBM installed, a ridge regression on standardised features in NumPy
stands in (a ranker of the same interface, weaker on non-linear effects).
"""

from __future__ import annotations

import math

import numpy as np

#: fewer measured candidates than this: the model does not predict (random order)
MIN_SAMPLES = 8


def _lightgbm():
    try:
        import lightgbm
    except ImportError:
        return None
    return lightgbm


class CostModel:
    """``update(features, latencies)`` then ``predict(features)`` -> scores, higher
    meaning faster. ``backend`` is ``"auto"`` (LightGBM when installed, else NumPy),
    ``"lightgbm"`` or ``"numpy"``."""

    def __init__(self, backend: str = "auto", seed: int = 0):
        if backend not in ("auto", "lightgbm", "numpy"):
            raise ValueError(f"cost model backend must be auto, lightgbm or numpy, not {backend!r}")
        if backend == "lightgbm" and _lightgbm() is None:
            raise ImportError("the lightgbm cost model needs the lightgbm package")
        self.backend = "lightgbm" if backend != "numpy" and _lightgbm() is not None else "numpy"
        self.seed = seed
        self.features: list[np.ndarray] = []
        self.latencies: list[float] = []
        self._model = None

    @property
    def trained(self) -> bool:
        return self._model is not None

    def update(self, features, latencies) -> None:
        """Add measured candidates (failed ones have an infinite latency) and retrain."""
        for f, latency in zip(features, latencies):
            if f is not None:
                self.features.append(np.asarray(f, dtype=np.float64))
                self.latencies.append(float(latency))
        finite = [lat for lat in self.latencies if math.isfinite(lat) and lat > 0]
        if len(finite) < MIN_SAMPLES:
            return
        best = min(finite)
        x = np.stack(self.features)
        # normalised throughput in [0, 1]; a failed candidate counts as 0
        y = np.array(
            [best / lat if math.isfinite(lat) and lat > 0 else 0.0 for lat in self.latencies]
        )
        self._model = self._fit(x, y)

    def _fit(self, x, y):
        if self.backend == "lightgbm":
            lightgbm = _lightgbm()
            params = {
                "objective": "regression", "learning_rate": 0.08, "num_leaves": 15,
                "min_data_in_leaf": 3, "min_data_in_bin": 1, "bagging_fraction": 0.9,
                "bagging_freq": 1, "feature_fraction": 0.9, "seed": self.seed,
                "deterministic": True, "force_row_wise": True, "verbose": -1,
                "num_threads": 1,
            }  # fmt: skip
            data = lightgbm.Dataset(x, y, params={"verbose": -1, "min_data_in_bin": 1})
            return lightgbm.train(params, data, num_boost_round=120)
        return _Ridge.fit(x, y)

    def predict(self, features) -> np.ndarray:
        """Scores for ``features`` (a list of vectors; None for candidates that did
        not lower, scored lowest). Untrained: zeros."""
        scores = np.full(len(features), -np.inf)
        rows = [i for i, f in enumerate(features) if f is not None]
        if not rows:
            return scores
        if self._model is None:
            scores[rows] = 0.0
            return scores
        x = np.stack([np.asarray(features[i], dtype=np.float64) for i in rows])
        scores[rows] = self._model.predict(x)
        return scores


class _Ridge:
    """Ridge regression on standardised features (the NumPy fallback)."""

    def __init__(self, mean, scale, weights, bias):
        self.mean, self.scale, self.weights, self.bias = mean, scale, weights, bias

    @classmethod
    def fit(cls, x, y, alpha: float = 1.0):
        mean, scale = x.mean(axis=0), x.std(axis=0)
        scale[scale == 0] = 1.0
        z = (x - mean) / scale
        bias = y.mean()
        weights = np.linalg.solve(z.T @ z + alpha * np.eye(z.shape[1]), z.T @ (y - bias))
        return cls(mean, scale, weights, bias)

    def predict(self, x):
        return ((x - self.mean) / self.scale) @ self.weights + self.bias


def kendall_tau(a, b) -> float:
    """Kendall's rank correlation of two equally long sequences (ties count as 0)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = len(a)
    if n < 2:
        return 0.0
    da = np.sign(a[:, None] - a[None, :])
    db = np.sign(b[:, None] - b[None, :])
    upper = np.triu_indices(n, 1)
    return float((da[upper] * db[upper]).sum() / len(upper[0]))
