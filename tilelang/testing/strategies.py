"""Hypothesis strategies that generate well-formed random TIR programs.

Two uses: round trips (``parse(script(f))`` must equal ``f``) and differential testing
of backends (python vs c vs llvm run the same program on the same arrays).

``prim_funcs(runnable=False)``
    PrimFuncs with loop nests of every kind (serial, parallel, vectorized, unroll and,
    unless ``runnable``, thread_binding), strided loops, blocks with spatial and reduce
    iterators, ``T.init``, ``T.where``, if/else, lets, loads and stores over int8..int64
    and float32/64 buffers of rank 1-3, casts, intrinsics (``T.exp``, ``T.max``...),
    and symbolic shapes (``T.handle`` + ``T.match_buffer`` with ``n = T.int32()``).

``program_cases()``
    Runnable programs with what a test needs to run them: a :class:`ProgramCase` holds
    the function, a concrete value for every symbolic size, which parameters are inputs
    and which are outputs, and :meth:`ProgramCase.make_arguments` builds NumPy arrays.

What makes a generated program safe to run (``runnable=True``):

* every index is in bounds for every iteration: an index is a loop/block variable
  whose range is exactly the dimension, or ``expr % extent`` (floor modulo by a
  positive extent is always in ``[0, extent)``);
* divisions and modulos only by positive constants (or positive sizes);
* integer values stay small: leaves are at most 8 in magnitude and expressions at
  most three levels deep, so nothing overflows int32; int8 data is widened before
  arithmetic and clamped before it is stored back;
* float math runs on bounded values (``T.exp`` of a clamped argument, ``T.sqrt`` of an
  absolute value), so no inf or nan appears;
* deterministic: every output element is written by exactly one iteration of the
  spatial loops (stores index outputs by the spatial loop variables only); reductions
  run under serial loops only, and read their accumulator nowhere else.

Example::

    @given(program_cases())
    @settings(max_examples=50, deadline=None)
    def test_backends_agree(case):
        args = case.make_arguments(seed=0)
        ...
"""

from __future__ import annotations

import attrs
import numpy as np
from hypothesis import strategies as st

from tilelang.analysis import infer_block_regions
from tilelang.ir import expr as E
from tilelang.ir import op
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Buffer, Range, decl_buffer
from tilelang.ir.convert import binary
from tilelang.ir.function import PrimFunc
from tilelang.ir.functor import StmtExprMutator, post_order_visit

FLOAT_DTYPES = ("float32", "float64")
INT_DTYPES = ("int32", "int64", "int8")
LOOP_KINDS = ("serial", "parallel", "vectorized", "unroll")

__all__ = ["prim_funcs", "program_cases", "ProgramCase"]


@attrs.frozen
class ProgramCase:
    """A runnable generated program.

    ``shape_env`` maps each symbolic size variable to its concrete value; ``inputs`` and
    ``outputs`` name parameter buffers (outputs are only written, or accumulated into
    from zero, so they must start zeroed).
    """

    func: PrimFunc
    shape_env: dict
    inputs: tuple
    outputs: tuple

    def shape_of(self, buffer: Buffer) -> tuple[int, ...]:
        """The concrete shape of a parameter buffer."""
        return tuple(_concrete(dim, self.shape_env) for dim in buffer.shape)

    def make_arguments(self, seed: int = 0) -> list[np.ndarray]:
        """Arrays for the parameters, in order: inputs hold small random values (floats
        are multiples of 1/8 in [-2, 2], ints in [-8, 8]); outputs are zeros."""
        rng = np.random.default_rng(seed)
        arrays = []
        for param in self.func.params:
            buffer = self.func.buffer_map[param]
            shape, dtype = self.shape_of(buffer), buffer.dtype.numpy_name()
            if buffer.name in self.outputs:
                arrays.append(np.zeros(shape, dtype=dtype))
            elif buffer.dtype.is_float():
                arrays.append((rng.integers(-16, 17, size=shape) / 8).astype(dtype))
            else:
                arrays.append(rng.integers(-8, 9, size=shape).astype(dtype))
        return arrays


def _concrete(dim, env) -> int:
    if isinstance(dim, E.IntImm):
        return dim.value
    return env[dim]


