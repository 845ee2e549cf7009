"""The tensor-core fragment intrinsics on NumPy: what a warp's WMMA calls compute.

The reference backend runs a tensorized kernel's ``T.tvm_fill_fragment``,
``T.tvm_load_matrix_sync``, ``T.tvm_mma_sync`` and ``T.tvm_store_matrix_sync`` so that
the index arithmetic around them (fragment indices from element offsets, strides,
pointers into shared memory) is checked against NumPy without a GPU. A buffer in a
``wmma.*`` scope is a flat array of tiles, tile ``i`` at ``[i * size, (i + 1) * size)``
in row-major order (``size``: ``m * k`` for ``matrix_a``, ``k * n`` for ``matrix_b``,
``m * n`` for the accumulator). How the hardware spreads a fragment over the lanes of a
warp is not modelled: every thread loop runs in turn here, and each runs the whole
warp's operation.
"""

from __future__ import annotations

import numpy as np
from tilelang.backends.python.support import ShiftedView

from tilelang.analysis.fragments import FRAGMENT_ARGS, FRAGMENT_KINDS, LAYOUTS
from tilelang.errors import BuildError
from tilelang.ir import expr as E

FRAGMENT_OPS = tuple(FRAGMENT_ARGS)


def _tile(frag, rows, cols, index):
    size, index = rows * cols, int(index)
    if index < 0 or (index + 1) * size > frag.shape[0]:
        raise IndexError(
            f"fragment index {index} is outside a buffer of {frag.shape[0] // size} "
            f"{rows}x{cols} tiles"
        )
    return frag[index * size : (index + 1) * size].reshape(rows, cols)


def _memory(array, offset, rows, cols, stride, col_major):
    """The ``rows x cols`` tile of ``array`` from element ``offset``, rows (columns when
    ``col_major``) ``stride`` elements apart: a view, checked to lie inside ``array``."""
    offset, stride = int(offset), int(stride)
    if isinstance(array, ShiftedView):  # a parameter with a constant elem_offset
        array, offset = array.array, offset - array.offset
    outer, inner = (cols, rows) if col_major else (rows, cols)
    last = offset + (outer - 1) * stride + inner - 1
    if offset < 0 or stride < inner or last >= array.shape[0]:
        raise IndexError(
            f"a fragment's memory tile (offset {offset}, stride {stride}, {rows}x{cols}) "
            f"does not lie inside its buffer of {array.shape[0]} elements"
        )
    view = np.lib.stride_tricks.as_strided(
        array[offset:], (outer, inner), (stride * array.itemsize, array.itemsize)
    )
    return view.T if col_major else view


def fill(frag, rows, cols, index, value):
    _tile(frag, rows, cols, index)[...] = value


def load(frag, rows, cols, index, array, offset, stride, col_major):
    _tile(frag, rows, cols, index)[...] = _memory(array, offset, rows, cols, stride, col_major)


def store(frag, rows, cols, index, array, offset, stride, col_major):
    _memory(array, offset, rows, cols, stride, col_major)[...] = _tile(frag, rows, cols, index)


def _operand(tile, acc):
    """A fragment tile's values in the accumulator's type. A ``uint16`` tile holds
    bfloat16 bits (LegalizeBF16 stores bfloat16 so; no tensor-core operand is a 16-bit
    integer): the bits are a float32's top half."""
    if tile.dtype == np.uint16:
        return (tile.astype(np.uint32) << 16).view(np.float32).astype(acc)
    return tile.astype(acc)


def mma(m, n, k, d, di, a, ai, b, bi, c, ci):
    """``D = A . B + C``, products and sums in the accumulator's type."""
    acc = c.dtype
    product = _operand(_tile(a, m, k, ai), acc) @ _operand(_tile(b, k, n, bi), acc)
    _tile(d, m, n, di)[...] = product + _tile(c, m, n, ci)


NAMESPACE = {"_frag_fill": fill, "_frag_load": load, "_frag_store": store, "_frag_mma": mma}


def render(printer, e: E.Call, scopes: dict, fragments: dict) -> str:
    """The Python call of one fragment intrinsic (``scopes``: id(data var) -> scope of
    the allocated buffers; ``fragments``: :func:`collect_fragments` of the function)."""
    args = e.args

    def tile(var):
        scope, fragment = scopes.get(id(var)), fragments.get(id(var))
        if scope not in FRAGMENT_KINDS or fragment is None:
            raise BuildError(
                f"T.{e.op}: {getattr(var, 'name', var)} is not an allocated buffer in a "
                "wmma.* scope with a known fragment shape"
            )
        return fragment

    if e.op == "tvm_mma_sync":
        for var in args[0::2]:
            tile(var)
        parts = [str(x) for x in tile(args[2]).shape] + [printer.expr(a) for a in args]
        return f"_frag_mma({', '.join(parts)})"
    rows, cols = tile(args[0]).tile_shape(scopes[id(args[0])])
    frag, index = printer.expr(args[0]), printer.expr(args[4])
    if e.op == "tvm_fill_fragment":
        return f"_frag_fill({frag}, {rows}, {cols}, {index}, {printer.expr(args[5])})"
    layout = args[7].value if isinstance(args[7], E.StringImm) else None
    if layout not in LAYOUTS:
        raise BuildError(f"T.{e.op}: the layout is one of {LAYOUTS}")
    helper = "_frag_load" if e.op == "tvm_load_matrix_sync" else "_frag_store"
    pointer = args[5]
    if not (isinstance(pointer, E.Call) and pointer.op == "tvm_access_ptr"):
        raise BuildError(f"T.{e.op}: the memory operand must be a buffer's access_ptr")
    array, offset = printer.expr(pointer.args[1]), printer.expr(pointer.args[2])
    stride = printer.expr(args[6])
    col_major = layout == "col_major"
    return f"{helper}({frag}, {rows}, {cols}, {index}, {array}, {offset}, {stride}, {col_major})"
