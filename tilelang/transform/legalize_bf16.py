"""LegalizeBF16: bfloat16 computed in float32 and stored as its 16 bits.

No CPU backend has a bfloat16 type, so every CPU backend (python, c, llvm) runs this
on the lowered module before generating code (as TVM's BF16ComputeLegalize and
BF16StorageLegalize do late in its pipeline; the lowered module the runtime checks
arguments against still says ``bfloat16``):

* a buffer of ``bfloat16`` becomes a buffer of ``uint16`` over the same storage, so
  arrays are passed as their bits (``uint16`` or ``ml_dtypes.bfloat16`` arrays);
* a load from it is ``bf16_to_float(load)`` (exact), a store into it stores
  ``float_to_bf16(value)`` (rounded to nearest, ties to even; NaN stays NaN);
* every bfloat16 expression is computed in float32, and each operation whose result
  is a bfloat16 value (``+ - * /``, ``%``, ``//``, math calls, a cast to bfloat16,
  a constant) is rounded to bfloat16 right away, so a value typed bfloat16 always
  holds a bfloat16, as ``ml_dtypes`` arrays compute in NumPy. (TVM's legaliser instead
  keeps float32 between the operations of one expression and rounds at stores; the
  rule here makes every backend and constant folding agree on each operation.)
  ``min``, ``max``, selects and comparisons of bfloat16 values need no rounding.

A bfloat16 scalar parameter is refused with a BuildError (pass a one-element buffer).

``keep_storage=True`` is the CUDA form (CUDA has a bfloat16 storage type,
``__nv_bfloat16``, but its arithmetic rounds differently per arch): buffers stay
``bfloat16``, a load is ``Cast(float32, load)``, a store stores ``Cast(bfloat16,
value)``, and rounding an operation's result is ``Cast(float32, Cast(bfloat16, x))``;
the arithmetic itself is float32, the same per-operation rounding as above. A store
of a value loaded from bfloat16 (a copy into shared memory) moves the 16 bits as they
are, so a cooperative fetch stays a plain (vectorisable) copy.
"""

from __future__ import annotations

import attrs

from tilelang.errors import BuildError
from tilelang.ir import bfloat16
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Buffer
from tilelang.ir.comm_reducer import CommReducer
from tilelang.ir.dtype import DataType
from tilelang.ir.function import IRModule, PrimFunc
from tilelang.ir.functor import StmtExprMutator, post_order_visit

__all__ = ["legalize_bf16", "legalize_bf16_module", "uses_bf16"]

_ROUNDED = (E.Add, E.Sub, E.Mul, E.Div, E.Mod, E.FloorDiv, E.FloorMod)


def _f32(dtype: DataType) -> DataType:
    return DataType("float32").with_lanes(dtype.lanes)


def _u16(dtype: DataType) -> DataType:
    return DataType("uint16").with_lanes(dtype.lanes)


def to_float(bits: E.PrimExpr) -> E.PrimExpr:
    """The float32 value of bfloat16 bits (``uint16``)."""
    return E.Call(_f32(bits.dtype), "bf16_to_float", (bits,))


def to_bits(value: E.PrimExpr) -> E.PrimExpr:
    """The bfloat16 bits (``uint16``) of a float32 value, rounded to nearest even."""
    return E.Call(_u16(value.dtype), "float_to_bf16", (value,))


def _round(value: E.PrimExpr) -> E.PrimExpr:
    return to_float(to_bits(value))


def _cast_round(value: E.PrimExpr) -> E.PrimExpr:
    return E.Cast(_f32(value.dtype), E.Cast(_bf16(value.dtype), value))


def _bf16(dtype: DataType) -> DataType:
    return DataType("bfloat16").with_lanes(dtype.lanes)


