"""verify_lowered: IR that breaks docs/lowered_ir.md is a BuildError before any backend
runs (multi-dimensional accesses, leftover blocks, missing attributes, unflat buffers),
for every backend, through tilelang.build, the backends' own entry points and tilec."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import attrs
import pytest

import tilelang
from tilelang import BuildError
from tilelang.ir import BufferStore, For, PrimFunc, Var, decl_buffer
from tilelang.runtime import registry
from tilelang.transform import PassContext
from tilelang.transform.verify_lowered import verify_lowered

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
MM_RELU = (SAMPLES / "mm_relu.tir").read_text()
BACKENDS = ["c", "llvm", "python"]


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


def lowered_without(pass_name: str):
    """mm_relu lowered with one pass disabled (still marked ``tl.lowered``)."""
    with PassContext(disabled_pass=[pass_name]):
        return tilelang.lower(tilelang.parse(MM_RELU))


def flat_copy(**overrides):
    """B[i] = A[i] over 8 elements, lowered by hand; ``overrides`` replace attrs."""
    params = [Var("a", "handle"), Var("b", "handle")]
    A, B = decl_buffer((8,), "float32", "A"), decl_buffer((8,), "float32", "B")
    i = Var("i")
    body = For(i, 0, 8, "serial", BufferStore(B, A[i], (i,)))
    func_attrs = {"global_symbol": "copy", "tl.size_vars": (), "tl.lowered": True}
    func_attrs.update(overrides)
    func_attrs = {k: v for k, v in func_attrs.items() if v is not None}
    return PrimFunc(tuple(params), body, buffer_map=dict(zip(params, (A, B))), attrs=func_attrs)


@pytest.mark.parametrize("target", BACKENDS)
def test_multi_dimensional_access_is_rejected_before_the_backend(target):
    mod = lowered_without("FlattenBuffer")
    with pytest.raises(BuildError) as info:
        tilelang.build(mod, target=target)
    message = str(info.value)
    assert message.startswith("function 'mm_relu' is not lowered: an access to buffer Y has 2")
    assert f"The {target} backend needs" in message and "FlattenBuffer" in message
    assert message.endswith("at: Y[i, j] = T.float32(0)")


@pytest.mark.parametrize("target", BACKENDS)
def test_leftover_block_is_rejected_before_the_backend(target):
    mod = lowered_without("LowerOpaqueBlock")
    with pytest.raises(BuildError) as info:
        tilelang.build(mod, target=target)
    message = str(info.value)
    assert "function 'mm_relu' is not lowered: block 'root' is left in the body" in message
    assert "LowerOpaqueBlock" in message and message.endswith('at: with T.block("root"): ...')


@pytest.mark.parametrize("target", BACKENDS)
def test_hand_lowered_function_builds_and_runs(target):
    import numpy as np

    a = np.arange(8, dtype="float32")
    b = np.zeros(8, dtype="float32")
    tilelang.build(flat_copy(), target=target)["copy"](a, b)
    np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize(
    "overrides, reason",
    [
        ({"tl.lowered": None}, 'no attribute "tl.lowered"'),
        ({"global_symbol": None}, 'no string attribute "global_symbol"'),
        ({"tl.size_vars": None}, 'no attribute "tl.size_vars"'),
    ],
)
def test_missing_attributes_are_named(overrides, reason):
    with pytest.raises(BuildError, match=reason):
        verify_lowered(flat_copy(**overrides))


def test_unflat_buffer_and_bare_allocation_are_named():
    func = flat_copy()
    store = func.body.body
    A2 = decl_buffer((2, 4), "float32", "A2")
    one_index_into_2d = attrs.evolve(store, value=tilelang.ir.BufferLoad(A2, (func.body.loop_var,)))
    with pytest.raises(BuildError, match=r"buffer A2 is accessed but is not flat \(shape"):
        verify_lowered(func.with_body(attrs.evolve(func.body, body=one_index_into_2d)))
    storage = Var("tmp", "handle")
    bare = tilelang.ir.Allocate(storage, "float32", (8,), True, func.body)
    with pytest.raises(BuildError, match="allocation of tmp does not declare its flat buffer"):
        verify_lowered(func.with_body(bare))


def test_backend_is_not_called_with_unlowered_ir():
    calls = []

    def recording_backend(mod, target):
        calls.append(mod)
        raise AssertionError("the backend must not see unlowered IR")

    registry.register_backend("verify_probe", recording_backend)
    try:
        with pytest.raises(BuildError, match="The verify_probe backend needs"):
            tilelang.build(lowered_without("FlattenBuffer"), target="verify_probe")
    finally:
        registry._REGISTERED.pop("verify_probe", None)
    assert calls == []


def test_backend_entry_points_share_the_check():
    from tilelang.backends.c import generate_c
    from tilelang.backends.llvm import generate_ir
    from tilelang.backends.llvm.options import options_from_target
    from tilelang.backends.python import codegen

    from tilelang.target import Target

    mod = lowered_without("FlattenBuffer")
    for call in (
        lambda: codegen(mod),
        lambda: generate_c(mod, Target("c")),
        lambda: generate_ir(mod, options_from_target(Target("llvm"))),
    ):
        with pytest.raises(BuildError, match="an access to buffer Y has 2 indices"):
            call()


def test_every_lowered_sample_passes():
    for path in sorted(SAMPLES.glob("*.tir")):
        verify_lowered(tilelang.lower(tilelang.parse(path.read_text(), path.name)))


@pytest.mark.parametrize("target", BACKENDS)
def test_tilec_disable_flatten_buffer_is_a_clean_error(target):
    result = subprocess.run(
        [sys.executable, "-m", "tilelang.cli", str(SAMPLES / "mm_relu.tir"), "--run"]
        + ["--target", target, "--disable-pass", "FlattenBuffer"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("error: function 'mm_relu' is not lowered")
    assert "Traceback" not in result.stderr