# ------------------------------------------------------------------ context


@attrs.define
class _Context:
    runnable: bool
    inputs: list  # input buffers
    index_vars: list = attrs.Factory(list)  # (var, extent) usable in expressions
    let_vars: list = attrs.Factory(list)  # int32 let-bound variables
    counter: list = attrs.Factory(lambda: [0])

    def fresh(self, prefix: str) -> str:
        self.counter[0] += 1
        return f"{prefix}{self.counter[0]}"


def _small_int(draw, dtype="int32", low=-8, high=8) -> E.IntImm:
    return E.IntImm(dtype, draw(st.integers(low, high)))


# -------------------------------------------------------------- expressions


def _index(draw, ctx: _Context, extent) -> E.PrimExpr:
    """An int32 index always inside ``[0, extent)``."""
    exact = [v for v, ext in ctx.index_vars if _same_extent(ext, extent)]
    if exact and draw(st.booleans()):
        return draw(st.sampled_from(exact))
    if isinstance(extent, E.IntImm) and extent.value == 1:
        return E.IntImm("int32", 0)
    choice = draw(st.integers(0, 2))
    if choice == 0 or not ctx.index_vars:
        base = _int_expr(draw, ctx, "int32", depth=1)
    else:
        var = draw(st.sampled_from([v for v, _ in ctx.index_vars]))
        scale = draw(st.integers(1, 3))
        offset = draw(st.integers(0, 3))
        base = var if scale == 1 else var * scale
        base = base if offset == 0 else base + offset
    if choice == 2 and isinstance(extent, E.IntImm):
        # a clamp instead of a modulo
        return op.max(op.min(base, extent.value - 1), 0)
    if isinstance(base, E.IntImm) and isinstance(extent, E.IntImm):
        return E.IntImm("int32", base.value % extent.value)  # the parser folds `c % e`
    return E.FloorMod(base, extent)


def _same_extent(a, b) -> bool:
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        return a.value == b.value
    return a is b


def _load(draw, ctx: _Context, buffers) -> E.BufferLoad:
    buffer = draw(st.sampled_from(buffers))
    return E.BufferLoad(buffer, tuple(_index(draw, ctx, ext) for ext in buffer.shape))


def _int_expr(draw, ctx: _Context, dtype: str, depth: int) -> E.PrimExpr:
    int_inputs = [b for b in ctx.inputs if b.dtype.is_integer()]
    leaves = ["const", "var"] + (["load"] if int_inputs else []) + (["let"] if ctx.let_vars else [])
    kind = draw(st.sampled_from(leaves + (["binary", "minmax", "div", "select"] if depth else [])))
    if kind == "const":
        return _small_int(draw, dtype)
    if kind == "var":
        if not ctx.index_vars:
            return _small_int(draw, dtype)
        return draw(st.sampled_from([v for v, _ in ctx.index_vars])).astype(dtype)
    if kind == "let":
        return draw(st.sampled_from(ctx.let_vars)).astype(dtype)
    if kind == "load":
        # int8 data is widened before any arithmetic touches it
        return _load(draw, ctx, int_inputs).astype(dtype if dtype != "int8" else "int32")
    a = _int_expr(draw, ctx, dtype, depth - 1)
    if kind == "binary":
        b = _int_expr(draw, ctx, dtype, depth - 1)
        return _arith(draw(st.sampled_from(["add", "sub", "mul"])), a, b)
    if kind == "minmax":
        return binary(draw(st.sampled_from(["min", "max"])), a, _int_expr(draw, ctx, dtype, 0))
    if kind == "div":
        divisor = E.IntImm(a.dtype, draw(st.integers(1, 5)))
        return _arith(draw(st.sampled_from(["floordiv", "floormod", "div"])), a, divisor)
    cond = _bool_expr(draw, ctx, 0)
    return E.Select(cond, a, _int_expr(draw, ctx, dtype, 0).astype(a.dtype))


