"""bfloat16: the dtype, its rounding, parse/print, constant folding, and numbers on the
python, c and llvm backends against a NumPy model of the same rule (every bfloat16
operation computed in float32 and rounded to nearest even), with arrays passed as
uint16 bits (or ml_dtypes.bfloat16 when installed)."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ArgumentError, BuildError
from tilelang.ir import bfloat16 as bf
from tilelang.ir import expr as E
from tilelang.ir import structural_equal
from tilelang.ir.dtype import DataType, DataTypeError

BACKENDS = ["python", "c", "llvm"]

ELEMENTWISE = """
@T.prim_func
def main(A: T.Buffer((4, 8), "bfloat16"), B: T.Buffer((4, 8), "bfloat16"),
         C: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main"})
    tmp = T.alloc_buffer((4, 8), "bfloat16")
    for i, j in T.grid(4, 8):
        with T.block("t"):
            vi, vj = T.axis.remap("SS", [i, j])
            tmp[vi, vj] = A[vi, vj] * T.bfloat16(1.5) + T.Cast("bfloat16", T.float32(0.1))
    for i, j in T.grid(4, 8):
        with T.block("b"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.exp(tmp[vi, vj]) / A[vi, vj]
    for i, j in T.grid(4, 8):
        with T.block("c"):
            vi, vj = T.axis.remap("SR", [i, j])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + T.Cast("float32", B[vi, vj])
"""


def rounded(x):
    """A float32 array rounded to bfloat16 (as float32)."""
    return bf.from_bits(bf.to_bits(np.asarray(x, np.float32)))


def expected_elementwise(a_bits):
    a = bf.from_bits(a_bits)
    tmp = rounded(rounded(a * np.float32(1.5)) + rounded(np.float32(0.1)))
    b = rounded(rounded(np.exp(tmp)) / a)
    return bf.to_bits(b), b.sum(axis=1, dtype=np.float32)


def inputs(shape=(4, 8), seed=0):
    values = np.random.default_rng(seed).uniform(0.5, 2.0, shape).astype(np.float32)
    return bf.to_bits(values)


# ------------------------------------------------------------------ the dtype


def test_dtype_spellings():
    d = DataType("bfloat16")
    assert (d.code, d.bits, d.lanes) == ("bfloat", 16, 1)
    assert d.is_float() and d.is_bfloat16() and not DataType("float16").is_bfloat16()
    assert DataType("bfloat16x8").element_of() == "bfloat16"
    assert d.numpy_name() == "uint16"
    for bad in ("bfloat32", "bfloat", "bfloat16x1"):
        with pytest.raises(DataTypeError):
            DataType(bad)


def test_rounding_to_nearest_even():
    def bits(u32):
        return bf.to_bits(np.array([u32], np.uint32).view(np.float32))[0]

    assert bits(0x3F800000) == 0x3F80  # 1.0 exactly
    assert bits(0x3F808000) == 0x3F80  # halfway, down to the even 0x3F80
    assert bits(0x3F818000) == 0x3F82  # halfway, up to the even 0x3F82
    assert bits(0x3F808001) == 0x3F81  # past halfway
    assert bits(0x7F7FFFFF) == 0x7F80  # float32 max rounds to inf
    assert bits(0xFF800000) == 0xFF80  # -inf stays
    nan = bits(0x7F800001)  # a NaN whose payload is all below the kept bits
    assert nan & 0x7F80 == 0x7F80 and nan & 0x7F
    assert bf.round_value(3.14159) == 3.140625
    assert bf.round_value(-3.38953139e38) == -3.3895313892515355e38
    assert np.array_equal(bf.from_bits([0x3F80, 0xC000]), [1.0, -2.0])


def test_rounding_matches_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    values = np.random.default_rng(1).standard_normal(10000).astype(np.float32) * 1e3
    values[:4] = [np.inf, -np.inf, 3.4e38, -0.0]
    theirs = values.astype(ml_dtypes.bfloat16).view(np.uint16)
    assert np.array_equal(bf.to_bits(values), theirs)


# ------------------------------------------------------------- parse and print


def test_parse_print_round_trip():
    func = tilelang.parse(ELEMENTWISE)["main"]
    text = func.script()
    assert 'A: T.Buffer((4, 8), "bfloat16")' in text
    assert "T.bfloat16(1.5)" in text
    assert structural_equal(tilelang.parse(text)["main"], func, map_free_vars=True)


def test_constant_folding_rounds_each_operation():
    from tilelang.arith import simplify

    cast = simplify(E.Cast("bfloat16", E.FloatImm("float32", 3.14159)))
    assert isinstance(cast, E.FloatImm) and cast.dtype == "bfloat16"
    assert cast.value == 3.140625
    total = simplify(E.FloatImm("bfloat16", 256.0) + E.FloatImm("bfloat16", 1.0))
    assert total.value == 256.0  # 257 is not a bfloat16; the tie goes to the even 256


# ---------------------------------------------------------------- the backends


@pytest.mark.parametrize("target", BACKENDS)
def test_elementwise_and_reduction_numbers(target):
    a = inputs()
    expected_b, expected_c = expected_elementwise(a)
    mod = tilelang.build(tilelang.parse(ELEMENTWISE), target=target)
    b, c = np.zeros((4, 8), np.uint16), np.zeros(4, np.float32)
    mod["main"](a, b, c)
    assert np.array_equal(b, expected_b)
    np.testing.assert_allclose(c, expected_c, rtol=1e-6)


VECTOR = """
@T.prim_func
def main(A: T.Buffer((64,), "bfloat16"), B: T.Buffer((64,), "float32"),
         C: T.Buffer((64,), "bfloat16")):
    T.func_attr({"global_symbol": "main"})
    for i in range(64):
        with T.block("c"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi] * T.Cast("bfloat16", B[vi]) - T.bfloat16(0.3)
"""


@pytest.mark.parametrize("target", BACKENDS)
def test_vectorized_loop(target):
    sch = tilelang.Schedule(tilelang.parse(VECTOR))
    _, inner = sch.split(sch.get_loops("c")[0], [None, 8])
    sch.vectorize(inner)
    a = inputs((64,), seed=2)
    b = np.random.default_rng(3).standard_normal(64).astype(np.float32)
    b[:3] = [np.nan, np.inf, 3.4e38]
    c = np.zeros(64, np.uint16)
    tilelang.build(sch.mod, target=target)["main"](a, b, c)
    expected = rounded(rounded(bf.from_bits(a) * rounded(b)) - rounded(np.float32(0.3)))
    assert np.array_equal(c, bf.to_bits(expected))
    assert np.isnan(bf.from_bits(c[0]))


@pytest.mark.parametrize("target", BACKENDS)
def test_ml_dtypes_arrays(target):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = inputs().view(ml_dtypes.bfloat16)
    b, c = np.zeros((4, 8), ml_dtypes.bfloat16), np.zeros(4, np.float32)
    tilelang.build(tilelang.parse(ELEMENTWISE), target=target)["main"](a, b, c)
    expected_b, _ = expected_elementwise(a.view(np.uint16))
    assert np.array_equal(b.view(np.uint16), expected_b)


def test_wrong_array_dtype_is_a_clear_error():
    mod = tilelang.build(tilelang.parse(ELEMENTWISE), target="python")
    b, c = np.zeros((4, 8), np.uint16), np.zeros(4, np.float32)
    with pytest.raises(ArgumentError, match="bfloat16"):
        mod["main"](np.zeros((4, 8), np.float32), b, c)


def test_lowered_module_keeps_bfloat16():
    text = tilelang.lower(tilelang.parse(ELEMENTWISE)).script()
    assert "bfloat16" in text and "bf16_to_float" not in text


@pytest.mark.parametrize("target", BACKENDS)
def test_scalar_parameter_is_refused(target):
    src = """
@T.prim_func
def main(A: T.Buffer((4,), "bfloat16"), x: T.bfloat16):
    for i in range(4):
        with T.block("a"):
            vi = T.axis.remap("S", [i])
            A[vi] = x
"""
    with pytest.raises(BuildError, match="bfloat16 scalar parameter x"):
        tilelang.build(tilelang.parse(src), target=target)


@pytest.mark.parametrize("target", ["c", "llvm"])
def test_tilec_run_check(tmp_path, capsys, target):
    from tilelang import cli

    path = tmp_path / "bf16.tir"
    path.write_text("from tilelang.script import tir as T\n" + ELEMENTWISE)
    status = cli.main([str(path), "--target", target, "--run", "--check"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "all 3 arrays match the python reference" in out


@pytest.mark.parametrize("vectorize", [False, True])
def test_te_compute_and_nd_arrays(vectorize):
    """TVM's LLVM bfloat16 check, in tilelang's API: a te sum of two bfloat16 vectors,
    tilelang.nd arrays in and out."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from tilelang import te

    a_ph = te.placeholder((32,), dtype="bfloat16", name="A")
    b_ph = te.placeholder((32,), dtype="bfloat16", name="B")
    d_ph = te.compute((32,), lambda x: a_ph[x] + b_ph[x], name="D")
    sch = tilelang.Schedule(te.create_prim_func([a_ph, b_ph, d_ph]))
    if vectorize:
        sch.vectorize(sch.get_loops(sch.get_block("D"))[0])
    rng = np.random.default_rng(4)
    a = rng.random(32).astype(ml_dtypes.bfloat16)
    b = rng.random(32).astype(ml_dtypes.bfloat16)
    d = tilelang.nd.empty((32,), "bfloat16")
    tilelang.build(sch.mod, target="llvm")["main"](tilelang.nd.array(a), tilelang.nd.array(b), d)
    assert d.numpy().dtype == ml_dtypes.bfloat16
    assert np.array_equal(d.numpy().view(np.uint16), (a + b).view(np.uint16))


def test_legalized_function_has_no_bfloat16_left():
    from tilelang.transform.legalize_bf16 import legalize_bf16, uses_bf16

    lowered = tilelang.lower(tilelang.parse(ELEMENTWISE))["main"]
    assert uses_bf16(lowered)
    legal = legalize_bf16(lowered)
    assert not uses_bf16(legal)
    assert [str(b.dtype) for b in legal.buffer_map.values()] == ["uint16", "uint16", "float32"]
    text = legal.script()
    assert "T.bf16_to_float(" in text and "T.float_to_bf16(" in text
    untouched = tilelang.lower(tilelang.parse(ELEMENTWISE.replace("bfloat16", "float32")))
    assert legalize_bf16(untouched["main"]) is untouched["main"]


def test_operand_types_meet_as_in_tvm():
    bf16 = E.Var("a", "bfloat16")
    for other, result in (("int32", "bfloat16"), ("int8", "bfloat16"), ("float16", "float16"),
                          ("float32", "float32"), ("float64", "float64")):  # fmt: skip
        var = E.Var("b", other)
        assert (bf16 + var).dtype == result and (var + bf16).dtype == result
    assert (bf16 * 1.5).dtype == "bfloat16" and (2 * bf16).dtype == "bfloat16"
    vector = E.Broadcast(bf16, 4) + E.Var("i", "int32")
    assert vector.dtype == "bfloat16x4"
