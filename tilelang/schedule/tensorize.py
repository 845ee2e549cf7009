"""tensorize: a block (or the subtree under a loop, blockized first) that matches a
tensor intrinsic's description is replaced by the intrinsic's implementation.

After the match (:mod:`tilelang.schedule.tensorize_match`) the block keeps its
iterators, bindings, reads, writes and init; its body becomes the body of the
implementation's root block, and each buffer parameter of the implementation becomes
a ``T.match_buffer`` of the region of the schedule's buffer it stands for::

    with T.block("matmul_o"):
        vi_o, vj_o, vk_o = T.axis.remap("SSR", [i_0, j_0, k_0])
        T.reads(C[vi_o * 16:vi_o * 16 + 16, ...], ...)
        T.writes(C[vi_o * 16:vi_o * 16 + 16, ...])
        A_1 = T.match_buffer(A[vi_o * 16:vi_o * 16 + 16, vk_o * 16:vk_o * 16 + 16], (16, 16),
                             strides=(sa, 1), offset_factor=16)
        ...
        T.evaluate(T.call_extern("int32", "tmm16", C_1.access_ptr("w"), ..., sa, sb, sc))

Lowering (``LowerMatchBuffer``) then binds each view's strides and element offset to
those of the region, so ``sa`` is the row stride of ``A`` and ``access_ptr`` points
at the region's first element.

The implementation is instantiated afresh at every use (new data, stride and offset
variables), as TVM deep-copies it. A buffer of the implementation declared with an
``offset_factor`` and no ``elem_offset`` has an offset variable of its own (the
parser gives it one, as TVM's does), which its ``access_ptr`` includes; bound to the
region's offset when lowering.
"""

from __future__ import annotations

import attrs

from tilelang.arith import Analyzer, ConstBound, linear_form
from tilelang.ir import expr as E
from tilelang.ir.buffer import BufferRegion, MatchBufferRegion, Range, dense_strides
from tilelang.ir.convert import binary, const_int_value
from tilelang.ir.functor import StmtExprMutator
from tilelang.schedule import blockize as blockize_mod
from tilelang.schedule.common import find_block
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.state import Tree, rewrite
from tilelang.schedule.tensor_intrin import TensorIntrin
from tilelang.schedule.tensorize_match import match


def tensorize(func, target, intrin: TensorIntrin | str, preserve_unit_iters=True):
    """Returns ``(new_func, block_name)``: ``target`` (a block name, or a loop variable
    whose subtree is blockized first) replaced by ``intrin``'s implementation."""
    if isinstance(intrin, str):
        try:
            intrin = TensorIntrin.get(intrin)
        except ValueError as error:
            raise schedule_error("tensorize", repr(intrin), str(error)) from None
    if not isinstance(intrin, TensorIntrin):
        raise schedule_error(
            "tensorize", repr(intrin), "expects the name of a registered tensor intrinsic"
        )
    if isinstance(target, E.Var):
        func, target = blockize_mod.blockize(func, target, preserve_unit_iters)
    realize = find_block(Tree(func), target, "tensorize")
    subject = f"block {target!r}"
    matcher = match(realize, intrin.desc.body, subject, intrin.name)
    impl_root = intrin.impl.body.block
    impl_buffers, renew = _instantiate(intrin)
    body = renew.visit(impl_root.body)
    regions = {r.buffer: r.region for r in (*impl_root.reads, *impl_root.writes)}
    bounds = Analyzer()  # the block's iterators (a unit one is its minimum)
    for iv in realize.block.iter_vars:
        lo, extent = const_int_value(iv.dom.min), const_int_value(iv.dom.extent)
        if lo is not None and extent is not None:
            bounds.var_bounds[iv.var] = ConstBound(lo, lo + extent - 1)
    matches = []
    for desc_buffer, impl_buffer in zip(intrin.desc_buffers(), intrin.impl_buffers()):
        source = matcher.buffer_map.get(desc_buffer)
        if source is None:
            raise schedule_error(
                "tensorize", subject,
                f"the description of {intrin.name!r} never uses its buffer {desc_buffer.name}",
            )  # fmt: skip
        if impl_buffer not in regions:
            raise schedule_error(
                "tensorize", subject,
                f"the implementation of {intrin.name!r} neither reads nor writes its buffer "
                f"{impl_buffer.name}",
            )  # fmt: skip
        view = impl_buffers[impl_buffer]
        region = _source_region(matcher.bases[source], regions[impl_buffer])
        _check_view(subject, view, impl_buffer, BufferRegion(source, region), realize, bounds)
        matches.append(MatchBufferRegion(view, BufferRegion(source, region)))
    annotations = {**impl_root.annotations, **realize.block.annotations}
    block = attrs.evolve(
        realize.block, body=body, match_buffers=tuple(matches), annotations=annotations
    )
    return rewrite(func, {id(realize): attrs.evolve(realize, block=block)}), target


