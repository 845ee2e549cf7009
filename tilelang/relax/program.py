"""Compiling a graph function into a VM program: registers, instructions and a
storage plan.

Every call becomes one :class:`Instruction` that writes a fresh output into a
*storage*. Storages are planned here, once: an output may reuse the storage of a
value whose last use is an earlier instruction, when both have the same dtype and a
provably equal shape. The function's result never shares storage with a later
value, and parameters and constants are never written.
"""

from __future__ import annotations

import attrs

from tilelang.errors import BuildError
from tilelang.relax.expr import (
    Call,
    Constant,
    Function,
    Tuple,
    Var,
    callee_name,
)
from tilelang.relax.shape import same_shape


@attrs.frozen
class Operand:
    """Where an argument comes from: a register or a constant."""

    kind: str  # "reg" or "const"
    index: int


@attrs.frozen
class Instruction:
    """``registers[out] = callee(*args, new output)``."""

    callee: str
    kind: str  # "prim_func" (in the built library) or "packed" (registered)
    args: tuple  # Operands
    arg_names: tuple  # for messages
    out: int
    out_name: str
    out_shape: tuple  # PrimExprs
    out_dtype: str
    storage: int


@attrs.frozen
class Program:
    """A compiled graph function."""

    name: str
    func: Function
    params: tuple  # graph Vars, registers 0..len-1
    instructions: tuple
    constants: tuple  # NumPy arrays
    result: Operand
    num_registers: int
    num_storages: int
    #: the storage each call's output lives in, by the bound variable's name
    storage_of: dict = attrs.field(factory=dict)


def compile_function(name: str, func: Function, resolve) -> Program:
    """The program of ``func``. ``resolve(callee_name, call)`` says whether a callee is
    a ``"prim_func"`` or ``"packed"`` (or raises :class:`BuildError`)."""
    bound: dict = {param: Operand("reg", i) for i, param in enumerate(func.params)}
    constants: list = []
    instructions: list = []
    num_registers = len(func.params)

    def operand(expr, what: str) -> Operand:
        if isinstance(expr, Constant):
            constants.append(expr.data)
            return Operand("const", len(constants) - 1)
        if isinstance(expr, Var):
            if expr not in bound:
                raise BuildError(f"{name}: {what} uses {expr.name_hint!r} before it is bound")
            return bound[expr]
        raise BuildError(f"{name}: {what} must be a variable or a constant, got {expr!r}")

    for block in func.body.blocks:
        for binding in block.bindings:
            var, value = binding.var, binding.value
            if isinstance(value, (Var, Constant)):
                bound[var] = operand(value, f"the binding of {var.name_hint!r}")
                continue
            if not isinstance(value, Call):
                raise BuildError(f"{name}: cannot build the binding of {var.name_hint!r}")
            if value.op not in ("relax.call_tir", "relax.call_dps_packed"):
                raise BuildError(f"{name}: the operator {value.op} cannot be built")
            callee = callee_name(value)
            kind = resolve(callee, value)
            fields = value.args[1].fields if isinstance(value.args[1], Tuple) else value.args[1:]
            args = tuple(operand(a, f"an argument of {callee}") for a in fields)
            names = tuple(getattr(a, "name_hint", "a constant") for a in fields)
            sinfo = value.struct_info
            bound[var] = Operand("reg", num_registers)
            instructions.append(
                Instruction(
                    callee,
                    kind,
                    args,
                    names,
                    num_registers,
                    var.name_hint,
                    sinfo.shape,
                    str(sinfo.dtype),
                    -1,
                )  # fmt: skip
            )
            num_registers += 1
    result = operand(func.body.body, "the result")
    planned, count = _plan_storage(instructions, result)
    return Program(
        name, func, tuple(func.params), tuple(planned), tuple(constants), result,
        num_registers, count, {ins.out_name: ins.storage for ins in planned},
    )  # fmt: skip


def _plan_storage(instructions: list, result: Operand) -> tuple[list, int]:
    """Assigns storages: a dead value's storage is reused by a later output of the same
    dtype and shape."""
    last_use: dict[int, int] = {}
    for index, ins in enumerate(instructions):
        for arg in ins.args:
            if arg.kind == "reg":
                last_use[arg.index] = index
    if result.kind == "reg":
        last_use[result.index] = len(instructions)  # lives past the end
    storages: list[tuple] = []  # (dtype, shape) per storage
    free: list[int] = []
    live: dict[int, int] = {}  # register -> storage
    planned = []
    for index, ins in enumerate(instructions):
        for register, storage in list(live.items()):
            if last_use.get(register, -1) < index:
                free.append(storage)
                del live[register]
        chosen = None
        for storage in free:
            dtype, shape = storages[storage]
            if dtype == ins.out_dtype and same_shape(shape, ins.out_shape):
                chosen = storage
                break
        if chosen is None:
            storages.append((ins.out_dtype, ins.out_shape))
            chosen = len(storages) - 1
        else:
            free.remove(chosen)
        live[ins.out] = chosen
        planned.append(attrs.evolve(ins, storage=chosen))
    return planned, len(storages)
