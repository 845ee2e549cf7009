"""cache_inplace: a buffer a block both reads and writes (an in-place update, e.g. an
extern call on ``data.data``) is staged through a cache in ``storage_scope``: a copy
in right before the block, the block on the cache, a copy back right after::

    for i0 in range(1):                      for i0 in range(1):
        with T.block("ext_call"):                for ax0 in range(64):
            T.reads(data[0:64])                      with T.block("data_local"):
            T.writes(data[0:64])                         data_local[v0] = data[v0]
            ...                                  with T.block("ext_call"):
                                                     T.reads(data_local[0:64]) ...
                                                 for ax0 in range(64):
                                                     with T.block("data_local_1"):
                                                         data[v0] = data_local[v0]

The copies cover the block's region of the buffer (constant extents), where the
block stands, so they see the loops around it. Returns the two copy blocks.
"""

from __future__ import annotations

import attrs

from tilelang.arith import const_value
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.analysis import get_block_read_write_region
from tilelang.ir.buffer import Range, decl_buffer
from tilelang.ir.convert import binary
from tilelang.ir.functor import substitute
from tilelang.schedule.cache import swap_buffer
from tilelang.schedule.common import block_subject, find_block, fresh_name, taken_names
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.state import Tree, rewrite

P = "cache_inplace"


def _region(subject, realize, buffer):
    """The block's region of ``buffer`` in terms of the surrounding loops: the union
    of its read and write regions (which must have constant extents)."""
    block = realize.block
    binding = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    regions = [r for r in (*block.reads, *block.writes) if r.buffer is buffer]
    ranges = None
    for region in regions:
        mine = []
        for r in region.region:
            extent = const_value(r.extent)
            if extent is None:
                raise schedule_error(
                    P, subject, f"the region of {buffer.name} has a symbolic extent"
                )
            mine.append((substitute(r.min, binding), extent))
        if ranges is None:
            ranges = mine
        elif any(
            const_value(binary("sub", a[0], b[0])) != 0 or a[1] != b[1]
            for a, b in zip(ranges, mine)
        ):
            raise schedule_error(
                P, subject, f"the block reads and writes different regions of {buffer.name}"
            )
    return ranges


def _copy(name, ranges, src, dst):
    ivs, loops, values = [], [], []
    for d, (lo, extent) in enumerate(ranges):
        dtype = lo.dtype
        var, loop = E.Var(f"v{d}", dtype), E.Var(f"ax{d}", dtype)
        ivs.append(S.IterVar(Range(E.IntImm(dtype, 0), src.shape[d]), var, S.IterVar.DataPar))
        loops.append((loop, extent))
        values.append(loop if const_value(lo) == 0 else binary("add", lo, loop))
    indices = tuple(iv.var for iv in ivs)
    block = S.Block(
        tuple(ivs), (), (), name, S.BufferStore(dst, E.BufferLoad(src, indices), indices)
    )
    reads, writes = get_block_read_write_region(block)
    block = attrs.evolve(block, reads=tuple(reads), writes=tuple(writes))
    stmt = S.BlockRealize(tuple(values), E.IntImm("bool", 1), block)
    for loop, extent in reversed(loops):
        stmt = S.For(
            loop, E.IntImm(loop.dtype, 0), E.IntImm(loop.dtype, extent), S.ForKind.SERIAL, stmt
        )
    return stmt


def cache_inplace(func, name, read_buffer_index, storage_scope):
    """Returns ``(new_func, [copy-in block name, copy-out block name])``."""
    tree = Tree(func)
    realize = find_block(tree, name, P)
    subject = block_subject(realize)
    block = realize.block
    reads = block.reads if block.reads or block.writes else get_block_read_write_region(block)[0]
    if not isinstance(read_buffer_index, int) or not 0 <= read_buffer_index < len(reads):
        raise schedule_error(
            P, subject,
            f"read buffer index {read_buffer_index!r} is out of range; the block reads "
            f"{[r.buffer.name for r in reads]}",
        )  # fmt: skip
    if not isinstance(storage_scope, str) or not storage_scope:
        raise schedule_error(P, subject, f"invalid storage scope {storage_scope!r}")
    buffer = reads[read_buffer_index].buffer
    if not any(w.buffer is buffer for w in block.writes):
        raise schedule_error(P, subject, f"the block reads {buffer.name} but does not write it")
    ranges = _region(subject, realize, buffer)
    taken = taken_names(tree)
    cache_name = fresh_name(taken, f"{buffer.name}_{storage_scope.replace('.', '_')}")
    cache = decl_buffer(buffer.shape, buffer.dtype, cache_name, scope=storage_scope)
    in_name = cache_name  # the copies are named after the cache (as TVM's)
    out_name = fresh_name(taken | {cache_name}, cache_name)
    # accesses, and pointers taken from the data variable (access_ptr, .data)
    new_block = substitute(swap_buffer(block, buffer, cache), {buffer.data: cache.data})
    nest = S.seq_stmt(
        _copy(in_name, ranges, buffer, cache),
        attrs.evolve(realize, block=new_block),
        _copy(out_name, ranges, cache, buffer),
    )
    scope = tree.scope_realize(realize)
    func = rewrite(func, {id(realize): nest})
    if scope is None:
        root = S.Block((), (), (), "root", func.body, alloc_buffers=(cache,))
        return func.with_body(S.BlockRealize((), E.IntImm("bool", 1), root)), [in_name, out_name]
    owner = Tree(func).realizes[scope.block.name_hint][0].block
    grown = attrs.evolve(owner, alloc_buffers=(*owner.alloc_buffers, cache))
    return rewrite(func, {id(owner): grown}), [in_name, out_name]
