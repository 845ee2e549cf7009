"""Function versioning on aliasing: a ``noalias`` body for calls whose buffers do not
overlap, the cautious body for the calls whose buffers do.

Without ``tir.noalias`` LLVM must assume that a store to the output may change any
input, so an innermost loop ``O[.., xi] += I[.., xi] * W[..]`` can only be vectorised
behind a runtime overlap check of its own, which the vectoriser rejects for short
loops (an 8-wide tile: the checks cost more than the loop). gcc versions such loops
anyway; LLVM left the conv2d of benchmarks/bench_conv2d.py scalar, 2.7x gcc's time.

Here the check is made once per call instead: when every buffer parameter's extent is a
constant and at least one buffer is written, the exported function compares the
address ranges of each written buffer with every other buffer and calls one of two
internal copies of the body, ``<symbol>.no_alias`` (buffer pointers ``noalias``) when
they are disjoint and ``<symbol>.may_alias`` (the plain body) when not. Results are
the same either way; only the speed differs. Read-only buffers may overlap each other
freely.
"""

from __future__ import annotations

from llvmlite import ir

from tilelang.ir import expr as E
from tilelang.ir.functor import StmtExprVisitor

from .types import I64, element_bytes


class _Written(StmtExprVisitor):
    """Data variables a body may write: stored buffers, and any buffer whose pointer
    escapes into a call (``tvm_access_ptr``, ``call_extern``)."""

    def __init__(self):
        self.data: set = set()

    def visit_buffer_store(self, op):
        self.data.add(op.buffer.data)
        self.generic_visit(op)

    def visit_call(self, op):
        for arg in op.args:
            if isinstance(arg, E.Var) and arg.dtype.is_handle():
                self.data.add(arg)
        self.generic_visit(op)


def overlap_checks(func, extent_of) -> list[tuple[int, int, int, int]] | None:
    """``(i, j, bytes_i, bytes_j)`` for each pair of buffer parameters, by argument
    position, that must not overlap for the ``noalias`` body to be valid (``i`` is
    written); None when versioning does not apply (``tir.noalias`` already, fewer than
    two buffers, nothing written, an extent that is not a constant, or a pointer
    parameter that is not a buffer, whose accesses the checks could not cover)."""
    if func.attrs.get("tir.noalias", False):
        return None
    if any(p.dtype.is_handle() and p not in func.buffer_map for p in func.params):
        return None
    buffers = [(k, func.buffer_map[p]) for k, p in enumerate(func.params) if p in func.buffer_map]
    if len(buffers) < 2:
        return None
    sizes = {}
    for k, buffer in buffers:
        extent = extent_of(buffer)
        offset = buffer.elem_offset
        if not extent or not (isinstance(offset, E.IntImm) and offset.value == 0):
            return None
        sizes[k] = extent * element_bytes(buffer.dtype)
    written = _Written()
    written.visit(func.body)
    writes = [k for k, buffer in buffers if buffer.data in written.data]
    pairs = []
    for i in writes:
        for j, _ in buffers:
            if j != i and (j not in writes or j > i):
                pairs.append((i, j, sizes[i], sizes[j]))
    return pairs or None


def add_versioned_function(codegen, symbol: str, func, extent_of) -> ir.Function:
    """Emit ``func`` as ``symbol``, versioned on aliasing when :func:`overlap_checks`
    applies, else as one plain function."""
    pairs = overlap_checks(func, extent_of)
    if pairs is None:
        return codegen.add_function(symbol, func)
    may_alias = codegen.add_function(f"{symbol}.may_alias", func, linkage="internal")
    no_alias = codegen.add_function(f"{symbol}.no_alias", func, noalias=True, linkage="internal")
    fn = codegen.declare_function(symbol, may_alias.function_type)
    for arg, inner in zip(fn.args, may_alias.args):
        arg.name = inner.name
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    disjoint = ir.Constant(ir.IntType(1), 1)
    for i, j, bytes_i, bytes_j in pairs:
        start_i, start_j = b.ptrtoint(fn.args[i], I64), b.ptrtoint(fn.args[j], I64)
        i_before_j = b.icmp_unsigned("<=", b.add(start_i, ir.Constant(I64, bytes_i)), start_j)
        j_before_i = b.icmp_unsigned("<=", b.add(start_j, ir.Constant(I64, bytes_j)), start_i)
        disjoint = b.and_(disjoint, b.or_(i_before_j, j_before_i))
    fast, slow = fn.append_basic_block("no_alias"), fn.append_basic_block("may_alias")
    b.cbranch(disjoint, fast, slow)
    for block, target in ((fast, no_alias), (slow, may_alias)):
        b.position_at_end(block)
        b.call(target, list(fn.args))
        b.ret_void()
    return fn
