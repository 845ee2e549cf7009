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
* functions returning a value (``return x`` with ``-> T.float32``): the python
  reference returns it from the call; the c, llvm and cuda backends' functions return
  only a status.
"""

from __future__ import annotations

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.function import IRModule, PrimFunc
from tilelang.ir.functor import StmtExprVisitor

#: backends that compute masked vector accesses
MASKED_ACCESS_BACKENDS = ("python",)
#: backends whose functions return a value (``return x``)
RETURN_VALUE_BACKENDS = ("python",)


class _Found(Exception):
    def __init__(self, node, what: str, scalable: bool = False, plain: bool = False):
        super().__init__(what)
        self.node, self.what, self.scalable, self.plain = node, what, scalable, plain


class _Finder(StmtExprVisitor):
    def __init__(self, target_kind: str, returns_only: bool = False):
        super().__init__()
        self.target_kind, self.returns_only = target_kind, returns_only
        self.masked_ok = returns_only or target_kind in MASKED_ACCESS_BACKENDS

    def visit_call(self, op: E.Call):
        if op.op == "vscale" and not self.returns_only:
            raise _Found(op, "a scalable vector (T.vscale())", scalable=True)
        self.generic_visit(op)

    def visit_evaluate(self, op: S.Evaluate):
        value = op.value
        if isinstance(value, E.Call) and value.op == "ret" and self.returns_only:
            if self.target_kind not in RETURN_VALUE_BACKENDS:
                raise _Found(
                    op,
                    f"returns a value (return {value.dtype}): the '{self.target_kind}' "
                    f"backend's functions return no value (the "
                    f"{', '.join(RETURN_VALUE_BACKENDS)} backend returns it)",
                    plain=True,
                )
        self.generic_visit(op)

    def visit_ramp(self, op: E.Ramp):
        self._lanes(op)

    def visit_broadcast(self, op: E.Broadcast):
        self._lanes(op)

    def _lanes(self, op):
        # lanes is a plain field, which the visitor does not enter
        if isinstance(op.lanes, E.PrimExpr) and not self.returns_only:
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


def refuse_unsupported_features(
    mod: IRModule | PrimFunc, target_kind: str, returns_only: bool = False
) -> None:
    """Raise :class:`BuildError` when a function of ``mod`` uses a feature (see the
    module docstring) that the ``target_kind`` backend cannot compute. ``tilelang.build``
    asks first for every feature but returned values, then (``returns_only``) for those
    on the lowered module, after the checks of calls between functions, whose message
    names the caller."""
    funcs = [("main", mod)] if isinstance(mod, PrimFunc) else list(mod)
    for name, func in funcs:
        if not isinstance(func, PrimFunc):
            continue
        try:
            _Finder(target_kind, returns_only).visit(func.body)
        except _Found as found:
            span = getattr(found.node, "span", None)
            where = f" ({span})" if span is not None else ""
            why = (
                "no backend computes scalable vectors"
                if found.scalable
                else f"the '{target_kind}' backend has no masked vector access (the "
                f"{', '.join(MASKED_ACCESS_BACKENDS)} backend computes it)"
            )
            if found.plain:  # the message says it all
                raise BuildError(f"function {name!r}{where} {found.what}") from None
            raise BuildError(f"function {name!r}: {found.what}{where}: {why}") from None


__all__ = ["refuse_unsupported_features", "MASKED_ACCESS_BACKENDS", "RETURN_VALUE_BACKENDS"]
