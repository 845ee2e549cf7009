"""BlockBuilder: build graph-level functions step by step, as in the MLC course::

    bb = relax.BlockBuilder()
    with bb.function("main"):
        with bb.dataflow():
            lv0 = bb.emit_te(te_matmul, A, B)
            lv1 = bb.emit_te(te_relu, lv0)
            gv = bb.emit_output(lv1)
        bb.emit_func_output(gv, params=[A, B])
    mod = bb.get()

``emit_te`` turns a tensor-expression function into a prim_func of the module
(deduplicated: structurally equal prim_funcs are added once) and emits a
``call_tir`` of it.
"""

from __future__ import annotations

from contextlib import contextmanager

from tilelang import te
from tilelang.errors import ArgumentError
from tilelang.ir import (
    IntImm,
    IRModule,
    PrimExpr,
    Var,
    post_order_visit,
    structural_equal,
    substitute,
)
from tilelang.relax.expr import (
    BindingBlock,
    Call,
    Constant,
    DataflowBlock,
    DataflowVar,
    Expr,
    Function,
    GlobalVar,
    SeqExpr,
    VarBinding,
    call_tir,
    struct_info_of,
)
from tilelang.relax.expr import Var as RVar
from tilelang.relax.struct_info import TensorStructInfo


class _FunctionFrame:
    def __init__(self, name, params, attrs):
        self.name, self.params, self.attrs = name, params, attrs
        self.blocks: list = []
        self.bindings: list = []  # bindings outside dataflow blocks
        self.in_dataflow = False
        self.counter = 0
        self.output = None


