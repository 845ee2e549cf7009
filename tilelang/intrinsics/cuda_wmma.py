"""CUDA tensor-core tensor intrinsics through WMMA fragments (``nvcuda::wmma``, sm_70+).

A warp computes ``D = A . B + C`` on ``m x n x k`` tiles held in *fragments*: buffers
in the scopes ``wmma.matrix_a`` (``m x k``), ``wmma.matrix_b`` (``k x n``) and
``wmma.accumulator`` (``m x n``). A fragment buffer may hold several tiles (say a
``32 x 32`` accumulator is four ``16 x 16`` fragments); an intrinsic's view of one tile
finds its fragment by the view's element offset and row stride::

    index = elem_offset // row_stride // rows * (row_stride // cols)
            + elem_offset % row_stride // cols

The intrinsics, each registered for ``Schedule.tensorize`` under TVM's names:

- ``wmma_fill_{m}x{n}x{k}_{f32|f16}``: ``C[i, j] = 0`` (``T.tvm_fill_fragment``);
- ``wmma_load_{m}x{n}x{k}_f16_{a|b}_{scope}``: a row-major tile of a ``shared`` (or
  ``global``) buffer into a ``matrix_a``/``matrix_b`` fragment (``T.tvm_load_matrix_sync``);
  ``..._b_trans_{scope}``: an ``n x k`` tile of ``B[j, k]``, loaded column-major;
- ``wmma_sync_{m}x{n}x{k}_f16f16{f32|f16}[_trans]``: ``C[i, j] += A[i, k] * B[k, j]``
  (``B[j, k]`` with ``_trans``) with the products and sums in the accumulator's type
  (``T.tvm_mma_sync``);
- ``wmma_store_{m}x{n}x{k}_{f32|f16}_{scope}``: the accumulator into a row-major tile of
  a ``global`` or ``shared`` buffer (``T.tvm_store_matrix_sync``).

The CUDA backend prints the fragments and the four calls as ``nvcuda::wmma`` code
(:mod:`tilelang.backends.cuda.wmma`); the CPU backends do not run them. Each generator
registers its shape on first use and returns the name; the 16x16x16 ones are
registered when this module is imported.
"""

from __future__ import annotations

from tilelang.analysis.fragments import FAMILY_SCOPES, MMA_SHAPE
from tilelang.intrinsics.common import register_text

#: the fragment shapes WMMA offers for half inputs
F16_SHAPES = ((16, 16, 16), (32, 8, 16), (8, 32, 16))
OUT_DTYPES = {"float32": "f32", "float16": "f16"}
#: input element types and their short names; bfloat16 only for the ``mma`` family
#: (``mma.m16n8k16.f32.bf16.bf16.f32``: float32 accumulators only)
IN_DTYPES = {"float16": "f16", "bfloat16": "bf16"}
SCOPES = ("shared", "global")

_INDEX = "{off} // {ld} // {rows} * ({ld} // {cols}) + {off} % {ld} // {cols}"


def fragment_index(off: str, ld: str, rows: int, cols: int) -> str:
    """The TIR text of the fragment index of a tile view (see the module docstring)."""
    return _INDEX.format(off=off, ld=ld, rows=rows, cols=cols)


def _buffer(name, handle, shape, dtype, scope, strides=None, offset=None) -> str:
    extra = ""
    if offset is not None:
        extra += f", elem_offset={offset}"
    if strides is not None:
        extra += f", strides=[{strides}, 1]"
    return (
        f"    {name} = T.match_buffer({handle}, {shape}, {dtype!r}, "
        f'offset_factor={shape[1]}, scope="{scope}"{extra})\n'
    )


def _func(name, params, buffers, reads, writes, body, declared=()) -> str:
    text = f"@T.prim_func\ndef {name}({', '.join(p + ': T.handle' for p in params)}):\n"
    text += "".join(f"    {v} = T.int32()\n" for v in declared)
    text += "".join(buffers)
    text += '    with T.block("root"):\n'
    text += f"        T.reads({reads})\n        T.writes({writes})\n"
    return text + body


