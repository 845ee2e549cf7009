"""Functions and modules."""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir.node import Node, child, define, plain, span_field
from tilelang.ir.stmt import Stmt


class BaseFunc(Node):
    """Base of everything an IRModule holds (prim_funcs now, graph functions later)."""

    __slots__ = ()


def _dict(mapping) -> dict:
    return dict(mapping or {})


def attr_items(key, value) -> dict:
    """``with_attr``'s arguments as a dict: ``(key, value)`` or ``({key: value, ...},)``."""
    if isinstance(key, dict):
        if value is not None:
            raise TypeError("with_attr takes a dict of attributes or a key and a value")
        return dict(key)
    if not isinstance(key, str):
        raise TypeError(f"an attribute key is a string, not {type(key).__name__}")
    return {key: value}


@attrs.frozen(eq=False, repr=False)
class PrimFunc(BaseFunc):
    """A tensor function.

    ``params`` are variables: a buffer parameter is a ``handle`` variable whose
    buffer is ``buffer_map[param]``; a scalar parameter is used directly. ``attrs``
    holds function attributes such as ``global_symbol`` and ``tir.noalias``.
    """

    params: tuple = define(converter=tuple)
    body: Stmt = child()
    ret_type: str | None = plain(default=None)
    buffer_map: dict = define(factory=dict, converter=_dict)
    attrs: dict = plain(factory=dict, converter=_dict)
    span: object = span_field()

    def with_attr(self, key, value=None) -> PrimFunc:
        """A copy with attribute ``key`` set to ``value``; as in TVM, ``key`` may be a
        dict of several attributes (``f.with_attr({"global_symbol": "mm_relu"})``)."""
        return attrs.evolve(self, attrs={**self.attrs, **attr_items(key, value)})

    def with_body(self, body: Stmt) -> PrimFunc:
        return self if body is self.body else attrs.evolve(self, body=body)

    def specialize(self, values: dict) -> PrimFunc:
        """A copy with scalar parameters / buffer sizes replaced by values (TVM's
        ``PrimFunc.specialize``); see :mod:`tilelang.transform.specialize`."""
        from tilelang.transform.specialize import specialize

        return specialize(self, values)

    @property
    def buffers(self) -> tuple:
        """The parameter buffers, in parameter order."""
        return tuple(self.buffer_map[p] for p in self.params if p in self.buffer_map)

    def scalar_params(self) -> tuple:
        return tuple(p for p in self.params if p not in self.buffer_map)


def is_var(x) -> bool:
    return isinstance(x, E.Var)


def __getattr__(name):
    # IRModule lives in tilelang.ir.module (TVM's path); `from tilelang.ir.function
    # import IRModule` keeps working without an import cycle between the two modules.
    if name == "IRModule":
        from tilelang.ir.module import IRModule

        return IRModule
    raise AttributeError(f"module 'tilelang.ir.function' has no attribute {name!r}")
