"""The CUDA tuning space (tilelang.tune.space_cuda) without a GPU: candidates drawn
from it build with nvcc, keep ptxas free of spills, stay within the target's limits
and compute NumPy's results on the C backend; ``space="auto"`` picks it for cuda;
tuning itself needs a GPU and says so. The GPU run is marked ``gpu``."""

from __future__ import annotations

import random
import re
import shutil

import numpy as np
import pytest

import tilelang
from tilelang.errors import BuildError, ScheduleError
from tilelang.target import Target
from tilelang.testing import default_workloads as W
from tilelang.tune.space import apply_space, mutate, resolve_space
from tilelang.tune.space_cuda import cuda_space

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
TARGET = "cuda -arch=sm_90"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


def _has_gpu() -> bool:
    from tilelang.backends.cuda import available_launchers

    return bool(available_launchers())


def draw(workload, count, target=TARGET, seeds=range(1, 200)):
    """Up to ``count`` candidates of the space (draws the space rejects are skipped,
    as the tuner skips them)."""
    mod, space, found = tilelang.parse(workload.tir), cuda_space(Target(target)), []
    for seed in seeds:
        try:
            found.append(apply_space(mod, space, seed))
        except ScheduleError:
            continue
        if len(found) == count:
            break
    return found


def run_on_c(mod, workload):
    args = workload.arguments()
    out = np.zeros_like(args[-1])
    tilelang.build(mod, target="c", auto_schedule=False)[workload.name](*args[:-1], out)
    return out, workload.reference(*args[:-1])


@pytest.mark.parametrize(
    "workload",
    [
        W.matmul(64, 64, 32),
        W.batch_matmul(2, 32, 32, 16),
        W.softmax(8, 256),
        W.matmul(32, 32, 32, relu=True),
    ],
    ids=["matmul", "batch_matmul", "softmax", "mm_relu"],
)
def test_candidates_compute_the_workload_on_the_c_backend(workload):
    candidates = draw(workload, 4)
    assert len(candidates) == 4
    for sch in candidates:
        got, want = run_on_c(sch.mod, workload)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_matmul_candidates_build_with_nvcc_and_no_spills():
    from tilelang.backends.cuda import compile_cuda, nvcc_flags

    for sch in draw(W.matmul(256, 256, 256), 3):
        trace = str(sch.trace)
        assert "sample_perfect_tile" in trace and 'storage_scope="shared"' in trace
        lib = tilelang.build(sch.mod, TARGET, auto_schedule=False)
        assert lib.backend_module.compile_log == ""
        source = lib.get_source()
        assert "__shared__" in source and "__syncthreads();" in source
        (kernel,) = lib.backend_module.source.functions["matmul"].kernels
        assert 16 <= kernel.threads <= 1024
        log = compile_cuda(source, [*nvcc_flags(Target(TARGET)), "-Xptxas", "-v"]).log
        assert "0 bytes spill stores, 0 bytes spill loads" in log
        registers = int(re.search(r"Used (\d+) registers", log).group(1))
        assert registers * kernel.threads <= 65536


def test_row_reductions_draw_their_thread_count_and_build():
    """softmax's row max and row sum over a sampled number of threads (a predicated
    split when it does not divide the row), lowered to warp-shuffle allreduces, in the
    thread blocks of the normalisation that reads them (one kernel)."""
    workload = W.softmax(8, 200)
    counts = set()
    for sch in draw(workload, 6):
        lib = tilelang.build(sch.mod, TARGET, auto_schedule=False)
        assert lib.backend_module.compile_log == ""
        found = re.findall(r"tl_block_allreduce<(\d+)>\(", lib.get_source())
        assert len(found) == 2 and found[0] == found[1]  # the row max and the row sum
        (kernel,) = lib.backend_module.source.functions["softmax"].kernels  # a row kernel
        counts |= {int(n) for n in found}
        got, want = run_on_c(sch.mod, workload)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert len(counts) > 1 and counts <= {32, 64, 128, 256, 512}


