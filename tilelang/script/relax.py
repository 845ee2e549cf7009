"""``R``: graph functions in decorated Python programs.

    from tilelang.script import ir as I, relax as R, tir as T

    @I.ir_module
    class Module:
        @T.prim_func
        def relu(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")): ...

        @R.function
        def main(x: R.Tensor((8,), dtype="float32")) -> R.Tensor((8,), dtype="float32"):
            cls = Module
            with R.dataflow():
                y = R.call_tir(cls.relu, (x,), out_sinfo=R.Tensor((8,), dtype="float32"))
                R.output(y)
            return y

As with ``@T.prim_func``, the function body is never run: the source text is parsed
(:mod:`tilelang.relax.parser`). Only what Python evaluates when it defines the
function, the parameter and result annotations, needs a value here.
"""

from __future__ import annotations

import sys

from tilelang.script.source import in_class_body, parse_object


def function(func=None, *, pure: bool = True, private: bool = False):
    """Parse the decorated function as a graph function (returns a relax ``Function``).

    Inside an ``@I.ir_module`` class the function is returned unchanged: the module
    decorator parses the whole class at once. ``pure`` and ``private`` are accepted for
    TVM's spelling (tilelang's graph functions are pure; privacy is not modelled).
    """

    def decorate(function_):
        frame = sys._getframe(1 if func is None else 2)
        if in_class_body(frame):
            return function_
        module = parse_object(function_, frame, function_)
        ((_, parsed),) = module.functions.items()
        return parsed

    if func is None:
        return decorate
    return decorate(func)


class Tensor:
    """``R.Tensor((m, n), dtype="float32")`` as a Python annotation; the parser reads
    its meaning from the source."""

    def __init__(self, shape=None, dtype=None, ndim=-1):
        self.shape, self.dtype, self.ndim = shape, dtype, ndim

    def __repr__(self):
        return f"R.Tensor({self.shape!r}, dtype={self.dtype!r})"


__all__ = ["function", "Tensor"]
