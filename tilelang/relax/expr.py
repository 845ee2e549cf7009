"""Graph-level IR (TVM's Relax): variables, constants, calls, bindings, dataflow
blocks and functions.

A :class:`Function` computes tensors by calling tensor functions in
destination-passing style: ``call_tir(gvar, args, out_sinfo)`` calls a prim_func of
the module and ``call_dps_packed(name, args, out_sinfo)`` a prim_func or a
registered library function (``tilelang.register_func``); both allocate the output
described by ``out_sinfo``, pass it last, and return it.

Nodes are immutable and share the IR's field roles, so ``structural_equal``
compares graphs up to renaming of variables (including symbolic sizes).
"""

from __future__ import annotations

import hashlib

import attrs
import numpy as np

from tilelang.errors import ArgumentError
from tilelang.ir import BaseFunc
from tilelang.ir.dtype import dtype_from_numpy
from tilelang.ir.node import Node, child, define, ignored, plain, span_field
from tilelang.relax.struct_info import StructInfo, TensorStructInfo


def _print_script(self, printer, name) -> None:
    """How the IR printer prints graph-level nodes (see tilelang.relax.printer)."""
    from tilelang.relax.printer import print_function, print_node

    if isinstance(self, Function):
        print_function(printer, self, name)
    else:
        print_node(printer, self)


class Expr(Node):
    """Base of graph-level expressions."""

    __slots__ = ()
    is_root = True
    print_script = _print_script


@attrs.frozen(eq=False, repr=False)
class Var(Expr):
    """A graph variable; two variables with one name are still different variables."""

    name_hint: str = ignored()
    struct_info: StructInfo = child()
    span: object = span_field()

    #: structural equality maps variables (and compares their struct_info) instead of
    #: comparing them field by field
    structural_symbol = True
    __hash__ = object.__hash__

    @property
    def name(self) -> str:
        return self.name_hint


@attrs.frozen(eq=False, repr=False)
class DataflowVar(Var):
    """A variable local to a dataflow block (not visible after ``R.output``)."""


def _fingerprint(data: np.ndarray) -> tuple:
    digest = hashlib.sha1(np.ascontiguousarray(data).tobytes()).hexdigest()
    return (str(data.dtype), tuple(data.shape), digest)


@attrs.frozen(eq=False, repr=False)
class Constant(Expr):
    """A bound tensor value (weights). Equal constants have equal contents."""

    data: np.ndarray = ignored()
    struct_info: StructInfo = child()
    fingerprint: tuple = plain()
    span: object = span_field()

    @staticmethod
    def from_array(array, name: str | None = None) -> Constant:
        data = np.array(array, copy=True)
        data.setflags(write=False)  # a constant is immutable, like every node
        sinfo = TensorStructInfo(tuple(int(d) for d in data.shape), dtype_from_numpy(data.dtype))
        return Constant(data, sinfo, _fingerprint(data))


@attrs.frozen(eq=False, repr=False)
class GlobalVar(Expr):
    """The name of a function of the module (``cls.linear0`` in text)."""

    name_hint: str = plain()
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class ExternFunc(Expr):
    """A packed function named by string: a module prim_func or a registered one."""

    global_symbol: str = plain()
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class Tuple(Expr):
    """A tuple of values (the argument list of a call)."""

    fields: tuple = child(converter=tuple)
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class Call(Expr):
    """A call of the operator ``op`` (``"relax.call_tir"``, ``"relax.call_dps_packed"``).

    ``sinfo_args`` describes the result (the output's struct info).
    """

    op: str = plain()
    args: tuple = child(converter=tuple)
    sinfo_args: tuple = child(factory=tuple, converter=tuple)
    span: object = span_field()

    @property
    def struct_info(self) -> StructInfo:
        return self.sinfo_args[0]


@attrs.frozen(eq=False, repr=False)
class VarBinding(Node):
    """``var = value``."""

    print_script = _print_script

    var: Var = define()
    value: Expr = child()
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class BindingBlock(Node):
    """Bindings in order."""

    print_script = _print_script

    bindings: tuple = child(converter=tuple)
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class DataflowBlock(BindingBlock):
    """``with R.dataflow():`` — pure bindings; the non-dataflow variables bound here
    are the block's outputs (``R.output(...)``)."""

    @property
    def outputs(self) -> tuple:
        return tuple(b.var for b in self.bindings if not isinstance(b.var, DataflowVar))


