"""Tensor-core fragments: the tile shape and layout of each fragment buffer.

A buffer in scope ``wmma.matrix_a``, ``wmma.matrix_b`` or ``wmma.accumulator`` (WMMA
fragments) or ``m16n8k16.matrixA``, ``m16n8k16.matrixB``, ``m16n8k16.matrixC`` (the
per-thread registers of ``ldmatrix`` and ``mma.sync``, 16x16 tiles only) holds
``m x k``, ``k x n`` or ``m x n`` tiles; which ``(m, n, k)``, and for the operands
which memory layout, is said by the intrinsics that use it
(``T.tvm_fill_fragment``/``T.tvm_load_matrix_sync``/``T.tvm_store_matrix_sync``
take the shape, a load the layout), as TVM's InferFragment finds them. The CUDA
backend declares fragments from this, the reference backend sizes tiles with it.
"""

from __future__ import annotations

import attrs

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir.convert import const_int_value
from tilelang.ir.functor import StmtExprVisitor

FRAGMENT_KINDS = {
    "wmma.matrix_a": "matrix_a",
    "wmma.matrix_b": "matrix_b",
    "wmma.accumulator": "accumulator",
    "m16n8k16.matrixA": "matrix_a",
    "m16n8k16.matrixB": "matrix_b",
    "m16n8k16.matrixC": "accumulator",
}
#: the scopes of each family: WMMA's fragment objects, mma.sync's registers
FAMILY_SCOPES = {
    "wmma": ("wmma.matrix_a", "wmma.matrix_b", "wmma.accumulator"),
    "mma": ("m16n8k16.matrixA", "m16n8k16.matrixB", "m16n8k16.matrixC"),
}
#: the only tile shape of the mma family: two m16n8k16 instructions per 16x16x16
MMA_SHAPE = (16, 16, 16)
#: the intrinsics and the positions of their fragment (data variable) arguments
FRAGMENT_ARGS = {
    "tvm_fill_fragment": (0,),
    "tvm_load_matrix_sync": (0,),
    "tvm_store_matrix_sync": (0,),
    "tvm_mma_sync": (0, 2, 4, 6),
}
LAYOUTS = ("row_major", "col_major")


def is_fragment_scope(scope: str) -> bool:
    return scope in FRAGMENT_KINDS


def fragment_family(scope: str) -> str | None:
    """``"wmma"`` or ``"mma"`` for a fragment scope, None for any other."""
    return next((f for f, scopes in FAMILY_SCOPES.items() if scope in scopes), None)


@attrs.frozen
class Fragment:
    """The tile shape ``(m, n, k)`` of a fragment buffer and its layout (operands)."""

    shape: tuple
    layout: str | None

    def tile_shape(self, scope: str) -> tuple[int, int]:
        """``(rows, cols)`` of one tile of a buffer in ``scope``."""
        m, n, k = self.shape
        kind = FRAGMENT_KINDS[scope]
        return {"matrix_a": (m, k), "matrix_b": (k, n), "accumulator": (m, n)}[kind]

    def tile_elements(self, scope: str) -> int:
        rows, cols = self.tile_shape(scope)
        return rows * cols


class _Collector(StmtExprVisitor):
    """Per fragment data variable (by id): its shape and, where loaded, its layout."""

    def __init__(self):
        self.shapes: dict = {}
        self.layouts: dict = {}
        self.names: dict = {}

    def visit_call(self, op: E.Call):
        self.generic_visit(op)
        if op.op not in FRAGMENT_ARGS or op.op == "tvm_mma_sync":
            return
        var = op.args[0]
        if not isinstance(var, E.Var):
            raise BuildError(f"T.{op.op}: the first argument must be a fragment buffer's data")
        shape = tuple(const_int_value(a) for a in op.args[1:4])
        if None in shape:
            raise BuildError(f"T.{op.op} on {var.name}: the fragment shape must be constants")
        known = self.shapes.setdefault(id(var), shape)
        if known != shape:
            raise BuildError(
                f"fragment {var.name} is used as {'x'.join(map(str, known))} and as "
                f"{'x'.join(map(str, shape))}"
            )
        self.names[id(var)] = var.name
        if op.op == "tvm_load_matrix_sync":
            layout = op.args[7]
            if not isinstance(layout, E.StringImm) or layout.value not in LAYOUTS:
                raise BuildError(f"T.tvm_load_matrix_sync: the layout is one of {LAYOUTS}")
            self.layouts.setdefault(id(var), set()).add(layout.value)


def collect_fragments(body) -> dict:
    """``id(data var) -> Fragment`` for every fragment the intrinsics in ``body`` use."""
    collector = _Collector()
    collector.visit(body)
    fragments = {}
    for key, shape in collector.shapes.items():
        layouts = collector.layouts.get(key, set())
        if len(layouts) > 1:
            raise BuildError(f"fragment {collector.names[key]} is loaded in both layouts")
        fragments[key] = Fragment(shape, next(iter(layouts), None))
    return fragments


__all__ = [
    "Fragment", "collect_fragments", "is_fragment_scope", "FRAGMENT_KINDS", "FRAGMENT_ARGS",
    "LAYOUTS", "FAMILY_SCOPES", "MMA_SHAPE", "fragment_family",
]  # fmt: skip
