"""verify_features: IR features only some backends compute, refused before a build.

TVMScript can state things a backend has no translation for. ``tilelang.build`` asks
:func:`refuse_unsupported_features` first, so such a program is a
:class:`~tilelang.errors.BuildError` naming the function, the feature and the source
location, never a crash (or a silently different program) inside a code generator.

* masked (predicated) vector loads and stores, ``A.vload(..., predicate=m)`` /
  ``A.vstore(..., predicate=m)``: the python reference computes them; the c, llvm and
  cuda backends have no masked access.
* scalable vectors (``T.Ramp(0, 1, 4 * T.vscale())``, Arm SVE's run-time vector
  length): no backend computes them.
"""

from __future__ import annotations

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.function import IRModule, PrimFunc
from tilelang.ir.functor import StmtExprVisitor

#: backends that compute masked vector accesses
MASKED_ACCESS_BACKENDS = ("python",)


class _Found(Exception):
    def __init__(self, node, what: str, scalable: bool = False):
        super().__init__(what)
        self.node, self.what, self.scalable = node, what, scalable


class _Finder(StmtExprVisitor):
    def __init__(self, masked_ok: bool):
        super().__init__()
        self.masked_ok = masked_ok

    def visit_call(self, op: E.Call):
        if op.op == "vscale":
            raise _Found(op, "a scalable vector (T.vscale())", scalable=True)
        self.generic_visit(op)

    def visit_ramp(self, op: E.Ramp):
        self._lanes(op)

    def visit_broadcast(self, op: E.Broadcast):
        self._lanes(op)

    def _lanes(self, op):
        if isinstance(op.lanes, E.PrimExpr):  # a plain field: the visitor skips it
            raise _Found(op, f"a scalable vector ({op.dtype})", scalable=True)
        self.generic_visit(op)

    def visit_buffer_load(self, op: E.BufferLoad):
        if op.predicate is not None and not self.masked_ok:
            raise _Found(op, f"a masked (predicated) load of {op.buffer.name}")
        self.generic_visit(op)

    def visit_buffer_store(self, op: S.BufferStore):
        if op.predicate is not None and not self.masked_ok:
            raise _Found(op, f"a masked (predicated) store to {op.buffer.name}")
        self.generic_visit(op)


def refuse_unsupported_features(mod: IRModule | PrimFunc, target_kind: str) -> None:
    """Raise :class:`BuildError` when a function of ``mod`` uses a feature (see the
    module docstring) that the ``target_kind`` backend cannot compute."""
    funcs = [("main", mod)] if isinstance(mod, PrimFunc) else list(mod)
    for name, func in funcs:
        if not isinstance(func, PrimFunc):
            continue
        try:
            _Finder(target_kind in MASKED_ACCESS_BACKENDS).visit(func.body)
        except _Found as found:
            span = getattr(found.node, "span", None)
            where = f" ({span})" if span is not None else ""
            why = (
                "no backend computes scalable vectors"
                if found.scalable
                else f"the '{target_kind}' backend has no masked vector access (the "
                f"{', '.join(MASKED_ACCESS_BACKENDS)} backend computes it)"
            )
            raise BuildError(f"function {name!r}: {found.what}{where}: {why}") from None


__all__ = ["refuse_unsupported_features", "MASKED_ACCESS_BACKENDS"]
