"""Checking call arguments against a lowered PrimFunc, before any native code runs.

:class:`Signature` is built once per function from its ``params``, ``buffer_map`` and
``attrs["tl.size_vars"]`` (see docs/lowered_ir.md). ``signature.check(args)`` returns
the *checked arguments* every backend takes: one NumPy array per buffer parameter
(element 0 of the array is element 0 of the buffer), one Python number per scalar
parameter, then the value of each size variable. A mismatch raises
:class:`tilelang.ArgumentError` naming the parameter, e.g.::

    argument 'B' (2nd): expected shape (128, 128), got (128, 64)

and no array is touched.
"""

from __future__ import annotations

import numbers

import numpy as np

from tilelang.errors import ArgumentError
from tilelang.ir import bfloat16
from tilelang.ir import expr as E
from tilelang.ir.functor import post_order_visit
from tilelang.ir.stmt import BufferStore
from tilelang.runtime.ndarray import as_array


def ordinal(n: int) -> str:
    """``1`` -> ``"1st"``, ``2`` -> ``"2nd"``, ``11`` -> ``"11th"``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


_INT_EVAL = {
    E.Add: lambda a, b: a + b,
    E.Sub: lambda a, b: a - b,
    E.Mul: lambda a, b: a * b,
    E.FloorDiv: lambda a, b: a // b,
    E.FloorMod: lambda a, b: a % b,
    E.Div: lambda a, b: int(a / b),
    E.Mod: lambda a, b: a - int(a / b) * b,
    E.Min: min,
    E.Max: max,
}


def eval_int(expr: E.PrimExpr, values: dict) -> int | None:
    """The integer value of a shape expression given bound variables (None if unbound)."""
    if isinstance(expr, E.IntImm):
        return expr.value
    if isinstance(expr, E.Var):
        return values.get(expr)
    if isinstance(expr, E.Cast):
        return eval_int(expr.value, values)
    fn = _INT_EVAL.get(type(expr))
    if fn is None:
        return None
    a, b = eval_int(expr.a, values), eval_int(expr.b, values)
    return None if a is None or b is None else fn(a, b)


def written_data_vars(func) -> set:
    """Data variables of buffers the function may write (stores, writable access_ptrs,
    and every pointer handed to an extern call or another function of the module)."""
    written: dict[int, E.Var] = {}

    def visit(node):
        if isinstance(node, BufferStore):
            written[id(node.buffer.data)] = node.buffer.data
        elif isinstance(node, E.Call) and node.op == "tvm_access_ptr":
            mask = node.args[4]
            if not isinstance(mask, E.IntImm) or mask.value & 2:
                written[id(node.args[1])] = node.args[1]
        elif isinstance(node, E.Call) and node.op in ("call_extern", "call_tir"):
            for arg in node.args[1:]:
                if isinstance(arg, E.Var) and arg.dtype.is_handle():
                    written[id(arg)] = arg

    post_order_visit(func.body, visit)
    return set(written)


class Signature:
    """What a function's arguments must look like; see the module docstring."""

    def __init__(self, func, name: str):
        self.name = name
        self.params = tuple(func.params)
        self.buffer_map = dict(func.buffer_map)
        self.size_vars = tuple(func.attrs.get("tl.size_vars", ()))
        self.noalias = bool(func.attrs.get("tir.noalias", False))
        written = written_data_vars(func)
        self.writes = {
            id(p): id(self.buffer_map[p].data) in written
            for p in self.params
            if p in self.buffer_map
        }

    def describe(self) -> str:
        """``name(A, B, n)`` for messages."""
        return f"{self.name}({', '.join(p.name for p in self.params)})"

    def check(self, args: tuple) -> tuple:
        """The checked arguments for ``args``; raises ArgumentError on any mismatch."""
        if len(args) != len(self.params):
            many = "many" if len(args) > len(self.params) else "few"
            raise ArgumentError(
                f"too {many} arguments: {self.describe()} takes {len(self.params)}, got {len(args)}"
            )
        values: dict = {}
        origin: dict = {}
        checked, deferred = [], []
        for index, (param, arg) in enumerate(zip(self.params, args), start=1):
            label = f"argument '{param.name}' ({ordinal(index)})"
            buffer = self.buffer_map.get(param)
            if buffer is None:
                value = _check_scalar(label, param.dtype, arg)
                if param.dtype.is_integer():  # it may also size a buffer
                    self._bind(label, "value", param, value, values, origin, deferred)
                checked.append(value)
                continue
            array = self.check_array(label, buffer, arg)
            if self.writes.get(id(param)) and not array.flags.writeable:
                raise ArgumentError(f"{label}: the array is read-only but {self.name} writes it")
            self._match_layout(label, buffer, array, values, origin, deferred)
            checked.append(array)
        for label, what, expr, actual in deferred:
            try:
                expected = eval_int(expr, values)
            except ZeroDivisionError:
                raise ArgumentError(
                    f"{label}: the {what} {show_expr(expr)} divides by zero with these arguments"
                ) from None
            if expected is None:
                raise ArgumentError(
                    f"{label}: cannot work out the {what} {show_expr(expr)} from the arguments"
                )
            if expected != actual:
                raise ArgumentError(
                    f"{label}: expected {what} {show_expr(expr)} = {expected}, got {actual}"
                )
        if self.noalias:
            self._check_no_overlap(checked)
        for var in self.size_vars:
            if var not in values:
                raise ArgumentError(
                    f"{self.describe()}: no argument determines the size {var.name}"
                )
            checked.append(_fit_scalar(f"size {var.name}", var.dtype, values[var]))
        return tuple(checked)

    def check_array(self, label: str, buffer, arg):
        """The array for a buffer argument (a backend's subclass may accept more kinds,
        e.g. device arrays; the result needs ``shape``, ``dtype``, ``strides`` in bytes
        and ``flags.c_contiguous`` / ``flags.writeable``)."""
        return _check_array(label, buffer, arg)

    def _match_layout(self, label, buffer, array, values, origin, deferred) -> None:
        shape = array.shape
        expected_shape = tuple(eval_int(x, {}) for x in buffer.shape)
        if len(shape) != len(buffer.shape):
            raise ArgumentError(
                f"{label}: expected a {len(buffer.shape)}-D array of shape "
                f"{_show_shape(buffer.shape)}, got {len(shape)}-D shape {shape}"
            )
        if all(e is not None for e in expected_shape) and expected_shape != shape:
            raise ArgumentError(f"{label}: expected shape {expected_shape}, got {shape}")
        for dim, (expr, actual) in enumerate(zip(buffer.shape, shape)):
            self._bind(label, f"dimension {dim}", expr, actual, values, origin, deferred)
        itemsize = array.dtype.itemsize
        if not buffer.strides:
            if not array.flags.c_contiguous:
                raise ArgumentError(
                    f"{label}: expected a contiguous (row-major) array, got strides "
                    f"{tuple(s // itemsize for s in array.strides)} (in elements); "
                    "pass np.ascontiguousarray(x)"
                )
        else:
            for dim, (expr, actual) in enumerate(zip(buffer.strides, array.strides)):
                if actual % itemsize:
                    raise ArgumentError(f"{label}: stride {actual} bytes is not whole elements")
                self._bind(
                    label, f"stride {dim}", expr, actual // itemsize, values, origin, deferred
                )
        if isinstance(buffer.elem_offset, E.Var):
            # the array's first element is the buffer's first element
            self._bind(label, "elem_offset", buffer.elem_offset, 0, values, origin, deferred)

    @staticmethod
    def _bind(label, what, expr, actual, values, origin, deferred) -> None:
        if isinstance(expr, E.IntImm):
            if expr.value != actual:
                raise ArgumentError(f"{label}: expected {what} to be {expr.value}, got {actual}")
        elif isinstance(expr, E.Var):
            if expr in values:
                if values[expr] != actual:
                    raise ArgumentError(
                        f"{label}: {what} is {expr.name} = {values[expr]} from {origin[expr]}, "
                        f"got {actual}"
                    )
            else:
                if isinstance(expr, E.SizeVar) and actual < 0:
                    raise ArgumentError(f"{label}: {what} {expr.name} must be >= 0, got {actual}")
                values[expr], origin[expr] = actual, label
        else:
            deferred.append((label, what, expr, actual))

    def _check_no_overlap(self, checked) -> None:
        arrays = [(p, a) for p, a in zip(self.params, checked) if isinstance(a, np.ndarray)]
        for i, (p, a) in enumerate(arrays):
            for q, b in arrays[i + 1 :]:
                if (self.writes.get(id(p)) or self.writes.get(id(q))) and np.may_share_memory(a, b):
                    raise ArgumentError(
                        f"arguments '{p.name}' and '{q.name}' overlap in memory, but "
                        f"{self.name} is declared tir.noalias and writes one of them"
                    )


