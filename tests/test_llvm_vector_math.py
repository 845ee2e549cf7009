"""The LLVM backend's inline float32 math kernels (backends/llvm/vector_math.py):
accuracy in ulp against a float64 NumPy reference over a sweep of float32 bit
patterns spanning the whole range (denormals, huge values, both signs) plus the IEEE
special values, in explicitly vectorised code and in loops LLVM's vectoriser widens;
and the absence of per-lane libm calls in the assembly."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import tilelang

#: float32 reference functions computed in float64
_ERF = np.frompyfunc(math.erf, 1, 1)
REFERENCES = {
    "exp": np.exp,
    "exp2": np.exp2,
    "log": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "erf": lambda x: _ERF(x).astype(np.float64),
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
}
MAX_ULP = 2.0  # the documented bound for float32

SPECIALS = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 2.0, 1e-45, -1e-45, 1.1754942e-38,
     1.1754944e-38, 3.4028235e38, -3.4028235e38, 88.72283, 88.72284, 89.0, -87.33654, -103.97,
     -104.0, -150.0, 128.0, 127.99999, -149.0, -126.0, 0.6, -0.6, 0.59999996, 1e-20, 3.9, 4.0,
     4.0000005, 9.0, 20.0, -20.0, 0.8813736, 1e-4],
    "float32",
)  # fmt: skip


def bit_sweep(step: int, seed: int = 0) -> np.ndarray:
    """Every ``step``-th float32 bit pattern (a random start), both signs, all exponents,
    plus the special values, as many as a multiple of 64."""
    start = np.random.default_rng(seed).integers(step)
    bits = np.arange(start, 1 << 32, step, dtype=np.uint64).astype(np.uint32)
    values = np.concatenate([bits.view(np.float32), SPECIALS])
    return np.resize(values, -(-values.size // 64) * 64)


def ulp_error(got: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """|got - reference| in units of the float32 spacing at the rounded reference; 0
    where both are the same special (NaN, inf), inf where only one is."""
    rounded = reference.astype(np.float32)
    spacing = np.spacing(np.minimum(np.abs(rounded), np.float32(3.4028235e38))).astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        error = np.abs(got.astype(np.float64) - reference) / spacing
    same_special = (np.isnan(got) & np.isnan(rounded)) | (
        np.isinf(got) & (got.astype(np.float64) == rounded)
    )
    error[same_special] = 0.0
    error[np.isnan(error) | (np.isnan(got) != np.isnan(rounded))] = np.inf
    return error


def elementwise(fn: str, n: int, vector_lanes: int | None, binary=False):
    """``C[i] = T.fn(A[i])`` (or ``T.fn(A[i], B[i])``) over ``n`` float32 elements,
    its inner loop explicitly vectorised when ``vector_lanes`` is given."""
    args = "A[vi], B[vi]" if binary else "A[vi]"
    src = f"""
@T.prim_func
def f(A: T.Buffer(({n},), "float32"), B: T.Buffer(({n},), "float32"),
      C: T.Buffer(({n},), "float32")):
    T.func_attr({{"tir.noalias": True}})
    for i in range({n}):
        with T.block("C"):
            vi = T.axis.spatial({n}, i)
            C[vi] = T.{fn}({args})
"""
    sch = tilelang.Schedule(tilelang.parse(src))
    if vector_lanes:
        (loop,) = sch.get_loops(sch.get_block("C"))
        _, inner = sch.split(loop, [None, vector_lanes])
        sch.vectorize(inner)
    return tilelang.build(sch.mod, target="llvm")


def run(lib, a, b=None):
    out = np.empty_like(a)
    lib["f"](a, a if b is None else b, out)
    return out


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_float32_accuracy_over_the_range(name):
    x = bit_sweep(step=4099)  # about a million values
    with np.errstate(all="ignore"):
        reference = REFERENCES[name](x.astype(np.float64))
        for lanes in (16, None):  # explicit vectors, and the loop vectoriser
            got = run(elementwise(name, x.size, lanes), x)
            error = ulp_error(got, reference)
            worst = int(np.argmax(error))
            assert error[worst] <= MAX_ULP, (
                f"{name}({x[worst]!r}) = {got[worst]!r}, expected {reference[worst]!r} "
                f"({error[worst]:.2f} ulp, lanes={lanes})"
            )


def test_pow_accuracy_and_special_cases():
    rng = np.random.default_rng(1)
    x = bit_sweep(step=8191, seed=2)
    specials = np.array(
        [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, np.inf, -np.inf, np.nan, 3.0, -3.0, 1e-40,
         -8.0, 1e30, 0.999999, 1.000001],
        "float32",
    )  # fmt: skip
    y_values = np.concatenate([specials, [2.5, -2.5, 1 / 3, 127.0, -149.0, 1e10, 7.0, -7.0]])
    grid_x, grid_y = np.meshgrid(specials, y_values.astype("float32"))
    wide = np.exp(rng.uniform(-3, 3, x.size)).astype("float32") * rng.choice([-1, 1], x.size)
    integers = rng.integers(-40, 40, x.size).astype("float32")
    xs = np.concatenate([x, x, np.abs(x), grid_x.ravel()])
    ys = np.concatenate([wide, integers, rng.uniform(-1, 1, x.size), grid_y.ravel()])
    ys = ys.astype("float32")
    xs, ys = np.resize(xs, -(-xs.size // 64) * 64), np.resize(ys, -(-ys.size // 64) * 64)
    with np.errstate(all="ignore"):
        reference = np.power(xs.astype(np.float64), ys.astype(np.float64))
        for lanes in (16, None):
            got = run(elementwise("pow", xs.size, lanes, binary=True), xs, ys)
            error = ulp_error(got, reference)
            worst = int(np.argmax(error))
            assert error[worst] <= MAX_ULP, (
                f"pow({xs[worst]!r}, {ys[worst]!r}) = {got[worst]!r}, expected "
                f"{reference[worst]!r} ({error[worst]:.2f} ulp, lanes={lanes})"
            )


@pytest.mark.parametrize("name", ["exp", "log", "tanh", "sigmoid", "erf", "pow", "rsqrt"])
@pytest.mark.parametrize("lanes", [16, None])
def test_no_libm_calls_per_lane(name, lanes):
    lib = elementwise(name, 1024, lanes, binary=name == "pow")
    asm = lib.get_source("asm")
    assert not re.findall(r"\bcall\w*\s+\S*(exp|log|tanh|erf|pow|sqrt)", asm)
    assert re.search(r"\b(ymm|zmm|xmm)\d+", asm)  # packed vector code
    if lanes is None:  # the loop vectoriser widened the inlined scalar kernel
        assert "<16 x float>" in lib.get_source("ll") or "<8 x float>" in lib.get_source("ll")


def test_float16_goes_through_the_float32_kernel():
    n = 256
    src = f"""
@T.prim_func
def f(A: T.Buffer(({n},), "float16"), C: T.Buffer(({n},), "float16")):
    for i in range({n}):
        with T.block("C"):
            vi = T.axis.spatial({n}, i)
            C[vi] = T.exp(A[vi])
"""
    lib = tilelang.build(tilelang.parse(src), target="llvm")
    a = np.linspace(-12, 11, n).astype("float16")
    out = np.empty_like(a)
    lib["f"](a, out)
    np.testing.assert_array_equal(out, np.exp(a.astype(np.float64)).astype(np.float16))
