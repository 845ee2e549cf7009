"""The learned cost model: features of lowered candidates, ranking held-back
measurements, and the tuner guided by it.

tests/data/tune_matmul256_llvm.jsonl holds 96 measured candidates of the generic
space on the 256^3 matmul (llvm, one core), recorded by::

    tune_tir(matmul(256), "llvm -num-cores=1", max_trials=96, cost_model=None, seed=1,
             work_dir=...)
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang.testing.workloads import matmul
from tilelang.tune import tune_tir
from tilelang.tune.cost_model import MIN_SAMPLES, CostModel, kendall_tau
from tilelang.tune.database import TuningRecord
from tilelang.tune.features import FEATURE_NAMES, candidate_features, extract_features
from tilelang.tune.trace_json import replay

DATA = Path(__file__).parent / "data" / "tune_matmul256_llvm.jsonl"


@pytest.fixture(scope="module")
def measured():
    """(features, latency) of every valid recorded candidate, in record order."""
    mod = matmul(256)
    rows = []
    for line in DATA.read_text().splitlines():
        record = TuningRecord.from_json(json.loads(line))
        if math.isfinite(record.latency):
            text = replay(mod, record.as_trace()).mod.script()
            rows.append((candidate_features(text), record.latency))
    return rows


def test_features_have_the_documented_length_and_see_the_schedule():
    mod = matmul(64)
    naive = extract_features(next(iter(tilelang.lower(mod).functions.values())))
    assert naive.shape == (len(FEATURE_NAMES),)
    sch = tilelang.Schedule(mod)
    i, j, k = sch.get_loops(sch.get_block("C"))
    j0, j1 = sch.split(j, factors=[None, 16])
    sch.reorder(i, j0, k, j1)
    sch.vectorize(j1)
    sch.parallel(i)
    tiled = extract_features(next(iter(tilelang.lower(sch.mod).functions.values())))
    named = dict(zip(FEATURE_NAMES, tiled))
    assert named["inner_vectorized"] == 1 and named["inner_serial"] == 0
    assert named["parallel"] == pytest.approx(math.log2(65))
    assert named["stride_unit"] >= 2  # C and B walk unit-stride along j1; A is invariant
    assert named["stride_invariant"] >= 1
    assert dict(zip(FEATURE_NAMES, naive))["stride_other"] >= 1  # B[k, j] along k


@pytest.mark.parametrize("backend", ["lightgbm", "numpy"])
def test_model_ranks_held_back_candidates_better_than_chance(measured, backend):
    if backend == "lightgbm":
        pytest.importorskip("lightgbm")
    order = np.random.default_rng(0).permutation(len(measured))
    train, test = order[:60], order[60:]
    model = CostModel(backend, seed=0)
    model.update([measured[i][0] for i in train], [measured[i][1] for i in train])
    scores = model.predict([measured[i][0] for i in test])
    tau = kendall_tau(scores, [-measured[i][1] for i in test])
    assert tau > (0.3 if backend == "lightgbm" else 0.15), tau


def test_model_waits_for_enough_samples_and_scores_unlowerable_last(measured):
    model = CostModel("numpy")
    model.update(
        [f for f, _ in measured[: MIN_SAMPLES - 1]], [t for _, t in measured[: MIN_SAMPLES - 1]]
    )
    assert not model.trained
    assert list(model.predict([measured[0][0], None])) == [0.0, -np.inf]
    model.update([f for f, _ in measured[MIN_SAMPLES:]], [t for _, t in measured[MIN_SAMPLES:]])
    assert model.trained and model.predict([None])[0] == -np.inf


def test_kendall_tau():
    assert kendall_tau([1, 2, 3], [10, 20, 30]) == 1.0
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == -1.0
    assert kendall_tau([1, 2, 3, 4], [1, 2, 4, 3]) == pytest.approx(4 / 6)


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="cost model backend"):
        CostModel("xgboost")


def test_guided_tuning_measures_model_ranked_candidates(tmp_path):
    """After the first batch trains the model, batches are drawn from pools 4x their
    size and scored; the result is a valid tuned kernel; a later run warm-starts the
    model from the database."""
    mod = matmul(64)
    model = CostModel("numpy")
    db = tune_tir(mod, "llvm", max_trials=16, num_trials_per_iter=8, work_dir=tmp_path,
                  cost_model=model, pool_factor=4, progress=False, seed=3)  # fmt: skip
    assert model.trained and len(model.latencies) == len(model.features) == 16
    scheduled = tilelang.tune.compile_tir(db, mod, "llvm")
    lib = tilelang.build(scheduled, "llvm")
    a, b = (np.random.rand(64, 64).astype("float32") for _ in range(2))
    c = np.zeros((64, 64), "float32")
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    again = CostModel("numpy")
    tune_tir(mod, "llvm", max_trials=20, num_trials_per_iter=4, work_dir=tmp_path,
             cost_model=again, pool_factor=2, progress=False)  # fmt: skip
    assert len(again.latencies) == 20  # 16 from the database, 4 measured
