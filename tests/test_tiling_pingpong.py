"""The 4-D tiled load/store with a ping-pong channel split (the tiling notes' LINQ
example), written as a comprehension.

Input (N, C, H, W), tiles of (1, 4, 4, 5), an operation with strides (1, 1, 2, 2): for
each input tile, the output tile is given by ``output_by_stride``; each channel tile is
split into two halves that alternate between two scratch slots (ping and pong). A
``load`` instruction copies the strided input sub-tensor into a scratch slot, a
``store`` copies the slot into the output sub-tensor, so the whole program computes
``output = input[:, :, ::2, ::2]``.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_sample

from tilelang.ir import IntImm, SizeVar
from tilelang.tiling import instructions, make_prim_func

sample = load_sample("tiling_pingpong")
LOAD, STORE, OP_STRIDES, TILE = sample.LOAD, sample.STORE, sample.OP_STRIDES, sample.TILE
INSTRUCTION_LIBRARY, pingpong_program = sample.INSTRUCTION_LIBRARY, sample.pingpong_program


def expected_instructions(shape, tile=TILE, op_strides=OP_STRIDES):
    """The load/store list worked out with plain integer arithmetic."""
    n_, c_, h_, w_ = shape
    _, _, sh, sw = op_strides
    oshape = (n_, c_, -(-h_ // sh), -(-w_ // sw))
    in_strides = (c_ * h_ * w_, h_ * w_, w_, 1)
    out_strides = (oshape[1] * oshape[2] * oshape[3], oshape[2] * oshape[3], oshape[3], 1)
    result = []
    for n0 in range(0, n_, tile[0]):
        for c0 in range(0, c_, tile[1]):
            for h0 in range(0, h_, tile[2]):
                for w0 in range(0, w_, tile[3]):
                    n1, c1 = min(n0 + tile[0], n_), min(c0 + tile[1], c_)
                    h1, w1 = min(h0 + tile[2], h_), min(w0 + tile[3], w_)
                    oh0, oh1 = -(-h0 // sh), -(-h1 // sh)
                    ow0, ow1 = -(-w0 // sw), -(-w1 // sw)
                    half = tile[1] // 2
                    for slot, p0 in enumerate(range(c0, c1, half)):
                        p1 = min(p0 + half, c1)
                        sub = (n1 - n0, p1 - p0, oh1 - oh0, ow1 - ow0)
                        src = (n0, p0, oh0 * sh, ow0 * sw)
                        dst = (n0, p0, oh0, ow0)
                        load_addr = sum(i * s for i, s in zip(src, in_strides))
                        load_strides = (in_strides[0], in_strides[1], sh * w_, sw)
                        store_addr = sum(i * s for i, s in zip(dst, out_strides))
                        result.append(("tl_load", load_addr, sub, load_strides, slot))
                        result.append(("tl_store", store_addr, sub, out_strides, slot))
    return result


def as_tuples(found):
    rows = []
    for ins in found:
        view = ins["src"] if ins.name == "tl_load" else ins["dst"]
        rows.append((ins.name, view.addr, view.shape, view.strides, ins["slot"]))
    return rows


def test_concrete_instruction_list():
    inp, out, body = pingpong_program((1, 10, 7, 5))
    found = instructions(body, LOAD, STORE)
    assert as_tuples(found) == expected_instructions((1, 10, 7, 5))
    # c tiles [0,4) [4,8) [8,10) split into 2 + 2 + 1 halves, h tiles [0,4) [4,7)
    assert len(found) == 2 * (2 + 2 + 1) * 2
    assert out.shape == (1, 10, 4, 3)
    # loads read the input, stores write the output
    assert all(ins["src"].data is inp.buffer.data for ins in found[0::2])
    assert all(ins["dst"].data is out.buffer.data for ins in found[1::2])


@pytest.mark.parametrize("shape", [(2, 7, 9, 11), (1, 3, 1, 1), (3, 8, 8, 10)])
def test_concrete_instruction_list_other_shapes(shape):
    _, _, body = pingpong_program(shape)
    assert as_tuples(instructions(body, LOAD, STORE)) == expected_instructions(shape)


def test_concrete_program_is_straight_line():
    """Concrete sizes unroll at build time: no loop is left."""
    _, _, body = pingpong_program((1, 10, 7, 5))
    assert all(type(s).__name__ == "Evaluate" for s in body.seq)


def test_symbolic_program_has_real_loops():
    shape = tuple(SizeVar(x) for x in "NCHW")
    inp, out, body = pingpong_program(shape)
    loops = []
    stmt = body
    while type(stmt).__name__ in ("For", "LetStmt"):
        if type(stmt).__name__ == "For":
            loops.append(stmt)
        stmt = stmt.body
    # n, c, h, w are strided loops; the ping-pong loop sits inside them
    assert [v.loop_var.name for v in loops] == ["n", "c", "h", "w", "pp"]
    # a chunk of 1 is a plain loop; the others step by their chunk
    assert [None if v.step is None else v.step.value for v in loops] == [None, 4, 4, 5, 2]
    assert loops[1].extent is shape[1]
    assert isinstance(loops[0].min, IntImm) and loops[0].min.value == 0
    func = make_prim_func(body, [inp, out], "pingpong")
    assert [p.name for p in func.params] == ["input", "output"]


def test_symbolic_program_prints_and_parses_back(golden):
    import tilelang
    from tilelang.ir import Var, assert_structural_equal

    # plain Vars: the text spelling `N = T.int32()` reads back as a Var, not a SizeVar
    inp, out, body = pingpong_program(tuple(Var(x) for x in "NCHW"))
    func = make_prim_func(body, [inp, out], "pingpong")
    text = func.script()
    golden(text)
    assert_structural_equal(tilelang.parse(text)["pingpong"], func)


def test_instruction_prototypes():
    assert LOAD.c_prototype() == (
        "int32_t tl_load(const float* src, int32_t src_addr, int32_t src_shape0, "
        "int32_t src_shape1, int32_t src_shape2, int32_t src_shape3, int32_t src_stride0, "
        "int32_t src_stride1, int32_t src_stride2, int32_t src_stride3, int32_t slot);"
    )
    assert STORE.c_prototype().startswith("int32_t tl_store(float* dst, int32_t dst_addr,")


def _numpy_reference(x):
    return np.ascontiguousarray(x[:, :, ::2, ::2])


def _build_symbolic(target):
    import tilelang

    shape = tuple(SizeVar(x) for x in "NCHW")
    inp, out, body = pingpong_program(shape)
    func = make_prim_func(body, [inp, out], "pingpong")
    return tilelang.build(func, target=target, extern_sources=[INSTRUCTION_LIBRARY])


@pytest.fixture(scope="module")
def symbolic_pingpong_lib():
    return _build_symbolic("c")


@pytest.fixture(scope="module")
def symbolic_pingpong_llvm():
    return _build_symbolic("llvm")


# ragged tails in every dimension (C % 4, H % 4, W % 5 and odd H, W for the stride),
# exact multiples, and degenerate sizes
SHAPES = [(1, 10, 7, 5), (2, 9, 13, 11), (3, 8, 8, 10), (1, 1, 1, 1), (2, 5, 4, 6), (1, 3, 9, 14)]


@pytest.mark.parametrize("shape", SHAPES)
def test_symbolic_program_in_c_matches_numpy(symbolic_pingpong_lib, shape):
    _check_against_numpy(symbolic_pingpong_lib, shape)


@pytest.mark.parametrize("shape", SHAPES[:3])
def test_symbolic_program_under_llvm_matches_numpy(symbolic_pingpong_llvm, shape):
    _check_against_numpy(symbolic_pingpong_llvm, shape)


def _check_against_numpy(lib, shape):
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype("float32")
    y = np.full(expected_output_shape(shape), np.nan, dtype="float32")
    lib["pingpong"](x, y)
    np.testing.assert_array_equal(y, _numpy_reference(x))


def expected_output_shape(shape):
    return tuple(-(-d // s) for d, s in zip(shape, OP_STRIDES))


def test_c_program_issues_the_concrete_instruction_count(symbolic_pingpong_lib):
    """The symbolic loops run exactly the instructions the unrolled program lists."""
    import ctypes

    shape = (2, 9, 13, 11)
    x = np.zeros(shape, dtype="float32")
    y = np.zeros(expected_output_shape(shape), dtype="float32")
    # dlopen of the already loaded library returns it, with the same tl_count
    handle = ctypes.CDLL(str(symbolic_pingpong_lib.backend_module.library_path))
    count = ctypes.c_int32.in_dll(handle, "tl_count")
    before = count.value
    symbolic_pingpong_lib["pingpong"](x, y)
    assert count.value - before == len(expected_instructions(shape))