@attrs.frozen(eq=False, repr=False)
class SeqExpr(Expr):
    """Blocks of bindings followed by the result expression."""

    blocks: tuple = child(converter=tuple)
    body: Expr = child()
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class Function(BaseFunc):
    """A graph-level function (``@R.function``)."""

    print_script = _print_script

    params: tuple = define(converter=tuple)
    body: SeqExpr = child()
    ret_struct_info: StructInfo | None = child(default=None)
    attrs: dict = plain(factory=dict, converter=lambda m: dict(m or {}))
    span: object = span_field()


def struct_info_of(expr) -> StructInfo:
    """The struct info of a graph expression."""
    if isinstance(expr, (Var, Constant, Call)):
        return expr.struct_info
    raise ArgumentError(f"{type(expr).__name__} has no tensor struct info")


def _out_sinfo(out_sinfo) -> tuple:
    if isinstance(out_sinfo, (list, tuple)):
        if len(out_sinfo) != 1:
            raise ArgumentError("calls with several outputs are not supported; give one out_sinfo")
        out_sinfo = out_sinfo[0]
    if not isinstance(out_sinfo, TensorStructInfo):
        raise ArgumentError(f"out_sinfo must be a TensorStructInfo, got {out_sinfo!r}")
    return (out_sinfo,)


def _args(args) -> Tuple:
    if isinstance(args, Tuple):
        return args
    if isinstance(args, Expr):
        args = (args,)
    for arg in args:
        if not isinstance(arg, (Var, Constant)):
            raise ArgumentError(f"call arguments must be variables or constants, got {arg!r}")
    return Tuple(tuple(args))


def call_tir(gvar, args, out_sinfo) -> Call:
    """Calls the module's prim_func ``gvar`` on ``args`` plus a new output of
    ``out_sinfo``, and evaluates to that output."""
    if isinstance(gvar, str):
        gvar = GlobalVar(gvar)
    if not isinstance(gvar, GlobalVar):
        raise ArgumentError(f"call_tir needs a GlobalVar, got {gvar!r}")
    return Call("relax.call_tir", (gvar, _args(args)), _out_sinfo(out_sinfo))


def call_dps_packed(func, args, out_sinfo) -> Call:
    """Calls the packed function ``func`` (a module prim_func or a registered
    function, by name) on ``args`` plus a new output of ``out_sinfo``."""
    if isinstance(func, str):
        func = ExternFunc(func)
    if not isinstance(func, ExternFunc):
        raise ArgumentError(f"call_dps_packed needs a function name, got {func!r}")
    return Call("relax.call_dps_packed", (func, _args(args)), _out_sinfo(out_sinfo))


def const(value, dtype=None) -> Constant:
    """A constant tensor from a NumPy array (or anything ``np.asarray`` accepts).

    ``dtype`` is a dtype string, or a :class:`TensorStructInfo` the value must match
    (its dtype converts the value; its shape, when given and constant, must be the
    value's): ``relax.const(w, relax.TensorStructInfo((128, 784), "float32"))``.
    """
    if isinstance(dtype, TensorStructInfo):
        sinfo = dtype
        data = np.asarray(value, dtype=str(sinfo.dtype))
        expected = _constant_shape(sinfo)
        if expected is not None and tuple(data.shape) != expected:
            raise ArgumentError(
                f"relax.const: the value has shape {tuple(data.shape)} but the struct info "
                f"says {expected}"
            )
        if sinfo.ndim not in (-1, data.ndim):
            raise ArgumentError(
                f"relax.const: the value has rank {data.ndim} but the struct info says {sinfo.ndim}"
            )
        return Constant.from_array(data)
    try:
        data = np.asarray(value, dtype=None if dtype is None else np.dtype(str(dtype)))
    except TypeError as exc:
        raise ArgumentError(
            f"relax.const takes a dtype string or a TensorStructInfo, not {dtype!r} ({exc})"
        ) from None
    return Constant.from_array(data)


def _constant_shape(sinfo: TensorStructInfo) -> tuple | None:
    if sinfo.shape is None:
        return None
    dims = []
    for dim in sinfo.shape:
        if not hasattr(dim, "value"):
            return None  # a symbolic size: any extent matches
        dims.append(int(dim.value))
    return tuple(dims)


def callee_name(call: Call) -> str:
    """The name of the function a call_tir / call_dps_packed calls."""
    target = call.args[0]
    return target.name_hint if isinstance(target, GlobalVar) else target.global_symbol
