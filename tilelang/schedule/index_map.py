"""Index maps (TVM's ``IndexMap``): a function from some index variables to new
indices, written ``lambda i, j: (j, i // 2, i % 2)``.

An :class:`IndexMap` is made from a Python function by calling it once on fresh
variables named like its parameters; it prints back as that lambda, so a trace that
holds one prints as replayable Python.
"""

from __future__ import annotations

import inspect

from tilelang.arith import simplify
from tilelang.arith.int_set import eval_interval, range_extent
from tilelang.errors import ArgumentError
from tilelang.ir import expr as E
from tilelang.ir.buffer import Range
from tilelang.ir.convert import convert
from tilelang.ir.functor import substitute


class _AxisSeparator:
    """The mark ``IndexMap.AXIS_SEPARATOR`` between the outputs of a layout map: the
    new buffer's axes are grouped there (its ``axis_separators``)."""

    def __repr__(self) -> str:
        return "IndexMap.AXIS_SEPARATOR"

    __str__ = __repr__


class IndexMap:
    """``final_indices`` as expressions of ``initial_indices`` (variables);
    ``axis_separators``: where :data:`AXIS_SEPARATOR` marks stood among them."""

    #: written between two outputs of a transform_layout map to separate axis groups
    AXIS_SEPARATOR = _AxisSeparator()

    def __init__(self, initial_indices, final_indices, axis_separators=()):
        self.initial_indices = tuple(initial_indices)
        self.final_indices = tuple(final_indices)
        self.axis_separators = tuple(axis_separators)

    @staticmethod
    def from_func(func, ndim: int | None = None, dtype: str = "int32") -> IndexMap:
        """The map computed by ``func`` (its positional parameters are the inputs; a
        ``*args`` function takes ``ndim`` of them). ``func`` may return one expression
        or a tuple/list of them."""
        if isinstance(func, IndexMap):
            return func
        if not callable(func):
            raise ArgumentError(f"an index map is a function of the indices, not {func!r}")
        params = list(inspect.signature(func).parameters.values())
        if any(p.kind == p.VAR_POSITIONAL for p in params):
            if ndim is None:
                raise ArgumentError("an index map written with *args needs the number of indices")
            names = [f"i{d}" for d in range(ndim)]
        else:
            names = [p.name for p in params]
        variables = [E.Var(name, dtype) for name in names]
        result = func(*variables)
        if not isinstance(result, (list, tuple)):
            result = [result]
        finals, separators = split_separators(result)
        return IndexMap(variables, [convert(x) for x in finals], separators)

    def map_indices(self, indices) -> list:
        """The final indices with the initial variables replaced by ``indices``."""
        if len(indices) != len(self.initial_indices):
            raise ArgumentError(
                f"the index map takes {len(self.initial_indices)} indices, not {len(indices)}"
            )
        vmap = {var: convert(x) for var, x in zip(self.initial_indices, indices)}
        return [simplify(substitute(e, vmap)) for e in self.final_indices]

    def map_shape(self, shape) -> list:
        """The extent of each final index while the inputs range over ``shape``; None
        where it has no bound."""
        ranges = {
            var: Range(0, convert(extent)) for var, extent in zip(self.initial_indices, shape)
        }
        out = []
        for expr in self.final_indices:
            lo, hi = eval_interval(expr, ranges)
            out.append(None if lo is None or hi is None else range_extent(lo, hi))
        return out

    def __str__(self) -> str:
        params = ", ".join(v.name for v in self.initial_indices)
        parts = [e.script() for e in self.final_indices]
        for position in reversed(self.axis_separators):
            parts.insert(position, str(self.AXIS_SEPARATOR))
        body = ", ".join(parts)
        return f"lambda {params}: ({body}{',' if len(self.final_indices) == 1 else ''})"

    def __repr__(self) -> str:
        return str(self)


def split_separators(outputs) -> tuple[list, list]:
    """``(outputs without the AXIS_SEPARATOR marks, the marks' positions among the
    remaining outputs)``."""
    finals, separators = [], []
    for x in outputs:
        if isinstance(x, _AxisSeparator):
            separators.append(len(finals))
        else:
            finals.append(x)
    return finals, separators
