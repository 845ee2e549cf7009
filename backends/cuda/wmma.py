"""WMMA fragments in CUDA: the ``wmma.*`` scopes and the four fragment intrinsics.

A buffer in scope ``wmma.matrix_a``, ``wmma.matrix_b`` or ``wmma.accumulator`` is an
array of ``nvcuda::wmma::fragment`` objects, one per ``m x k`` / ``k x n`` / ``m x n``
tile. Its shape and, for the operands, its layout come from the intrinsics that use
it (as TVM's InferFragment finds them)::

    T.tvm_load_matrix_sync(A_frag, 16, 16, 16, i, T.tvm_access_ptr(..., A_shared, ...),
                           32, "row_major")
    ->  nvcuda::wmma::fragment<nvcuda::wmma::matrix_a, 16, 16, 16, half,
                               nvcuda::wmma::row_major> A_frag[2];
        nvcuda::wmma::load_matrix_sync(A_frag[i], A_shared + ..., 32);

``tvm_fill_fragment``, ``tvm_mma_sync`` and ``tvm_store_matrix_sync`` print as
``fill_fragment``, ``mma_sync`` and ``store_matrix_sync`` (row-major memory).
"""

from __future__ import annotations

from tilelang.analysis.fragments import FRAGMENT_KINDS, LAYOUTS, Fragment
from tilelang.errors import BuildError
from tilelang.ir import expr as E

NS = "nvcuda::wmma"


def fragment_declaration(printer, op, fragment: Fragment | None, count) -> str:
    """The declaration of the fragment array that the ``wmma.*`` allocation ``op`` is."""
    kind = FRAGMENT_KINDS[op.scope]
    name = op.buffer_var.name
    if fragment is None:
        raise BuildError(
            f"{op.scope} buffer {name} is never used by a fragment intrinsic "
            "(tensorize its loads, stores and updates with the wmma_* intrinsics)"
        )
    if not isinstance(count, int) or count % fragment.tile_elements(op.scope):
        raise BuildError(
            f"{op.scope} buffer {name} holds {count} elements, not a whole number of "
            f"{'x'.join(map(str, fragment.shape))} tiles"
        )
    m, n, k = fragment.shape
    params = [f"{NS}::{kind}", str(m), str(n), str(k), printer.type_name(op.dtype)]
    if kind != "accumulator":
        if fragment.layout is None:
            raise BuildError(f"{op.scope} buffer {name} is used but never loaded")
        params.append(f"{NS}::{fragment.layout}")
    return f"{NS}::fragment<{', '.join(params)}>"


def print_fragment_call(printer, op: E.Call) -> str:
    """The ``nvcuda::wmma`` call an intrinsic prints as."""
    args = op.args

    def tile(var, index):
        return f"{printer.expr(var)}[{printer._strip(printer.expr(index))}]"

    if op.op == "tvm_fill_fragment":
        return f"{NS}::fill_fragment({tile(args[0], args[4])}, {printer.expr(args[5])})"
    if op.op == "tvm_mma_sync":
        d, a, b, c = (tile(args[i], args[i + 1]) for i in (0, 2, 4, 6))
        return f"{NS}::mma_sync({d}, {a}, {b}, {c})"
    pointer = printer._strip(printer.expr(args[5]))
    stride = printer._strip(printer.expr(args[6]))
    memory = _memory_layout(args[7])
    fragment = tile(args[0], args[4])
    if op.op == "tvm_load_matrix_sync":
        if printer.fragment_kind(args[0]) == "accumulator":  # memory layout given
            return f"{NS}::load_matrix_sync({fragment}, {pointer}, {stride}, {memory})"
        return f"{NS}::load_matrix_sync({fragment}, {pointer}, {stride})"
    return f"{NS}::store_matrix_sync({pointer}, {fragment}, {stride}, {memory})"


def _memory_layout(layout) -> str:
    if not isinstance(layout, E.StringImm) or layout.value not in LAYOUTS:
        raise BuildError(f"a fragment's memory layout is one of {LAYOUTS}")
    return f"{NS}::mem_{layout.value}"


__all__ = ["fragment_declaration", "print_fragment_call"]