class BlockBuilder:
    """Builds an IRModule of prim_funcs and graph functions; see the module docstring."""

    def __init__(self, mod: IRModule | None = None):
        self._functions: dict = dict(mod.functions) if mod is not None else {}
        self._frame: _FunctionFrame | None = None

    # ------------------------------------------------------------ scopes

    @contextmanager
    def function(self, name: str, params=None, attrs=None):
        """The scope of one graph function; end it with :meth:`emit_func_output`."""
        if self._frame is not None:
            raise ArgumentError("bb.function scopes do not nest")
        frame = self._frame = _FunctionFrame(name, params, attrs)
        try:
            yield
        finally:
            self._frame = None
        if frame.output is None:
            raise ArgumentError(f"bb.function({name!r}) ended without emit_func_output")

    @contextmanager
    def dataflow(self):
        """A dataflow block; values leave it through :meth:`emit_output`."""
        frame = self._require_frame("bb.dataflow")
        if frame.in_dataflow:
            raise ArgumentError("bb.dataflow scopes do not nest")
        self._flush(frame)
        frame.in_dataflow = True
        try:
            yield
        finally:
            frame.in_dataflow = False
        frame.blocks.append(DataflowBlock(tuple(frame.bindings)))
        frame.bindings = []

    def _require_frame(self, what: str) -> _FunctionFrame:
        if self._frame is None:
            raise ArgumentError(f"{what} must be used inside `with bb.function(...)`")
        return self._frame

    def _flush(self, frame: _FunctionFrame) -> None:
        if frame.bindings:
            frame.blocks.append(BindingBlock(tuple(frame.bindings)))
            frame.bindings = []

    # ------------------------------------------------------------ emitting

    def _fresh_name(self, frame, prefix: str) -> str:
        name = f"{prefix}{frame.counter}"
        frame.counter += 1
        return name

    def _bind(self, value: Expr, name_hint: str, output: bool) -> RVar:
        frame = self._require_frame("emit")
        sinfo = struct_info_of(value)
        local = frame.in_dataflow and not output
        name = name_hint or self._fresh_name(frame, "lv" if local else "gv")
        var = (DataflowVar if local else RVar)(name, sinfo)
        frame.bindings.append(VarBinding(var, value))
        return var

    def emit(self, expr: Expr, name_hint: str = "") -> RVar:
        """Binds ``expr`` to a new variable (a dataflow variable inside a dataflow block)."""
        return self._bind(expr, name_hint, output=False)

    def emit_output(self, output: Expr, name_hint: str = "") -> RVar:
        """Binds ``output`` to a variable visible after the dataflow block."""
        frame = self._require_frame("emit_output")
        if not frame.in_dataflow:
            raise ArgumentError("emit_output is only meaningful inside `with bb.dataflow()`")
        return self._bind(output, name_hint, output=True)

    def emit_func_output(self, output: Expr, params=None) -> None:
        """Ends the function: ``output`` is its result; ``params`` its parameters
        (unless given to :meth:`function`)."""
        frame = self._require_frame("emit_func_output")
        if frame.in_dataflow:
            raise ArgumentError("emit_func_output must come after the dataflow block")
        if params is not None and frame.params is not None:
            raise ArgumentError("parameters were already given to bb.function")
        params = frame.params if params is None else params
        if params is None:
            raise ArgumentError("emit_func_output needs the function's params")
        if isinstance(params, RVar):
            params = [params]
        if isinstance(output, DataflowVar):
            output = self._export(frame, output)
        if not isinstance(output, (RVar, Constant)):
            output = self.emit(output)
        self._flush(frame)
        func = Function(
            tuple(params),
            SeqExpr(tuple(frame.blocks), output),
            struct_info_of(output),
            attrs=frame.attrs or {},
        )
        frame.output = output
        self._functions[frame.name] = func

    def _export(self, frame: _FunctionFrame, var: DataflowVar) -> RVar:
        """TVM lets a function return a dataflow variable of its last dataflow block; the
        value leaves the block as emit_output would take it out (``gv = lv`` appended
        to the block), so the function stays well formed."""
        last = frame.blocks[-1] if frame.blocks and not frame.bindings else None
        if not isinstance(last, DataflowBlock) or not any(b.var is var for b in last.bindings):
            raise ArgumentError(
                f"{var.name_hint!r} is local to a dataflow block that is not the function's "
                "last; emit_output it inside that block"
            )
        out = RVar(self._fresh_name(frame, "gv"), var.struct_info)
        frame.blocks[-1] = DataflowBlock((*last.bindings, VarBinding(out, var)))
        return out

    # ------------------------------------------------------------ tensor expressions

    def call_te(self, func, *args, primfunc_name_hint: str | None = None, **kwargs) -> Call:
        """A ``call_tir`` of the prim_func that ``func`` describes with tensor
        expressions, applied to graph values ``args`` (other arguments pass through)."""
        sizes: dict = {}  # caller's symbolic size -> the prim_func's own
        placeholders = []
        te_args = []
        used_names: set = set()
        for arg in args:
            if isinstance(arg, (RVar, Constant)):
                tensor = _placeholder(arg, sizes, used_names)
                placeholders.append(tensor)
                te_args.append(tensor)
            else:
                te_args.append(arg)
        out = func(*te_args, **kwargs)
        if not isinstance(out, te.Tensor):
            raise ArgumentError(f"{func.__name__} must return one te.Tensor, got {out!r}")
        name = primfunc_name_hint or getattr(func, "__name__", "te_func")
        prim_func = te.create_prim_func([*placeholders, out], name=name)
        gvar = self.add_func(prim_func, name)
        back = {mine: theirs for theirs, mine in sizes.items()}
        shape = tuple(_caller_dim(d, back, name) for d in out.shape)
        tensor_args = tuple(a for a in args if isinstance(a, (RVar, Constant)))
        return call_tir(gvar, tensor_args, TensorStructInfo(shape, out.dtype))

    def emit_te(self, func, *args, primfunc_name_hint: str | None = None, **kwargs) -> RVar:
        """Emits :meth:`call_te` and returns the bound variable."""
        return self.emit(self.call_te(func, *args, primfunc_name_hint=primfunc_name_hint, **kwargs))

    def add_func(self, func, name: str) -> GlobalVar:
        """Adds ``func`` under ``name`` (or a fresh ``name_1``...), unless a structurally
        equal function is already there, whose GlobalVar is returned."""
        for existing_name, existing in self._functions.items():
            if type(existing) is type(func) and structural_equal(existing, func):
                return GlobalVar(existing_name)
        unique, n = name, 0
        while unique in self._functions:
            n += 1
            unique = f"{name}_{n}"
        if hasattr(func, "with_attr") and func.attrs.get("global_symbol") != unique:
            func = func.with_attr("global_symbol", unique)
        self._functions[unique] = func
        return GlobalVar(unique)

    def get(self) -> IRModule:
        """The module built so far."""
        if self._frame is not None:
            raise ArgumentError("bb.get() inside an unfinished bb.function")
        return IRModule(dict(self._functions))


def _placeholder(arg, sizes: dict, used_names: set) -> te.Tensor:
    sinfo = arg.struct_info
    if not isinstance(sinfo, TensorStructInfo) or sinfo.shape is None:
        raise ArgumentError(f"emit_te needs tensors of known shape, got {sinfo!r}")
    shape = []
    for dim in sinfo.shape:
        if isinstance(dim, IntImm):
            # constant sizes as plain ints, so the prim_func reads like hand-written TIR
            shape.append(dim.value)
            continue
        for var in _free_vars(dim):
            if var not in sizes:
                sizes[var] = type(var)(var.name, var.dtype)
        shape.append(substitute(dim, sizes.get))
    base = arg.name_hint if isinstance(arg, RVar) else "const"
    name, n = base, 0
    while name in used_names:
        n += 1
        name = f"{base}_{n}"
    used_names.add(name)
    return te.placeholder(tuple(shape), sinfo.dtype, name)


def _free_vars(expr: PrimExpr) -> list:
    """The size variables in ``expr``, in first-seen order."""
    found: list = []

    def collect(node):
        if isinstance(node, Var) and not any(node is f for f in found):
            found.append(node)

    post_order_visit(expr, collect)
    return found


def _caller_dim(dim, back: dict, name: str):
    for var in _free_vars(dim):
        if var not in back:
            raise ArgumentError(
                f"{name}: output size {var.name!r} is not determined by the input shapes"
            )
    return substitute(dim, back.get) if not isinstance(dim, IntImm) else dim.value
