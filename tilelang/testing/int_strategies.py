"""Hypothesis strategies for integer programs that overflow on purpose.

:func:`tilelang.testing.strategies.program_cases` keeps values small so that nothing
overflows; this module does the opposite. ``integer_cases()`` draws elementwise
programs over every integer type (int8..int64, uint8..uint64) whose inputs span the
whole range of their types and whose expressions add, multiply, shift, negate, mix
widths through casts and combine loop variables with large constants, so results wrap.
Every backend must wrap exactly as two's-complement machine integers of the
expression's type do (C's integer promotion narrowed back, signed overflow wrapping).

What stays excluded, because it is undefined on real machines rather than wrapping:
division or modulo by zero or by -1 (``INT_MIN / -1`` traps), and shifts by a negative
amount or by at least the type's width.
"""

from __future__ import annotations

import attrs
import numpy as np
from hypothesis import strategies as st

from tilelang.ir import expr as E
from tilelang.ir import op
from tilelang.ir import stmt as S
from tilelang.ir.buffer import decl_buffer
from tilelang.ir.function import PrimFunc
from tilelang.testing.strategies import ProgramCase

INTEGER_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

__all__ = ["INTEGER_DTYPES", "IntegerCase", "integer_cases"]


@attrs.frozen
class IntegerCase(ProgramCase):
    """A :class:`ProgramCase` whose integer inputs take values over their whole range
    (the extremes included)."""

    def make_arguments(self, seed: int = 0) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        arrays = []
        for param in self.func.params:
            buffer = self.func.buffer_map[param]
            shape, dtype = self.shape_of(buffer), np.dtype(buffer.dtype.numpy_name())
            if buffer.name in self.outputs:
                arrays.append(np.zeros(shape, dtype=dtype))
                continue
            info = np.iinfo(dtype)
            values = rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
            extremes = np.array([info.min, info.max, 0, -1 if info.min else 1], dtype=dtype)
            count = min(values.size, extremes.size)
            values.reshape(-1)[:count] = extremes[:count]
            arrays.append(values)
        return arrays


def _constant(draw, dtype: str) -> E.IntImm:
    low, high = E.IntImm(dtype, 0).dtype.value_range()
    value = draw(st.one_of(st.sampled_from([low, high, low + 1, high - 1, 1, 2]),
                           st.integers(low, high)))  # fmt: skip
    return E.IntImm(dtype, value)


def _divisor(draw, dtype: str) -> E.IntImm:
    """A nonzero constant other than -1."""
    high = min(1000, E.IntImm(dtype, 0).dtype.value_range()[1])
    signed = not dtype.startswith("u")
    value = draw(st.integers(2, high) | st.integers(-high, -2) if signed else st.integers(1, high))
    return E.IntImm(dtype, value)


def _leaf(draw, ctx, dtype: str) -> E.PrimExpr:
    loop_var, inputs = ctx
    kind = draw(st.sampled_from(["load", "load", "const", "loop"]))
    if kind == "const":
        return _constant(draw, dtype)
    if kind == "loop":
        # the loop variable scaled past int32 (the python reference's ints must wrap too)
        scaled = E.Mul(loop_var, E.IntImm("int32", draw(st.integers(2**20, 2**31 - 1))))
        return scaled.astype(dtype)
    buffer = draw(st.sampled_from(inputs))
    return E.BufferLoad(buffer, (loop_var,)).astype(dtype)


def _expr(draw, ctx, dtype: str, depth: int) -> E.PrimExpr:
    if depth == 0:
        return _leaf(draw, ctx, dtype)
    kinds = ["arith", "arith", "shift", "bitwise", "div", "minmax", "select", "cast", "leaf"]
    kind = draw(st.sampled_from(kinds))
    if kind == "leaf":
        return _leaf(draw, ctx, dtype)
    a = _expr(draw, ctx, dtype, depth - 1)
    if kind == "arith":
        b = _expr(draw, ctx, dtype, depth - 1)
        return (E.Add, E.Sub, E.Mul)[draw(st.integers(0, 2))](a, b)
    if kind == "shift":
        amount = E.IntImm(dtype, draw(st.integers(0, E.IntImm(dtype, 0).dtype.bits - 1)))
        return op.call_intrin(draw(st.sampled_from(["shift_left", "shift_right"])), a, amount)
    if kind == "bitwise":
        name = draw(st.sampled_from(["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"]))
        if name == "bitwise_not":
            return op.call_intrin(name, a)
        return op.call_intrin(name, a, _expr(draw, ctx, dtype, depth - 1))
    if kind == "div":
        node = draw(st.sampled_from([E.Div, E.Mod, E.FloorDiv, E.FloorMod]))
        return node(a, _divisor(draw, dtype))
    if kind == "minmax":
        return (E.Min, E.Max)[draw(st.integers(0, 1))](a, _expr(draw, ctx, dtype, depth - 1))
    if kind == "select":
        b, c = _expr(draw, ctx, dtype, depth - 1), _expr(draw, ctx, dtype, 0)
        return E.Select(E.LT(a, b), c, a)
    # through another integer type and back: truncation, sign or zero extension
    other = draw(st.sampled_from(INTEGER_DTYPES))
    return E.Cast(dtype, _expr(draw, ctx, other, depth - 1))


@st.composite
def _generate(draw):
    extent = draw(st.integers(1, 8))
    n_inputs = draw(st.integers(1, 3))
    inputs = [
        decl_buffer((extent,), draw(st.sampled_from(INTEGER_DTYPES)), f"A{i}")
        for i in range(n_inputs)
    ]
    out = decl_buffer((extent,), draw(st.sampled_from(INTEGER_DTYPES)), "B0")
    loop_var = E.Var("i", "int32")
    value = _expr(draw, (loop_var, inputs), str(out.dtype), draw(st.integers(1, 4)))
    body = S.For(loop_var, E.IntImm("int32", 0), E.IntImm("int32", extent),
                 S.ForKind.SERIAL, S.BufferStore(out, value, (loop_var,)))  # fmt: skip
    buffers = [*inputs, out]
    params = [E.Var(b.name.lower(), "handle") for b in buffers]
    func = PrimFunc(params, body, buffer_map=dict(zip(params, buffers)),
                    attrs={"global_symbol": "main"})  # fmt: skip
    return IntegerCase(func, {}, tuple(b.name for b in inputs), ("B0",))


def integer_cases() -> st.SearchStrategy[IntegerCase]:
    """Elementwise integer programs that overflow (see the module docstring)."""
    return _generate()