def _source_region(base, impl_region) -> tuple:
    """The region of the schedule's buffer a view covers: it starts at the matched base
    and has the implementation region's extents (leading dimensions: extent 1)."""
    lead = len(base) - len(impl_region)
    ranges = [Range(b, E.IntImm(b.dtype, 1)) for b in base[:lead]]
    for b, r in zip(base[lead:], impl_region):
        ranges.append(Range(b, r.extent))
    return tuple(ranges)


# ----------------------------------------------------------- instantiation


class _Renew(StmtExprMutator):
    """The implementation's body over fresh buffers and variables."""

    def __init__(self, buffers: dict, variables: dict):
        self.buffers = buffers
        self.variables = variables

    def visit_var(self, var):
        return self.variables.get(var, var)

    def visit_buffer_ref(self, buffer):
        return self.buffers.get(buffer, buffer)

    def visit_buffer_def(self, buffer):
        return self.buffers.get(buffer, buffer)


def _fresh(value, variables: dict):
    if isinstance(value, E.Var):
        if value not in variables:
            variables[value] = E.Var(value.name, value.dtype)
        return variables[value]
    return value


def _instantiate(intrin: TensorIntrin):
    """Fresh copies of the implementation's buffers (``old -> new``) and the mutator
    that moves its body onto them."""
    variables: dict = {}
    buffers: dict = {}
    for buffer in intrin.impl_buffers():
        data = E.Var(buffer.data.name, buffer.data.dtype)
        variables[buffer.data] = data
        buffers[buffer] = attrs.evolve(
            buffer,
            data=data,
            shape=tuple(_fresh(x, variables) for x in buffer.shape),
            strides=tuple(_fresh(x, variables) for x in buffer.strides),
            elem_offset=_fresh(buffer.elem_offset, variables),
        )
    return buffers, _Renew(buffers, variables)


# ------------------------------------------------------------ view checks


def _check_view(subject, view, impl_buffer, source: BufferRegion, realize, bounds) -> None:
    """The view can stand for the region: a dense view needs a contiguous region, a
    constant offset must be the region's, and an ``offset_factor`` must divide it."""
    buffer = source.buffer
    strides = buffer.strides or dense_strides(buffer.shape)
    lead = len(source.region) - len(view.shape)
    # a view's constant strides (all of them, for a dense view) must be the region's;
    # its variable strides are bound to the region's when lowering
    declared = view.strides or dense_strides(view.shape)
    for dim, (r, stride, want) in enumerate(zip(source.region[lead:], strides[lead:], declared)):
        if isinstance(want, E.Var) or const_int_value(r.extent) == 1:
            continue
        if _difference(stride, want) != 0:
            how = "declares stride" if view.strides else "is dense, with stride"
            raise schedule_error(
                "tensorize", subject,
                f"buffer {impl_buffer.name} of the implementation {how} {want} in "
                f"dimension {dim}, but the region of {buffer.name} it stands for has "
                f"stride {stride} there; declare a variable stride (strides=[s, 1])",
                realize,
            )  # fmt: skip
    offset = E.IntImm(strides[0].dtype if strides else "int32", 0)
    for r, stride in zip(source.region, strides):
        offset = binary("add", offset, binary("mul", r.min, stride))
    offset = bounds.simplify(offset)
    if not isinstance(view.elem_offset, E.Var):
        if _difference(binary("add", buffer.elem_offset, offset), view.elem_offset) != 0:
            raise schedule_error(
                "tensorize", subject,
                f"buffer {impl_buffer.name} of the implementation has element offset "
                f"{view.elem_offset}, but the region of {buffer.name} starts at {offset}; "
                "give it an offset_factor (or a variable elem_offset)",
                realize,
            )  # fmt: skip
        return
    factor = view.offset_factor
    if factor <= 1:
        return
    if isinstance(buffer.elem_offset, E.Var):  # the buffer's own offset is a multiple of
        aligned = buffer.offset_factor % factor == 0 if buffer.offset_factor else False
    else:  # its offset_factor, when it declares one
        aligned, offset = True, bounds.simplify(binary("add", buffer.elem_offset, offset))
    if not aligned or not _divisible(offset, factor):
        raise schedule_error(
            "tensorize", subject,
            f"buffer {impl_buffer.name} of the implementation needs offset_factor {factor}, "
            f"but the region of {buffer.name} starts at element offset {offset}",
            realize,
        )  # fmt: skip


def _difference(a, b) -> int | None:
    """``a - b`` when it is a known constant, else None."""
    form = linear_form(binary("sub", a, b))
    return form.const if form.is_const() else None


def _divisible(expr, factor: int) -> bool:
    form = linear_form(expr)
    return form.const % factor == 0 and all(c % factor == 0 for _, c in form.live_terms())