def _grid(rows, cols, block, stmt, reads, writes) -> str:
    return (
        f"        for i, j in T.grid({rows}, {cols}):\n"
        f'            with T.block("{block}"):\n'
        '                vi, vj = T.axis.remap("SS", [i, j])\n'
        f"                T.reads({reads})\n"
        f"                T.writes({writes})\n"
        f"                {stmt}\n"
    )


def _whole(buf, rows, cols) -> str:
    return f"{buf}[0:{rows}, 0:{cols}]"


def _check(m, n, k, dtype="float16", family="wmma", out_dtype="float32"):
    if family not in FAMILY_SCOPES:
        raise ValueError(f"the fragment family is one of {tuple(FAMILY_SCOPES)}")
    if family == "mma" and (m, n, k) != MMA_SHAPE:
        raise ValueError(f"mma fragments are 16x16x16 tiles, not {m}x{n}x{k}")
    if dtype == "bfloat16" and (family != "mma" or out_dtype != "float32"):
        raise ValueError(
            "bfloat16 inputs go through the mma family (ldmatrix + mma.sync m16n8k16) "
            "with float32 accumulators"
        )
    if (m, n, k) not in F16_SHAPES or dtype not in IN_DTYPES:
        raise ValueError(
            f"WMMA has no {m}x{n}x{k} fragment for {dtype} inputs "
            f"(shapes: {', '.join('x'.join(map(str, s)) for s in F16_SHAPES)})"
        )


def wmma_fill(
    m: int = 16, n: int = 16, k: int = 16, dtype: str = "float32", *, family="wmma", name=None
) -> str:
    """The name of the intrinsic that zeroes an ``m x n`` accumulator tile (``family``
    ``"mma"``: the registers of :mod:`.cuda_mma`, registered as ``name``)."""
    _check(m, n, k, family=family)
    acc = FAMILY_SCOPES[family][2]
    name = name or f"wmma_fill_{m}x{n}x{k}_{OUT_DTYPES[dtype]}"
    zero = f'T.Cast("{dtype}", T.float32(0))' if dtype != "float32" else "T.float32(0)"
    c = _whole("C", m, n)
    desc = _func(
        "wmma_fill_desc", ["c"], [_buffer("C", "c", (m, n), dtype, acc)],
        "", c, _grid(m, n, "init", f"C[vi, vj] = {zero}", "", "C[vi, vj]"),
    )  # fmt: skip
    index = fragment_index("oc", "ldc", m, n)
    impl = _func(
        "wmma_fill_impl", ["c"],
        [_buffer("C", "c", (m, n), dtype, acc, "ldc", "oc")], "", c,
        f"        T.evaluate(T.tvm_fill_fragment(C.data, {m}, {n}, {k}, {index}, {zero}))\n",
        declared=("ldc", "oc"),
    )  # fmt: skip
    return register_text(name, desc, impl)


