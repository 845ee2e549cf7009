"""Fusing an elementwise tensor function into the call that produces its input.

When a graph calls ``z = f(x, w)`` and then ``y = g(z)`` -- ``g`` elementwise (every
block spatial), ``z`` used nowhere else -- the two calls become one call of a new
prim_func ``fused_f_g``: ``f``'s body, then ``g``'s, with ``z`` an intermediate buffer
of the function instead of an array the graph allocates and passes. One call fewer at
run time, and the default schedule rules can then inline the elementwise work into
the producer (the MLP's bias add and relu run while the result of a row is still in a
register). This is the part of TVM's ``FuseOps`` + ``FuseTIR`` that matters for such
chains; a chain of several elementwise calls is fused step by step.

Only unscheduled prim_funcs fuse (a user's schedule is never mixed into another
function), and only when ``g``'s parameter buffer for ``z`` has the very shape and
dtype of ``f``'s output.
"""

from __future__ import annotations

import attrs

from tilelang.ir import IRModule, PrimFunc
from tilelang.ir import stmt as S
from tilelang.ir.functor import StmtExprMutator, post_order_visit
from tilelang.relax.expr import (
    Call,
    ExternFunc,
    Function,
    GlobalVar,
    Tuple,
    Var,
    callee_name,
)
from tilelang.relax.shape import same_shape
from tilelang.transform.bind_arguments import size_vars

_CALLS = ("relax.call_tir", "relax.call_dps_packed")


def _blocks(func: PrimFunc) -> list:
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, S.Block) else None)
    return found


def _root(func: PrimFunc) -> S.Block | None:
    body = func.body
    if isinstance(body, S.BlockRealize) and not body.block.iter_vars:
        return body.block
    return None


def is_elementwise(func: PrimFunc) -> bool:
    """Every block but the root iterates over spatial iterators only."""
    blocks = [b for b in _blocks(func) if b.iter_vars]
    return bool(blocks) and all(
        iv.iter_type == S.IterVar.DataPar for b in blocks for iv in b.iter_vars
    )


class _Graft(StmtExprMutator):
    """A fresh copy of the consumer's body: every variable and buffer it defines is
    new (the producer may be the very same function, or share its loop variables),
    its input buffers are replaced by the producer's output, and its block names are
    kept apart from the producer's."""

    def __init__(self, buffers: dict, taken: set):
        self.buffers = dict(buffers)  # id(old buffer) -> new buffer
        self.vars: dict = {}
        self.taken = taken

    def visit_var(self, var):
        return self.vars.get(var, var)

    visit_size_var = visit_var

    def visit_var_def(self, var):
        fresh = self.vars.get(var)
        if fresh is None:
            fresh = self.vars[var] = type(var)(var.name, var.dtype, span=var.span)
        return fresh

    def visit_buffer_def(self, buffer):
        fresh = self.buffers.get(id(buffer))
        if fresh is None:
            fresh = self.buffers[id(buffer)] = attrs.evolve(
                buffer,
                data=self.visit_var_def(buffer.data),
                shape=tuple(self.visit(x) for x in buffer.shape),
                strides=tuple(self.visit(x) for x in buffer.strides),
                elem_offset=self.visit(buffer.elem_offset),
            )
        return fresh

    def visit_buffer_ref(self, buffer):
        return self.buffers.get(id(buffer), buffer)

    def visit_block(self, block):
        new = self.generic_visit(block)
        name, suffix = new.name_hint, 1
        if block.iter_vars:
            while name in self.taken:
                name, suffix = f"{new.name_hint}_{suffix}", suffix + 1
            self.taken.add(name)
        return new if name == new.name_hint else attrs.evolve(new, name_hint=name)


def fuse_prim_funcs(producer: PrimFunc, consumer: PrimFunc, slots: list, name: str):
    """The prim_func running ``producer`` then ``consumer``, where the consumer's
    parameters at positions ``slots`` read the producer's output. Its parameters: the
    producer's inputs, the consumer's other inputs, the consumer's output. None when
    the shapes or dtypes differ or either body has no root block."""
    out_buffer = producer.buffer_map[producer.params[-1]]
    root1, root2 = _root(producer), _root(consumer)
    if root1 is None or root2 is None or size_vars(producer) or size_vars(consumer):
        return None
    replaced = {}
    for slot in slots:
        buffer = consumer.buffer_map[consumer.params[slot]]
        if str(buffer.dtype) != str(out_buffer.dtype):
            return None
        if not same_shape(buffer.shape, out_buffer.shape) or buffer.strides:
            return None
        replaced[id(buffer)] = out_buffer
    graft = _Graft(replaced, {b.name_hint for b in _blocks(producer)})
    params = list(producer.params[:-1])
    buffer_map = {p: producer.buffer_map[p] for p in params if p in producer.buffer_map}
    for i, param in enumerate(consumer.params):
        if i in slots:
            continue
        fresh = graft.visit_var_def(param)
        params.append(fresh)
        if param in consumer.buffer_map:
            buffer_map[fresh] = graft.visit_buffer_def(consumer.buffer_map[param])
    grafted = graft.visit(root2)
    root = attrs.evolve(
        root1,
        body=S.SeqStmt((root1.body, grafted.body)),
        alloc_buffers=(*root1.alloc_buffers, *grafted.alloc_buffers, out_buffer),
    )
    noalias = bool(producer.attrs.get("tir.noalias")) and bool(consumer.attrs.get("tir.noalias"))
    return PrimFunc(
        tuple(params),
        attrs.evolve(producer.body, block=root),
        None,
        buffer_map,
        {"global_symbol": name, "tir.noalias": noalias},
    )