class _Legalizer(StmtExprMutator):
    def __init__(self, keep_storage: bool = False):
        self.buffers: dict[Buffer, Buffer] = {}
        self.vars: dict[E.Var, E.Var] = {}
        self.keep_storage = keep_storage

    def _round(self, value: E.PrimExpr) -> E.PrimExpr:
        return _cast_round(value) if self.keep_storage else _round(value)

    def _load(self, value: E.PrimExpr) -> E.PrimExpr:
        """A float32 value of bfloat16 storage (bits, or a bfloat16 value)."""
        return E.Cast(_f32(value.dtype), value) if self.keep_storage else to_float(value)

    def _store(self, value: E.PrimExpr) -> E.PrimExpr:
        """The storage form of a float32 value that holds a bfloat16."""
        if not self.keep_storage:
            return to_bits(value)
        if isinstance(value, E.Cast) and value.value.dtype.element_of().is_bfloat16():
            return value.value  # the 16 bits as loaded (or rounded): no round trip
        return E.Cast(_bf16(value.dtype), value)

    # -- buffers and variables
    def _buffer(self, buffer: Buffer) -> Buffer:
        if self.keep_storage or not buffer.dtype.element_of().is_bfloat16():
            return buffer
        new = self.buffers.get(buffer)
        if new is None:
            new = self.buffers[buffer] = attrs.evolve(buffer, dtype=_u16(buffer.dtype))
        return new

    visit_buffer_ref = visit_buffer_def = _buffer

    def visit_var_def(self, var: E.Var) -> E.Var:
        if not var.dtype.element_of().is_bfloat16():
            return var
        new = self.vars.get(var)
        if new is None:
            new = self.vars[var] = E.Var(var.name, _f32(var.dtype))
        return new

    def visit_var(self, var: E.Var):
        return self.vars.get(var, var)

    # -- expressions
    def visit_float_imm(self, op: E.FloatImm):
        if op.dtype.is_bfloat16():
            return E.FloatImm("float32", bfloat16.round_value(op.value))
        return op

    def _arith(self, op):
        new = self.generic_visit(op)
        return self._round(new) if op.dtype.element_of().is_bfloat16() else new

    visit_add = visit_sub = visit_mul = visit_div = _arith
    visit_mod = visit_floor_div = visit_floor_mod = _arith

    def visit_cast(self, op: E.Cast):
        value = self.visit(op.value)
        if op.dtype.element_of().is_bfloat16():
            if value.dtype != _f32(op.dtype):
                value = E.Cast(_f32(op.dtype), value)
            return self._round(value)
        if value.dtype == op.dtype:
            return value
        return op if value is op.value else E.Cast(op.dtype, value)

    def visit_call(self, op: E.Call):
        if op.op == "tvm_thread_allreduce":
            return self._allreduce(op)
        if (
            self.keep_storage
            and op.op == "reinterpret"
            and (op.dtype.element_of().is_bfloat16() or op.args[0].dtype.element_of().is_bfloat16())
        ):
            return self._reinterpret_kept(op)
        if op.op == "reinterpret" and op.dtype.element_of().is_bfloat16():
            return to_float(self.visit(op.args[0]))  # bits -> the bfloat16 they hold
        if op.op == "reinterpret" and op.args[0].dtype.element_of().is_bfloat16():
            return to_bits(self.visit(op.args[0]))
        new = self.generic_visit(op)
        if not op.dtype.element_of().is_bfloat16():
            return new
        if op.op == "type_annotation":
            return new if self.keep_storage else attrs.evolve(new, dtype=_u16(op.dtype))
        return self._round(attrs.evolve(new, dtype=_f32(op.dtype)))

    def _reinterpret_kept(self, op: E.Call):
        """``reinterpret`` to or from bfloat16 with bfloat16 storage: the bits are
        reinterpreted as they are; a bfloat16 operand is first stored back to 16 bits."""
        (arg,) = op.args
        value = self.visit(arg)
        if arg.dtype.element_of().is_bfloat16():
            value = self._store(value)
        new = E.Call(op.dtype, "reinterpret", (value,))
        return self._load(new) if op.dtype.element_of().is_bfloat16() else new

    def visit_buffer_load(self, op: E.BufferLoad):
        new = self.generic_visit(op)
        return self._load(new) if op.buffer.dtype.element_of().is_bfloat16() else new

    def visit_attr_stmt(self, op: S.AttrStmt):
        """A cross-thread reduction's reducer over bfloat16 combines in float32,
        rounded after each combination, as the reduction it stands for did."""
        new = self.generic_visit(op)
        reducer = op.node
        if op.attr_key != "reduce_scope" or not isinstance(reducer, CommReducer):
            return new
        if not any(v.dtype.element_of().is_bfloat16() for v in reducer.lhs):
            return new
        lhs = tuple(self.visit_var_def(v) for v in reducer.lhs)
        rhs = tuple(self.visit_var_def(v) for v in reducer.rhs)
        result = tuple(self.visit(r) for r in reducer.result)
        identity = tuple(self.visit(v) for v in reducer.identity_element)
        return attrs.evolve(new, node=CommReducer(lhs, rhs, result, identity))

    def _allreduce(self, op: E.Call):
        """``tvm_thread_allreduce``: its values legalised, its destinations (buffer
        elements the result is stored into) left as they are."""
        count = op.args[0].value if isinstance(op.args[0], E.IntImm) else 0
        args = list(op.args)
        for i in range(1, 1 + count):
            args[i] = self.visit(args[i])
        return attrs.evolve(op, args=tuple(args))

    # -- statements
    def visit_buffer_store(self, op: S.BufferStore):
        new = self.generic_visit(op)
        if op.buffer.dtype.element_of().is_bfloat16():
            new = attrs.evolve(new, value=self._store(new.value))
        return new

    def visit_allocate(self, op: S.Allocate):
        new = self.generic_visit(op)
        if op.dtype.element_of().is_bfloat16() and not self.keep_storage:
            new = attrs.evolve(new, dtype=_u16(op.dtype))
        return new