def test_candidates_compute_on_the_threaded_host_emulation(tmp_path):
    """Drawn candidates as printed (multi-level tiling with cooperative shared-memory
    fetches, sampled thread counts of the allreduces), each thread of a block a host
    thread (tilelang.testing.cuda_emulation), against NumPy."""
    from tilelang.testing.cuda_emulation import HostProgram, host_compiler

    if host_compiler() is None:
        pytest.skip("needs a host C++ compiler")
    funcs, expected = {}, {}
    for workload in (W.matmul(64, 64, 32), W.softmax(8, 200)):
        for i, sch in enumerate(draw(workload, 3)):
            name = f"{workload.name}{i}"
            funcs[name] = sch.mod[workload.name].with_attr("global_symbol", name)
            expected[name] = workload
    lib = tilelang.build(tilelang.IRModule(funcs), TARGET, auto_schedule=False)
    program = HostProgram(lib, tmp_path)
    for name, workload in expected.items():
        args = workload.arguments()
        out = np.zeros_like(args[-1])
        program.run(name, [*args[:-1], out])
        np.testing.assert_allclose(
            out, workload.reference(*args[:-1]), rtol=1e-4, atol=1e-4, err_msg=name
        )


def test_candidates_respect_the_targets_limits():
    small = "cuda -arch=sm_80 -max_threads_per_block=128 -max_shared_memory_per_block=4096"
    for sch in draw(W.matmul(128, 128, 128), 4, target=small):
        lib = tilelang.build(sch.mod, small, auto_schedule=False)
        (kernel,) = lib.backend_module.source.functions["matmul"].kernels
        assert kernel.threads <= 128
        declared = r"__shared__ (?:__align__\(16\) )?float \w+\[(\d+)\];"
        shared = re.findall(declared, lib.get_source())
        assert sum(int(n) * 4 for n in shared) <= 4096


def test_mutation_keeps_all_but_one_decision():
    workload = W.matmul(64, 64, 64)
    mod, space = tilelang.parse(workload.tir), cuda_space(TARGET)
    (parent,) = draw(workload, 1)
    rng, children = random.Random(0), []
    for _ in range(20):
        try:
            children.append(mutate(mod, space, parent.trace, rng))
        except ScheduleError:
            continue
    assert children
    got, want = run_on_c(children[0].mod, workload)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_auto_space_follows_the_target():
    assert resolve_space("auto", TARGET).__name__ == "cuda_space"
    from tilelang.tune.space_rules import RulesOrGenericSpace

    assert isinstance(resolve_space("auto", "llvm"), RulesOrGenericSpace)
    assert isinstance(resolve_space("auto"), RulesOrGenericSpace)
    assert resolve_space("generic", "llvm").__name__ == "generic_space"


@pytest.mark.skipif("_has_gpu()")
def test_tuning_for_cuda_without_a_gpu_is_a_clear_error(tmp_path, capsys):
    mod = tilelang.parse(W.matmul(64, 64, 64).tir)
    with pytest.raises(BuildError, match="no GPU"):
        tilelang.tune.tune_tir(mod, TARGET, max_trials=2, progress=False)
    from tilelang.cli import main

    path = tmp_path / "mm.tir"
    path.write_text(W.matmul(64, 64, 64).tir)
    assert main([str(path), "--tune", "2", "--target", TARGET, "--emit", "cuda"]) != 0
    err = capsys.readouterr().err
    assert "no GPU" in err and "Traceback" not in err


@pytest.mark.gpu
def test_tuning_on_the_gpu(tmp_path):
    from tilelang.tune import compile_tir, tune_tir

    workload = W.matmul(256, 256, 256)
    mod = tilelang.parse(workload.tir)
    db = tune_tir(mod, TARGET, max_trials=8, work_dir=tmp_path, progress=False)
    lib = tilelang.build(compile_tir(db, mod, TARGET), TARGET)
    args = workload.arguments()
    out = np.zeros_like(args[-1])
    lib["matmul"](*args[:-1], out)
    np.testing.assert_allclose(out, workload.reference(*args[:-1]), rtol=1e-4, atol=1e-4)
