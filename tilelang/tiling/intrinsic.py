"""Accelerator instructions declared as extern C functions.

An accelerator's instructions (DMA loads and stores of strided sub-tensors, matrix
units...) are modelled as calls of C functions that a user's instruction library
implements. Declaring one says what its operands are::

    load = intrinsic("load", src=tensor("r", 4), slot="int32")
    load(ping_input, pp.index)   # T.evaluate(T.call_extern("int32", "load", ...))

A tensor operand is passed as the root buffer's base pointer, the view's address
(elements from the root), its shape and its strides; a scalar operand as itself.
:meth:`Intrinsic.c_prototype` prints the C declaration the library must provide, and
:func:`instructions` reads the calls of a body back as :class:`Instruction` records
(the "instruction list" of a tiled program).
"""

from __future__ import annotations

import attrs

from tilelang.errors import ArgumentError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.convert import convert
from tilelang.ir.dtype import DataType
from tilelang.ir.functor import post_order_visit
from tilelang.ir.op import access_ptr, call_extern
from tilelang.tiling import arith
from tilelang.tiling.view import TensorView

#: The C type of addresses, shapes and strides passed to instructions.
INDEX_DTYPE = DataType("int32")

_C_TYPES = {
    "float16": "uint16_t", "float32": "float", "float64": "double",
    "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "bool": "bool",
}  # fmt: skip


@attrs.frozen
class TensorOperand:
    """A tensor-view operand: access ``mode`` (``"r"``, ``"w"`` or ``"rw"``), rank and
    element dtype."""

    mode: str
    ndim: int
    dtype: DataType = attrs.field(default="float32", converter=DataType)

    def __attrs_post_init__(self):
        if self.mode not in ("r", "w", "rw"):
            raise ArgumentError(f"a tensor operand's mode is 'r', 'w' or 'rw', not {self.mode!r}")


def tensor(mode: str, ndim: int, dtype="float32") -> TensorOperand:
    """Declares a tensor-view operand of an :func:`intrinsic`."""
    return TensorOperand(mode, ndim, dtype)


@attrs.frozen
class ViewArgs:
    """A decoded tensor operand: the root buffer's data var, address, shape, strides
    (ints when concrete)."""

    data: E.Var
    addr: arith.Value
    shape: tuple
    strides: tuple


@attrs.frozen
class Instruction:
    """One decoded instruction call: its name and operands by name."""

    name: str
    operands: dict

    def __getitem__(self, operand: str):
        return self.operands[operand]


@attrs.frozen
class Intrinsic:
    """An instruction: C symbol ``name``, named operands, result ``dtype``."""

    name: str
    operands: tuple  # ((name, TensorOperand | DataType), ...)
    dtype: DataType = attrs.field(default="int32", converter=DataType)

    def __call__(self, *args, **kwargs) -> S.Evaluate:
        """``T.evaluate(T.call_extern(dtype, name, ...))`` for these operands."""
        values = self._bind(args, kwargs)
        flat = []
        for (name, kind), value in zip(self.operands, values):
            if isinstance(kind, TensorOperand):
                flat.extend(self._view_args(name, kind, value))
            elif kind.is_integer():
                flat.append(arith.typed(arith.value(value), kind))
            else:
                flat.append(convert(value, kind))
        return S.Evaluate(call_extern(self.dtype, self.name, *flat))

    def _bind(self, args, kwargs) -> list:
        names = [name for name, _ in self.operands]
        if len(args) > len(names):
            raise ArgumentError(f"{self.name} takes {len(names)} operands, got {len(args)}")
        bound = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names or key in bound:
                raise ArgumentError(f"{self.name}: unexpected or repeated operand {key!r}")
            bound[key] = value
        missing = [n for n in names if n not in bound]
        if missing:
            raise ArgumentError(f"{self.name}: missing operands {', '.join(missing)}")
        return [bound[n] for n in names]

    def _view_args(self, name, kind: TensorOperand, view) -> list:
        if not isinstance(view, TensorView):
            raise ArgumentError(f"{self.name}: operand {name} needs a TensorView, got {view!r}")
        if view.ndim != kind.ndim or view.dtype != kind.dtype:
            raise ArgumentError(
                f"{self.name}: operand {name} is a {kind.ndim}-d {kind.dtype} tensor, got a "
                f"{view.ndim}-d {view.dtype} view of {view.name}"
            )
        index = [arith.typed(x, INDEX_DTYPE) for x in (view.addr, *view.shape, *view.strides)]
        return [access_ptr(view.buffer, kind.mode), *index]

    def decode(self, call) -> Instruction:
        """The operands of a call of this instruction (an ``Evaluate`` or its ``Call``)."""
        if isinstance(call, S.Evaluate):
            call = call.value
        args = list(call.args[1:])
        operands = {}
        for name, kind in self.operands:
            if isinstance(kind, TensorOperand):
                pointer, addr = args[0], args[1]
                shape = args[2 : 2 + kind.ndim]
                strides = args[2 + kind.ndim : 2 + 2 * kind.ndim]
                args = args[2 + 2 * kind.ndim :]
                operands[name] = ViewArgs(
                    pointer.args[1],
                    arith.value(addr),
                    tuple(map(arith.value, shape)),
                    tuple(map(arith.value, strides)),
                )
            elif kind.is_integer():
                operands[name] = arith.value(args.pop(0))
            else:
                operands[name] = args.pop(0)
        return Instruction(self.name, operands)

    def c_prototype(self) -> str:
        """The C declaration an instruction library must implement."""
        params = []
        index = _C_TYPES[INDEX_DTYPE]
        for name, kind in self.operands:
            if isinstance(kind, TensorOperand):
                const = "const " if kind.mode == "r" else ""
                params.append(f"{const}{_C_TYPES[kind.dtype]}* {name}")
                params.append(f"{index} {name}_addr")
                params += [f"{index} {name}_shape{k}" for k in range(kind.ndim)]
                params += [f"{index} {name}_stride{k}" for k in range(kind.ndim)]
            else:
                params.append(f"{_C_TYPES[kind]} {name}")
        return f"{_C_TYPES[self.dtype]} {self.name}({', '.join(params)});"


def intrinsic(name: str, dtype="int32", **operands) -> Intrinsic:
    """Declares the instruction ``name`` (its C symbol) with named operands, in order:
    :func:`tensor` for a tensor view, a dtype string for a scalar."""
    kinds = []
    for operand, kind in operands.items():
        kinds.append((operand, kind if isinstance(kind, TensorOperand) else DataType(kind)))
    return Intrinsic(name, tuple(kinds), dtype)


def instructions(body, *intrinsics: Intrinsic) -> list[Instruction]:
    """The calls of ``intrinsics`` in ``body``, in program order, decoded."""
    by_name = {intr.name: intr for intr in intrinsics}
    found: list[Instruction] = []

    def collect(node):
        if isinstance(node, S.Evaluate) and isinstance(node.value, E.Call):
            call = node.value
            if call.op == "call_extern" and call.args[0].value in by_name:
                found.append(by_name[call.args[0].value].decode(call))

    post_order_visit(body, collect)
    return found
