"""The default CPU schedule rules (tilelang/schedule/rules): what they decide (golden
traces), that the result computes what the program computes (NumPy, the python
reference backend), that user schedules are left alone, and that a refused primitive
makes them fall back instead of failing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir.structural import structural_equal
from tilelang.schedule import Schedule
from tilelang.schedule.rules import Machine, default_schedule, is_user_scheduled
from tilelang.testing import default_workloads as W

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
AVX512 = Machine(512, 32)  # fixed, so the golden traces do not depend on the host


def _trace_text(workload) -> str:
    sch = default_schedule(tilelang.parse(workload.tir), AVX512)
    return str(sch.trace)


def _empty(trace) -> bool:
    return not trace.insts


@pytest.mark.parametrize(
    "workload",
    [W.matmul(), W.conv2d(), W.softmax(), W.matmul(128, 128, 128, relu=True)],
    ids=["matmul", "conv2d", "softmax", "mm_relu"],
)
def test_rules_decisions_golden(workload, golden):
    golden(_trace_text(workload))


def test_trace_replays_to_the_same_module():
    mod = tilelang.parse(W.conv2d(8, 8, 10, 10).tir)
    sch = default_schedule(mod, AVX512)
    replay = Schedule(mod)
    sch.trace.apply_to_schedule(replay)
    assert structural_equal(replay.mod, sch.mod)


SMALL = W.all_workloads(scale=0.125)


@pytest.mark.parametrize("workload", SMALL, ids=[w.name for w in SMALL])
@pytest.mark.parametrize("target", ["llvm", "c"])
def test_workloads_compute_the_same_with_the_rules(workload, target):
    mod = tilelang.parse(workload.tir)
    lib = tilelang.build(mod, target)
    assert lib.trace is not None and len(str(lib.trace).splitlines()) > 2, "rules did nothing"
    args = workload.arguments(seed=1)
    lib[workload.name](*args)
    np.testing.assert_allclose(args[-1], workload.reference(*args[:-1]), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("workload", SMALL, ids=[w.name for w in SMALL])
def test_scheduled_ir_agrees_on_the_reference_backend(workload):
    """The scheduled IR itself, run by the python backend, equals the program."""
    mod = tilelang.parse(workload.tir)
    scheduled = default_schedule(mod).mod
    want, got = workload.arguments(seed=2), workload.arguments(seed=2)
    tilelang.build(mod, "python")[workload.name](*want)
    tilelang.build(scheduled, "python")[workload.name](*got)
    np.testing.assert_allclose(got[-1], want[-1], rtol=1e-5, atol=1e-5)


TIR_SAMPLES = sorted(p for p in SAMPLES.rglob("*.tir") if "gpu" not in p.name)


@pytest.mark.parametrize("path", TIR_SAMPLES, ids=lambda p: p.name)
def test_samples_schedule_consistently(path):
    """Every sample: the rules either leave a function alone or rewrite it into IR the
    python backend runs to the same result (checked for functions of static shape)."""
    mod = tilelang.parse_file(path)
    sch = default_schedule(mod)
    rng = np.random.default_rng(0)
    for name, func in mod.functions.items():
        if not isinstance(func, tilelang.PrimFunc) or name not in sch.mod.functions:
            continue
        after = sch.mod[name]
        if is_user_scheduled(func):
            assert after is func, f"{name}: a scheduled function was changed"
            continue
        buffers = [func.buffer_map.get(p) for p in func.params]
        if any(b is None for b in buffers):
            continue
        shapes = [
            tuple(int(d.value) for d in b.shape)
            if all(hasattr(d, "value") for d in b.shape)
            else None
            for b in buffers
        ]
        if any(s is None for s in shapes) or any(not b.dtype.is_float() for b in buffers):
            continue
        arrays = [rng.standard_normal(s).astype(str(b.dtype)) for s, b in zip(shapes, buffers)]
        want, got = [a.copy() for a in arrays], [a.copy() for a in arrays]
        tilelang.build(tilelang.IRModule({name: func}), "python")[name](*want)
        tilelang.build(tilelang.IRModule({name: after}), "python")[name](*got)
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_differential_programs_keep_their_results():
    """Random programs of the differential tests, scheduled by the rules, run on the
    python backend: same results as unscheduled."""
    from hypothesis import HealthCheck, given, settings

    from tilelang.testing.strategies import program_cases

    scheduled = []

    @settings(
        max_examples=25,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(case=program_cases())
    def check(case):
        mod = tilelang.IRModule({"f": case.func.with_attr("global_symbol", "f")})
        sch = default_schedule(mod)
        if sch.mod["f"] is not mod["f"]:
            scheduled.append(1)
        want = case.make_arguments(seed=0)
        got = [a.copy() for a in want]
        tilelang.build(mod, "python")["f"](*want)
        tilelang.build(sch.mod, "python")["f"](*got)
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)

    check()


def test_user_schedules_are_never_overridden():
    mod = tilelang.parse_file(SAMPLES / "mm_relu_scheduled.tir")
    assert all(is_user_scheduled(f) for _, f in mod.functions.items())
    sch = default_schedule(mod)
    assert sch.mod is mod or all(sch.mod[n] is f for n, f in mod.functions.items())
    assert _empty(sch.trace)

    # a split alone (serial loops, no annotation) is a schedule too
    plain = tilelang.parse_file(SAMPLES / "mm_relu.tir")
    user = Schedule(plain)
    i, _, _ = user.get_loops(user.get_block("Y", func_name="mm_relu"))
    user.split(i, [None, 4])
    assert is_user_scheduled(user.mod["mm_relu"])
    # ... and so is a reorder
    user = Schedule(plain)
    i, j, k = user.get_loops(user.get_block("Y", func_name="mm_relu"))
    user.reorder(k, i, j)
    assert is_user_scheduled(user.mod["mm_relu"])
    lib = tilelang.build(user.mod, "llvm")
    assert _empty(lib.trace)


def test_auto_schedule_false_builds_as_written():
    mod = tilelang.parse_file(SAMPLES / "mm_relu.tir")
    lib = tilelang.build(mod, "llvm", auto_schedule=False)
    assert lib.trace is None
    assert "T.vectorized" not in lib.ir_module.script()
    assert "T.vectorized" in tilelang.build(mod, "llvm").ir_module.script()


def test_python_target_runs_the_program_as_written():
    mod = tilelang.parse_file(SAMPLES / "mm_relu.tir")
    lib = tilelang.build(mod, "python")
    assert _empty(lib.trace)


def test_refused_primitive_falls_back(monkeypatch):
    """When cache_write refuses, the tiling plan is dropped and a simpler one runs; the
    result still computes the matmul."""

    def refuse(self, *args, **kwargs):
        raise ScheduleError("cache_write: refused by the test")

    monkeypatch.setattr(Schedule, "cache_write", refuse)
    workload = W.matmul(64, 64, 64, relu=True)
    mod = tilelang.parse(workload.tir)
    sch = default_schedule(mod, AVX512)
    assert "cache_write" not in str(sch.trace)
    args = workload.arguments()
    tilelang.build(sch.mod, "llvm", auto_schedule=False)[workload.name](*args)
    np.testing.assert_allclose(args[-1], workload.reference(*args[:-1]), rtol=1e-4, atol=1e-4)


def test_graph_build_schedules_each_prim_func():
    from tilelang import relax

    sys.path.insert(0, str(SAMPLES))
    import mlp

    data, weights = mlp.load_image(), mlp.make_weights()
    bound = relax.bind_params(mlp.mlp_module("linear0"), weights)
    ex = relax.build(bound, target="llvm")
    out = relax.VirtualMachine(ex, tilelang.cpu())["main"](data).numpy()
    np.testing.assert_allclose(out, mlp.numpy_mlp(data, **weights), rtol=1e-4, atol=1e-4)
    assert ex.trace is not None
    plain = relax.build(bound, target="llvm", auto_schedule=False)
    assert plain.trace is None


def test_tilec_emits_the_trace_and_honours_no_auto_schedule(tmp_path):
    sample = str(SAMPLES / "mm_relu.tir")
    trace = subprocess.run(
        [sys.executable, "-m", "tilelang.cli", sample, "--emit", "trace"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert trace.returncode == 0, trace.stderr
    assert "cache_write" in trace.stdout and "vectorize" in trace.stdout
    lowered = subprocess.run(
        [sys.executable, "-m", "tilelang.cli", sample, "--emit", "lowered"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    plain = subprocess.run(
        [sys.executable, "-m", "tilelang.cli", sample, "--emit", "lowered", "--no-auto-schedule"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "T.vectorized" in lowered.stdout
    assert plain.returncode == 0 and "T.vectorized" not in plain.stdout