class _Found(Exception):
    pass


def uses_bf16(func: PrimFunc) -> bool:
    """True when ``func`` has a bfloat16 buffer, value or allocation anywhere."""

    def visit(node):
        dtype = getattr(node, "dtype", None)
        if isinstance(dtype, str) and DataType(dtype).element_of().is_bfloat16():
            raise _Found
        buffer = getattr(node, "buffer", None)
        if isinstance(buffer, Buffer) and buffer.dtype.element_of().is_bfloat16():
            raise _Found

    if any(b.dtype.element_of().is_bfloat16() for b in func.buffer_map.values()):
        return True
    try:
        post_order_visit(func.body, visit)
    except _Found:
        return True
    return False


def legalize_bf16(func: PrimFunc, name: str = "", keep_storage: bool = False) -> PrimFunc:
    """``func`` (lowered) with bfloat16 as float32 arithmetic over uint16 storage
    (bfloat16 storage with ``keep_storage``); ``func`` itself when it has no bfloat16."""
    if not uses_bf16(func):
        return func
    for param in func.params:
        if param not in func.buffer_map and param.dtype.element_of().is_bfloat16():
            raise BuildError(
                f"function {name or func.attrs.get('global_symbol', '?')}: bfloat16 scalar "
                f"parameter {param.name} is not supported; pass a one-element buffer"
            )
    mutator = _Legalizer(keep_storage)
    body = mutator.visit(func.body)
    buffer_map = {p: mutator._buffer(b) for p, b in func.buffer_map.items()}
    return attrs.evolve(func, body=body, buffer_map=buffer_map)


def legalize_bf16_module(mod: IRModule, keep_storage: bool = False) -> IRModule:
    """Every PrimFunc of ``mod`` through :func:`legalize_bf16` (the same module
    object when none uses bfloat16)."""
    changed = {}
    for key, func in mod.functions.items():
        if isinstance(func, PrimFunc):
            new = legalize_bf16(func, key, keep_storage)
            if new is not func:
                changed[key] = new
    if not changed:
        return mod
    return attrs.evolve(mod, functions={**mod.functions, **changed})