def show_expr(expr) -> str:
    """Short text of a shape expression for messages (``n``, ``128``, ``(n * 2)``)."""
    if isinstance(expr, E.IntImm):
        return str(expr.value)
    if isinstance(expr, E.Var):
        return expr.name
    if isinstance(expr, E.Cast):
        return show_expr(expr.value)
    if isinstance(expr, E.BinaryOp) and expr.symbol is not None:
        return f"({show_expr(expr.a)} {expr.symbol} {show_expr(expr.b)})"
    if isinstance(expr, E.BinaryOp):
        return f"{type(expr).__name__.lower()}({show_expr(expr.a)}, {show_expr(expr.b)})"
    return type(expr).__name__


def _show_shape(shape) -> str:
    items = [show_expr(x) for x in shape]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _check_array(label: str, buffer, arg) -> np.ndarray:
    array = as_array(arg)
    if array is None:
        raise ArgumentError(
            f"{label}: expected an array (NumPy, tilelang.nd or DLPack) for buffer "
            f"{buffer.name}, got {type(arg).__name__}"
        )
    if isinstance(array, np.ma.MaskedArray):
        # the mask would be ignored by compiled code but not by NumPy indexing
        raise ArgumentError(
            f"{label}: masked arrays are not accepted; pass .filled(value) or .data"
        )
    if type(array) is not np.ndarray:
        array = array.view(np.ndarray)  # np.matrix, memmap...: the same memory, plainly
    if buffer.dtype.is_bfloat16():
        # uint16 bits or ml_dtypes.bfloat16: the code sees the same memory as bits
        bits = bfloat16.as_bits(array)
        if bits is None:
            raise ArgumentError(
                f"{label}: expected dtype bfloat16 (a uint16 array of the bits, or "
                f"ml_dtypes.bfloat16), got {array.dtype}"
            )
        return bits
    expected = np.dtype(buffer.dtype.numpy_name())
    if array.dtype != expected:
        raise ArgumentError(f"{label}: expected dtype {buffer.dtype}, got {array.dtype}")
    return array


def _check_scalar(label: str, dtype, value):
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if dtype.is_bool():
        if not isinstance(value, (bool, np.bool_)):
            raise ArgumentError(f"{label}: expected a bool, got {type(value).__name__}")
        return bool(value)
    if dtype.is_integer():
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
            raise ArgumentError(f"{label}: expected an integer ({dtype}), got {value!r}")
        return _fit_scalar(label, dtype, int(value))
    if dtype.is_float():
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise ArgumentError(f"{label}: expected a number ({dtype}), got {value!r}")
        return float(value)
    if dtype.is_handle():
        if value is None or isinstance(value, numbers.Integral):
            return int(value or 0)
        raise ArgumentError(f"{label}: expected a pointer (int) for a handle, got {value!r}")
    raise ArgumentError(f"{label}: unsupported scalar type {dtype}")


def _fit_scalar(label: str, dtype, value: int) -> int:
    bits = dtype.bits
    low, high = (0, 2**bits - 1) if dtype.is_uint() else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if not low <= value <= high:
        raise ArgumentError(f"{label}: {value} does not fit in {dtype}")
    return value


__all__ = ["Signature", "ordinal", "eval_int"]