def wmma_load(
    m: int = 16,
    n: int = 16,
    k: int = 16,
    operand: str = "a",
    scope: str = "shared",
    trans: bool = False,
    *,
    family: str = "wmma",
    name: str | None = None,
    dtype: str = "float16",
) -> str:
    """The name of the intrinsic that loads a row-major tile of a ``scope`` buffer into
    a ``matrix_a`` (``m x k``) or ``matrix_b`` (``k x n``) fragment of ``dtype`` (half,
    or bfloat16 for the mma family) values.
    With ``trans`` (operand ``b`` only) the tile is ``n x k``, B stored transposed as
    ``B[j, k]`` (a linear layer's weight): the fragment is loaded column-major."""
    _check(m, n, k, dtype, family=family)
    if operand not in ("a", "b") or scope not in SCOPES or (trans and operand != "b"):
        raise ValueError(
            f"wmma_load: operand is 'a' or 'b' (trans: 'b' only) and scope one of {SCOPES}"
        )
    rows, cols = (m, k) if operand == "a" else ((n, k) if trans else (k, n))
    layout = "col_major" if trans else "row_major"
    short = IN_DTYPES[dtype]
    name = name or f"wmma_load_{m}x{n}x{k}_{short}_{operand}{'_trans' if trans else ''}_{scope}"
    frag_scope = FAMILY_SCOPES[family][0 if operand == "a" else 1]
    shape = (rows, cols)
    reads, writes = _whole("A", rows, cols), _whole("F", rows, cols)
    desc = _func(
        "wmma_load_desc", ["a", "f"],
        [_buffer("A", "a", shape, dtype, scope), _buffer("F", "f", shape, dtype, frag_scope)],
        reads, writes, _grid(rows, cols, "load", "F[vi, vj] = A[vi, vj]", "A[vi, vj]", "F[vi, vj]"),
    )  # fmt: skip
    index = fragment_index("of", "ldf", rows, cols)
    impl = _func(
        "wmma_load_impl", ["a", "f"],
        [_buffer("A", "a", shape, dtype, scope, "lda"),
         _buffer("F", "f", shape, dtype, frag_scope, "ldf", "of")],
        reads, writes,
        f"        T.evaluate(T.tvm_load_matrix_sync(F.data, {m}, {n}, {k}, {index}, "
        f'A.access_ptr("r"), lda, "{layout}"))\n',
        declared=("lda", "ldf", "of"),
    )  # fmt: skip
    return register_text(name, desc, impl)


def wmma_sync(
    m: int = 16,
    n: int = 16,
    k: int = 16,
    out_dtype: str = "float32",
    trans: bool = False,
    *,
    family: str = "wmma",
    name: str | None = None,
    in_dtype: str = "float16",
) -> str:
    """The name of the intrinsic ``C[i, j] += A[i, k] * B[k, j]`` on fragments
    (``in_dtype`` inputs: half, or bfloat16 for the mma family; products and sums in
    ``out_dtype``); with ``trans``, ``B[j, k]`` (the ``matrix_b`` fragments of
    ``wmma_load(..., trans=True)``)."""
    _check(m, n, k, in_dtype, family=family, out_dtype=out_dtype)
    fa, fb, fc = FAMILY_SCOPES[family]
    short = IN_DTYPES[in_dtype]
    name = name or (
        f"wmma_sync_{m}x{n}x{k}_{short}{short}{OUT_DTYPES[out_dtype]}{'_trans' if trans else ''}"
    )
    b_shape = (n, k) if trans else (k, n)
    b_index = "B[vj, vk]" if trans else "B[vk, vj]"

    def cast(x):
        return x if out_dtype == in_dtype else f'T.Cast("{out_dtype}", {x})'

    buffers = [
        _buffer("A", "a", (m, k), in_dtype, fa, "lda", "oa"),
        _buffer("B", "b", b_shape, in_dtype, fb, "ldb", "ob"),
        _buffer("C", "c", (m, n), out_dtype, fc, "ldc", "oc"),
    ]
    plain = [_buffer(*args) for args in (
        ("A", "a", (m, k), in_dtype, fa),
        ("B", "b", b_shape, in_dtype, fb),
        ("C", "c", (m, n), out_dtype, fc),
    )]  # fmt: skip
    reads = f"{_whole('C', m, n)}, {_whole('A', m, k)}, {_whole('B', *b_shape)}"
    update = (
        f"        for i, j, kk in T.grid({m}, {n}, {k}):\n"
        '            with T.block("update"):\n'
        '                vi, vj, vk = T.axis.remap("SSR", [i, j, kk])\n'
        f"                T.reads(C[vi, vj], A[vi, vk], {b_index})\n"
        "                T.writes(C[vi, vj])\n"
        f"                C[vi, vj] = C[vi, vj] + {cast('A[vi, vk]')} * {cast(b_index)}\n"
    )
    desc = _func("wmma_sync_desc", ["a", "b", "c"], plain, reads, _whole("C", m, n), update)
    ic = fragment_index("oc", "ldc", m, n)
    ia = fragment_index("oa", "lda", m, k)
    ib = fragment_index("ob", "ldb", *b_shape)
    impl = _func(
        "wmma_sync_impl", ["a", "b", "c"], buffers, reads, _whole("C", m, n),
        f"        T.evaluate(T.tvm_mma_sync(C.data, {ic}, A.data, {ia}, B.data, {ib}, "
        f"C.data, {ic}))\n",
        declared=("lda", "ldb", "ldc", "oa", "ob", "oc"),
    )  # fmt: skip
    return register_text(name, desc, impl)