def _bool_expr(draw, ctx: _Context, depth: int) -> E.PrimExpr:
    a, b = _int_expr(draw, ctx, "int32", 1), _int_expr(draw, ctx, "int32", 0)
    if _is_const(a) and _is_const(b) and ctx.index_vars:
        a = ctx.index_vars[0][0]  # two constants would be folded by the parser
    cmp = _arith(draw(st.sampled_from(["lt", "le", "gt", "ge", "eq", "ne"])), a, b)
    if not cmp.dtype.is_bool():
        cmp = E.IntImm("bool", 1)
    if depth and draw(st.booleans()):
        other = _bool_expr(draw, ctx, depth - 1)
        kind = draw(st.sampled_from(["and", "or", "not"]))
        return E.Not(cmp) if kind == "not" else (E.And if kind == "and" else E.Or)(cmp, other)
    return cmp


_INFIX = {"add", "sub", "mul", "floordiv", "floormod", "lt", "le", "gt", "ge", "eq", "ne"}


def _is_const(x) -> bool:
    return isinstance(x, (E.IntImm, E.FloatImm))


def _arith(kind: str, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
    """``a <kind> b``, except that an infix operator on two constants is left out:
    the parser folds those (as TVM's operators do), so they would not round-trip."""
    infix = kind in _INFIX or (kind == "div" and a.dtype.is_float())
    if infix and _is_const(a) and _is_const(b):
        return a
    return binary(kind, a, b)


def _clamp(x: E.PrimExpr, bound: float) -> E.PrimExpr:
    return op.max(op.min(x, bound), -bound)


def _float_expr(draw, ctx: _Context, dtype: str, depth: int) -> E.PrimExpr:
    float_inputs = [b for b in ctx.inputs if b.dtype.is_float()]
    leaves = ["const", "cast"] + (["load"] * 2 if float_inputs else [])
    kind = draw(st.sampled_from(leaves + (["binary", "minmax", "math", "select"] if depth else [])))
    if kind == "const":
        return E.FloatImm(dtype, draw(st.integers(-16, 16)) / 4)
    if kind == "cast":
        return E.Cast(dtype, _int_expr(draw, ctx, "int32", min(depth, 1)))
    if kind == "load":
        return _load(draw, ctx, float_inputs).astype(dtype)
    a = _float_expr(draw, ctx, dtype, depth - 1)
    if kind == "binary":
        b = _float_expr(draw, ctx, dtype, depth - 1)
        return _arith(draw(st.sampled_from(["add", "sub", "mul"])), a, b)
    if kind == "minmax":
        return binary(draw(st.sampled_from(["min", "max"])), a, _float_expr(draw, ctx, dtype, 0))
    if kind == "math":
        fn = draw(st.sampled_from(["exp", "sqrt", "tanh", "abs", "floor"]))
        if fn == "exp":
            return op.exp(_clamp(a, 4.0))
        if fn == "sqrt":
            return op.sqrt(op.abs(a))
        return op.call_intrin(fn, a)
    cond = _bool_expr(draw, ctx, 1)
    other = _float_expr(draw, ctx, dtype, 0)
    if draw(st.booleans()):
        return E.Select(cond, a, other)
    return op.if_then_else(cond, a, other)


def _value(draw, ctx: _Context, dtype, depth: int = 2) -> E.PrimExpr:
    """A value to store into a buffer of ``dtype``, safe to compute."""
    if dtype.is_float():
        return _float_expr(draw, ctx, str(dtype), depth)
    if str(dtype) == "int8":
        wide = _int_expr(draw, ctx, "int32", depth)
        return E.Cast("int8", _clamp(wide, 127) if draw(st.booleans()) else op.max(
            op.min(wide, 127), -128))  # fmt: skip
    return _int_expr(draw, ctx, str(dtype), depth)


# ---------------------------------------------------------------- statements


def _shape(draw, sizes: list) -> tuple:
    rank = draw(st.integers(1, 3))
    dims = []
    for _ in range(rank):
        if sizes and draw(st.integers(0, 3)) == 0:
            dims.append(draw(st.sampled_from(sizes)))
        else:
            dims.append(E.IntImm("int32", draw(st.integers(1, 6))))
    return tuple(dims)


def _loop_kind(draw, ctx: _Context, spatial: bool) -> str:
    if not spatial:
        return "serial"  # reductions run in order, on every backend
    kinds = list(LOOP_KINDS) + ([] if ctx.runnable else ["thread_binding"])
    return draw(st.sampled_from(kinds))


def _make_loop(draw, ctx, var, extent, body, spatial=True) -> S.For:
    kind = _loop_kind(draw, ctx, spatial)
    thread = None
    if kind == "thread_binding":
        thread = draw(st.sampled_from(["threadIdx.x", "blockIdx.x"]))
    annotations = {"pragma_unroll": 1} if kind == "serial" and draw(st.integers(0, 9)) == 0 else {}
    return S.For(var, 0, extent, kind, body, thread, annotations)


def _output_nest(draw, ctx: _Context, out: Buffer, sizes: list) -> S.Stmt:
    """Loops over every element of ``out`` (each written by exactly one iteration)."""
    loop_vars = [E.Var(ctx.fresh("i")) for _ in out.shape]
    reduce = draw(st.booleans())
    red_extent = (
        draw(st.sampled_from(sizes)) if sizes and draw(st.booleans())
        else E.IntImm("int32", draw(st.integers(1, 5)))
    )  # fmt: skip
    use_block = draw(st.integers(0, 3)) > 0
    if use_block:
        return _block_nest(draw, ctx, out, loop_vars, reduce, red_extent)
    k = E.Var(ctx.fresh("k"))
    ctx.index_vars.extend(zip(loop_vars, out.shape))
    if reduce:
        ctx.index_vars.append((k, red_extent))
    body = _store_body(draw, ctx, out, tuple(loop_vars), accumulate=reduce)
    if reduce:
        body = _make_loop(draw, ctx, k, red_extent, body, spatial=False)
    for var, extent in reversed(list(zip(loop_vars, out.shape))):
        strided = isinstance(extent, E.IntImm) and extent.value > 2 and draw(st.integers(0, 4)) == 0
        if strided:
            body = S.For(var, 0, extent, "serial", body, step=E.IntImm("int32", 2))
        else:
            body = _make_loop(draw, ctx, var, extent, body, spatial=not (reduce and ctx.runnable))
    return body


def _store_body(draw, ctx, out: Buffer, indices, accumulate: bool) -> S.Stmt:
    """``out[indices] = value`` (or ``+=``), maybe under a let or an if/else."""
    let_var = None
    if draw(st.integers(0, 3)) == 0:
        let_var = E.Var(ctx.fresh("t"))
        let_value = _int_expr(draw, ctx, "int32", 1)
        ctx.let_vars.append(let_var)

    def store():
        value = _value(draw, ctx, out.dtype)
        if accumulate and not str(out.dtype) == "int8":
            value = binary("add", E.BufferLoad(out, indices), value)
        return S.BufferStore(out, value, indices)

    body = store()
    if draw(st.integers(0, 3)) == 0:
        other = store() if draw(st.booleans()) else None
        body = S.IfThenElse(_bool_expr(draw, ctx, 1), body, other)
    if let_var is not None:
        ctx.let_vars.remove(let_var)
        body = S.LetStmt(let_var, let_value, body)
    return body


def _block_nest(draw, ctx, out: Buffer, loop_vars, reduce: bool, red_extent) -> S.Stmt:
    """A block over ``out``'s elements, with remapped or split spatial loops."""
    iter_vars, bindings, loops, predicate = [], [], [], None
    for var, extent in zip(loop_vars, out.shape):
        block_var = E.Var(ctx.fresh("v"))
        iter_vars.append(S.IterVar(Range(0, extent), block_var, S.IterVar.DataPar))
        split = isinstance(extent, E.IntImm) and extent.value > 2 and draw(st.integers(0, 3)) == 0
        if split:  # an imperfect split keeps a predicate, as Schedule.split does
            factor = draw(st.integers(2, extent.value - 1))
            outer, inner = E.Var(var.name + "_0"), E.Var(var.name + "_1")
            outer_extent = -(-extent.value // factor)
            loops += [(outer, E.IntImm("int32", outer_extent)), (inner, E.IntImm("int32", factor))]
            binding = outer * factor + inner
            if outer_extent * factor != extent.value:
                cond = binding < extent.value
                predicate = cond if predicate is None else E.And(predicate, cond)
            bindings.append(binding)
        else:
            loops.append((var, extent))
            bindings.append(var)
    block_ctx = _Context(ctx.runnable, ctx.inputs, counter=ctx.counter)
    block_ctx.index_vars = [(iv.var, iv.dom.extent) for iv in iter_vars]
    indices = tuple(iv.var for iv in iter_vars)
    init = None
    if reduce:
        # the init may not use the reduction iterator
        init = S.BufferStore(out, _value(draw, block_ctx, out.dtype, depth=0), indices)
        rk = E.Var(ctx.fresh("k"))
        vk = E.Var(ctx.fresh("vk"))
        iter_vars.append(S.IterVar(Range(0, red_extent), vk, S.IterVar.CommReduce))
        bindings.append(rk)
        loops.append((rk, red_extent))
        block_ctx.index_vars.append((vk, red_extent))
    body = _store_body(draw, block_ctx, out, indices, accumulate=reduce)
    block = S.Block(iter_vars, [], [], ctx.fresh("block"), body, init)
    realize = S.BlockRealize(bindings, True if predicate is None else predicate, block)
    stmt: S.Stmt = realize
    for index in reversed(range(len(loops))):
        var, extent = loops[index]
        # a runnable reduction block sits under serial loops only
        spatial = not (reduce and (ctx.runnable or var is loops[-1][0]))
        stmt = _make_loop(draw, ctx, var, extent, stmt, spatial=spatial)
    return stmt


# ----------------------------------------------------------------- functions


class _FillRegions(StmtExprMutator):
    """Stores inferred reads/writes in every block, as the parser does."""

    def visit_block(self, op):
        return infer_block_regions(self.generic_visit(op))


def _contains_block(stmt) -> bool:
    found = []
    post_order_visit(stmt, lambda n: found.append(n) if isinstance(n, S.Block) else None)
    return bool(found)


@st.composite
def _generate(draw, runnable: bool):
    symbolic = draw(st.booleans())
    sizes = [E.Var("n"), E.Var("m")][: draw(st.integers(1, 2))] if symbolic else []
    dtypes = FLOAT_DTYPES + INT_DTYPES
    n_inputs, n_outputs = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    buffers = []
    for index in range(n_inputs + n_outputs):
        name = f"A{index}" if index < n_inputs else f"B{index - n_inputs}"
        buffers.append(decl_buffer(_shape(draw, sizes), draw(st.sampled_from(dtypes)), name))
    inputs, outputs = buffers[:n_inputs], buffers[n_inputs:]
    # only sizes that some parameter's shape binds may appear in loops and indices
    used_sizes = []
    for b in buffers:
        for dim in b.shape:
            if isinstance(dim, E.Var) and not any(dim is s for s in used_sizes):
                used_sizes.append(dim)
    sizes = used_sizes
    ctx = _Context(runnable, inputs)
    nests = []
    for out in outputs:
        ctx.index_vars, ctx.let_vars = [], []
        nests.append(_output_nest(draw, ctx, out, sizes))
    body = _FillRegions().visit(S.SeqStmt(tuple(nests)) if len(nests) > 1 else nests[0])
    if _contains_block(body):
        body = S.BlockRealize((), True, S.Block((), (), (), "root", body))
    params = [E.Var(b.name.lower(), "handle") for b in buffers]
    attrs_ = {"global_symbol": "main"}  # as the parser records a function's name
    func = PrimFunc(params, body, buffer_map=dict(zip(params, buffers)), attrs=attrs_)
    env = {s: draw(st.integers(1, 5)) for s in used_sizes}
    return ProgramCase(func, env, tuple(b.name for b in inputs), tuple(b.name for b in outputs))


def prim_funcs(runnable: bool = False) -> st.SearchStrategy[PrimFunc]:
    """Random well-formed PrimFuncs (see the module docstring)."""
    return _generate(runnable).map(lambda case: case.func)


def program_cases() -> st.SearchStrategy[ProgramCase]:
    """Runnable programs with concrete sizes and their inputs and outputs; see
    :class:`ProgramCase`."""
    return _generate(True)
