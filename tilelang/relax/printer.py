"""Printing graph functions as ``@R.function`` text (TVMScript's Relax spelling).

The IRModule printer (:mod:`tilelang.ir.printer`) hands every graph function to
:func:`print_function`, so a module of prim_funcs and graph functions prints as one
``@I.ir_module`` class, and ``tilelang.parse`` reads it back::

    @R.function
    def main(x: R.Tensor((1, "m"), dtype="float32"), w0: R.Tensor(("n", "m"), dtype="float32"), ...):
        m = T.int64()
        n = T.int64()
        with R.dataflow():
            lv0 = R.call_dps_packed("linear0", (x, w0, b0), out_sinfo=R.Tensor((1, n), dtype="float32"))
            ...
            R.output(out)
        return out

Symbolic sizes are written as strings where a parameter's annotation first mentions
them, and declared with ``T.int64()`` at the top of the body.
"""  # noqa: E501

from __future__ import annotations

import numpy as np

from tilelang.ir import IntImm, Var, post_order_visit
from tilelang.ir.printer.expr import string_literal
from tilelang.relax.expr import (
    BindingBlock,
    Call,
    Constant,
    DataflowBlock,
    ExternFunc,
    Function,
    GlobalVar,
    Tuple,
    VarBinding,
)
from tilelang.relax.expr import Var as RVar
from tilelang.relax.struct_info import TensorStructInfo, TupleStructInfo


def _size_vars(func: Function) -> list:
    """The symbolic sizes of ``func``'s struct infos, in order of first appearance."""
    found: list = []

    def collect(node):
        if isinstance(node, Var) and not any(node is f for f in found):
            found.append(node)

    for param in func.params:
        post_order_visit(param.struct_info, collect)
    post_order_visit(func.body, collect)
    if func.ret_struct_info is not None:
        post_order_visit(func.ret_struct_info, collect)
    return found


class _Printer:
    def __init__(self, printer):
        self.p = printer  # the TIR ScriptPrinter: names, lines, indent, expressions

    def dim(self, dim, quoted: bool) -> str:
        if isinstance(dim, IntImm):
            return str(dim.value)
        if isinstance(dim, Var):
            name = self.p.var_name(dim)
            return string_literal(name) if quoted else name
        return self.p.expr(dim)

    def sinfo(self, sinfo, quoted: bool = False) -> str:
        if isinstance(sinfo, TupleStructInfo):
            return "R.Tuple(" + ", ".join(self.sinfo(f, quoted) for f in sinfo.fields) + ")"
        if not isinstance(sinfo, TensorStructInfo):
            return "R.Object"
        dtype = f"dtype={string_literal(sinfo.dtype)}"
        if sinfo.shape is None:
            return f"R.Tensor({dtype}, ndim={sinfo.ndim})"
        dims = ", ".join(self.dim(d, quoted) for d in sinfo.shape)
        comma = "," if len(sinfo.shape) == 1 else ""
        return f"R.Tensor(({dims}{comma}), {dtype})"

    def value(self, expr) -> str:
        if isinstance(expr, RVar):
            name = self.p.names.lookup(expr)
            return name if name is not None else self.p.names.define(expr, expr.name_hint)
        if isinstance(expr, Constant):
            data = np.asarray(expr.data)
            items = data.tolist()
            return f"R.const({items!r}, {string_literal(str(data.dtype))})"
        if isinstance(expr, Tuple):
            inner = ", ".join(self.value(f) for f in expr.fields)
            return f"({inner}{',' if len(expr.fields) == 1 else ''})"
        if isinstance(expr, GlobalVar):
            return f"cls.{expr.name_hint}"
        if isinstance(expr, ExternFunc):
            return string_literal(expr.global_symbol)
        if isinstance(expr, Call):
            op = expr.op.split(".", 1)[-1]
            args = ", ".join(self.value(a) for a in expr.args)
            sinfo = ", ".join(self.sinfo(s) for s in expr.sinfo_args)
            return f"R.{op}({args}, out_sinfo={sinfo})"
        raise TypeError(f"the printer does not know {type(expr).__name__}")

    def binding(self, binding: VarBinding) -> None:
        value = self.value(binding.value)
        name = self.p.names.define(binding.var, binding.var.name_hint)
        if isinstance(binding.value, (RVar, Constant)):
            self.p.emit(f"{name}: {self.sinfo(binding.var.struct_info)} = {value}")
        else:
            self.p.emit(f"{name} = {value}")

    def function(self, func: Function, name: str, in_module: bool = False) -> None:
        from tilelang.ir.printer.names import sanitize

        p = self.p
        sizes = _size_vars(func)
        for var in sizes:
            p.define_var(var)
        params = []
        for param in func.params:
            param_name = p.names.define(param, param.name_hint)
            params.append(f"{param_name}: {self.sinfo(param.struct_info, quoted=True)}")
        ret = ""
        if func.ret_struct_info is not None:
            ret = f" -> {self.sinfo(func.ret_struct_info, quoted=True)}"
        p.emit("@R.function")
        p.emit(f"def {sanitize(name)}({', '.join(params)}){ret}:")
        p.indent += 1
        try:
            if in_module and _calls_module(func):
                p.emit("cls = Module")  # as TVM's printer: the module's functions are cls.f
            for var in sizes:
                p.emit(f"{p.var_name(var)} = T.{var.dtype}()")
            for block in func.body.blocks:
                self.block(block)
            p.emit(f"return {self.value(func.body.body)}")
        finally:
            p.indent -= 1

    def block(self, block: BindingBlock) -> None:
        if not isinstance(block, DataflowBlock):
            for binding in block.bindings:
                self.binding(binding)
            return
        self.p.emit("with R.dataflow():")
        self.p.indent += 1
        try:
            for binding in block.bindings:
                self.binding(binding)
            outputs = ", ".join(self.value(v) for v in block.outputs)
            self.p.emit(f"R.output({outputs})")
        finally:
            self.p.indent -= 1


def _calls_module(func: Function) -> bool:
    """``func`` refers to a function of its module (``R.call_tir(cls.f, ...)``)."""
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, GlobalVar) else None)
    return bool(found)


def print_function(printer, func: Function, name: str | None) -> None:
    """Appends ``func`` as ``@R.function`` text to a TIR ``ScriptPrinter``; a function
    printed as a member of a module (``name`` given) starts with TVM's ``cls = Module``
    when it calls the module's functions."""
    in_module = name is not None
    _Printer(printer).function(func, name or func.attrs.get("global_symbol", "main"), in_module)


def print_node(printer, node) -> None:
    """Appends any graph-level node (a function, an expression, a struct info)."""
    if isinstance(node, Function):
        print_function(printer, node, None)
    elif isinstance(node, VarBinding):
        _Printer(printer).binding(node)
    elif isinstance(node, (TensorStructInfo, TupleStructInfo)):
        printer.lines.append(_Printer(printer).sinfo(node))
    elif isinstance(node, BindingBlock):
        _Printer(printer).block(node)
    else:
        printer.lines.append(_Printer(printer).value(node))


def script(node) -> str:
    """The text of a graph-level node, or of a module holding graph functions."""
    from tilelang.ir.printer import script as tir_script

    return tir_script(node)