def wmma_store(
    m: int = 16,
    n: int = 16,
    k: int = 16,
    dtype: str = "float32",
    scope: str = "global",
    *,
    family: str = "wmma",
    name: str | None = None,
) -> str:
    """The name of the intrinsic that stores an ``m x n`` accumulator tile into a
    row-major tile of a ``scope`` buffer."""
    _check(m, n, k, family=family)
    acc = FAMILY_SCOPES[family][2]
    if scope not in SCOPES:
        raise ValueError(f"wmma_store: scope is one of {SCOPES}")
    name = name or f"wmma_store_{m}x{n}x{k}_{OUT_DTYPES[dtype]}_{scope}"
    reads, writes = _whole("F", m, n), _whole("C", m, n)
    desc = _func(
        "wmma_store_desc", ["f", "c"],
        [_buffer("F", "f", (m, n), dtype, acc), _buffer("C", "c", (m, n), dtype, scope)],
        reads, writes, _grid(m, n, "store", "C[vi, vj] = F[vi, vj]", "F[vi, vj]", "C[vi, vj]"),
    )  # fmt: skip
    index = fragment_index("of", "ldf", m, n)
    impl = _func(
        "wmma_store_impl", ["f", "c"],
        [_buffer("F", "f", (m, n), dtype, acc, "ldf", "of"),
         _buffer("C", "c", (m, n), dtype, scope, "ldc")],
        reads, writes,
        f"        T.evaluate(T.tvm_store_matrix_sync(F.data, {m}, {n}, {k}, {index}, "
        f'C.access_ptr("w"), ldc, "row_major"))\n',
        declared=("ldf", "of", "ldc"),
    )  # fmt: skip
    return register_text(name, desc, impl)


WMMA_FILL_16x16x16_F32 = wmma_fill(16, 16, 16, "float32")
WMMA_LOAD_16x16x16_F16_A = wmma_load(16, 16, 16, "a", "shared")
WMMA_LOAD_16x16x16_F16_B = wmma_load(16, 16, 16, "b", "shared")
WMMA_SYNC_16x16x16_F16F16F32 = wmma_sync(16, 16, 16, "float32")
WMMA_STORE_16x16x16_F32_GLOBAL = wmma_store(16, 16, 16, "float32", "global")
WMMA_STORE_16x16x16_F32_SHARED = wmma_store(16, 16, 16, "float32", "shared")
WMMA_LOAD_16x16x16_F16_B_TRANS = wmma_load(16, 16, 16, "b", "shared", trans=True)
WMMA_SYNC_16x16x16_F16F16F32_TRANS = wmma_sync(16, 16, 16, "float32", trans=True)

__all__ = [
    "wmma_fill", "wmma_load", "wmma_sync", "wmma_store", "fragment_index",
    "WMMA_FILL_16x16x16_F32", "WMMA_LOAD_16x16x16_F16_A", "WMMA_LOAD_16x16x16_F16_B",
    "WMMA_SYNC_16x16x16_F16F16F32", "WMMA_STORE_16x16x16_F32_GLOBAL",
    "WMMA_STORE_16x16x16_F32_SHARED", "WMMA_LOAD_16x16x16_F16_B_TRANS",
    "WMMA_SYNC_16x16x16_F16F16F32_TRANS",
]  # fmt: skip