def _args(call: Call) -> tuple:
    return call.args[1].fields if isinstance(call.args[1], Tuple) else tuple(call.args[1:])


def _uses(func: Function) -> dict:
    counts: dict = {}

    def count(expr):
        if isinstance(expr, Var):
            counts[expr] = counts.get(expr, 0) + 1
        elif isinstance(expr, Tuple):
            for field in expr.fields:
                count(field)
        elif isinstance(expr, Call):
            for arg in _args(expr):
                count(arg)

    for block in func.body.blocks:
        for binding in block.bindings:
            count(binding.value)
    count(func.body.body)
    return counts


class _Fuser:
    def __init__(self, mod: IRModule, fusable):
        self.funcs = {name: f for name, f in mod if isinstance(f, PrimFunc)}
        self.fusable = fusable
        self.made: dict = {}
        self.by_pair: dict = {}  # (producer, consumer, slots) -> fused name

    def _name(self, a: str, b: str) -> str:
        base = f"fused_{a.removeprefix('fused_')}_{b}"
        name, suffix = base, 1
        while name in self.funcs:
            name, suffix = f"{base}_{suffix}", suffix + 1
        return name

    def fuse_pair(self, first, second, uses):
        """The fused binding for two consecutive bindings, or None."""
        call1, call2 = first.value, second.value
        if not all(isinstance(c, Call) and c.op in _CALLS for c in (call1, call2)):
            return None
        f1, f2 = self.funcs.get(callee_name(call1)), self.funcs.get(callee_name(call2))
        if f1 is None or f2 is None or uses.get(first.var, 0) == 0:
            return None
        if not (self.fusable(f1) and self.fusable(f2) and is_elementwise(f2)):
            return None
        args2 = _args(call2)
        slots = [i for i, a in enumerate(args2) if a is first.var]
        if len(slots) != uses[first.var] or len(f2.params) != len(args2) + 1:
            return None
        if len(f1.params) != len(_args(call1)) + 1:
            return None
        # the same pair fused the same way again (another layer) calls the same function
        key = (callee_name(call1), callee_name(call2), tuple(slots))
        name = self.by_pair.get(key)
        if name is None:
            name = self._name(callee_name(call1), callee_name(call2))
            fused = fuse_prim_funcs(f1, f2, slots, name)
            if fused is None:
                return None
            self.funcs[name] = self.made[name] = fused
            self.by_pair[key] = name
        args = (*_args(call1), *(a for i, a in enumerate(args2) if i not in slots))
        target = call1.args[0]
        target = (
            GlobalVar(name, span=target.span)
            if isinstance(target, GlobalVar)
            else ExternFunc(name, span=target.span)
        )
        value = attrs.evolve(call2, op=call1.op, args=(target, Tuple(args)))
        return attrs.evolve(second, value=value)

    def function(self, func: Function) -> Function:
        uses = _uses(func)
        blocks = []
        for block in func.body.blocks:
            bindings: list = []
            for binding in block.bindings:
                fused = self.fuse_pair(bindings[-1], binding, uses) if bindings else None
                if fused is not None:
                    bindings[-1] = fused
                else:
                    bindings.append(binding)
            blocks.append(attrs.evolve(block, bindings=tuple(bindings)))
        return attrs.evolve(func, body=attrs.evolve(func.body, blocks=tuple(blocks)))


def fuse_elementwise_calls(mod: IRModule, fusable=lambda f: True) -> IRModule:
    """``mod`` with each elementwise call fused into the call producing its input (see
    the module docstring); ``fusable(prim_func)`` says which functions may take part.
    prim_funcs no longer called from any graph function are dropped."""
    fuser = _Fuser(mod, fusable)
    functions = {}
    called: set = set()
    for name, func in mod:
        if isinstance(func, Function):
            functions[name] = new = fuser.function(func)
            called |= {
                callee_name(b.value)
                for block in new.body.blocks
                for b in block.bindings
                if isinstance(b.value, Call) and b.value.op in _CALLS
            }
    if not fuser.made:
        return mod
    for name, func in mod:
        if isinstance(func, PrimFunc) and name not in fuser.made:
            was_called = any(name == n for n in _all_callees(mod))
            if not was_called or name in called:
                functions[name] = func
    functions.update({n: f for n, f in fuser.made.items() if n in called})
    return attrs.evolve(mod, functions=functions)


def _all_callees(mod: IRModule) -> set:
    return {
        callee_name(b.value)
        for _, func in mod
        if isinstance(func, Function)
        for block in func.body.blocks
        for b in block.bindings
        if isinstance(b.value, Call) and b.value.op in _CALLS
    }


__all__ = ["fuse_elementwise_calls", "fuse_prim_funcs", "is_elementwise"]
