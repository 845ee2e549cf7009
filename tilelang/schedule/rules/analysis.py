"""What the default rules need to know about a block: its iterators, the loops that
bind them, and how each buffer access moves when an iterator steps by one.

Everything here reads the IR and decides nothing; the rules (``tiling``, ``fusion``,
``loops``) turn the facts into schedule primitives.
"""

from __future__ import annotations

import attrs

from tilelang.arith.analyzer import const_value
from tilelang.arith.linear import linear_form
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.analysis import uses_var
from tilelang.ir.functor import StmtExprVisitor

SPATIAL, REDUCE = S.IterVar.DataPar, S.IterVar.CommReduce


@attrs.frozen
class Access:
    """One load or store: the buffer and, per block iterator, its element stride in the
    flattened buffer (0: does not move; None: not an affine function of the iterator)."""

    buffer: object
    strides: dict  # iter var (by identity, as id) -> int | None
    is_write: bool


@attrs.frozen
class BlockInfo:
    """A leaf block under the function's root, with the loops above it.

    ``loops`` are the loop variables outermost first and ``bound`` maps each block
    iterator (by ``id``) to the position in ``loops`` of the one loop that binds it.
    """

    name: str
    block: S.Block
    loops: tuple
    extents: tuple
    bound: dict
    accesses: tuple

    @property
    def iter_vars(self):
        return self.block.iter_vars

    @property
    def spatial(self) -> list:
        return [iv for iv in self.block.iter_vars if iv.iter_type == SPATIAL]

    @property
    def reduce(self) -> list:
        return [iv for iv in self.block.iter_vars if iv.iter_type == REDUCE]

    @property
    def is_reduction(self) -> bool:
        return bool(self.reduce)

    @property
    def has_init(self) -> bool:
        """A reduction that starts from its ``T.init()`` value; one without accumulates
        into what the output held, which a cached accumulator would lose."""
        return self.block.init is not None

    @property
    def write(self) -> Access | None:
        writes = [a for a in self.accesses if a.is_write]
        return writes[0] if len(writes) == 1 else None

    @property
    def reads(self) -> list:
        written = self.write.buffer if self.write else None
        return [a for a in self.accesses if not a.is_write and a.buffer is not written]

    @property
    def work(self) -> int | None:
        """Iterations of the block (the product of its loops' extents), None when a
        loop's extent is symbolic."""
        total = 1
        for extent in self.extents:
            if extent is None:
                return None
            total *= extent
        return total

    def loop_of(self, iv) -> int:
        return self.bound[id(iv.var)]

    def extent_of(self, iv) -> int:
        return self.extents[self.loop_of(iv)]


def _row_major_strides(buffer) -> list:
    """Element strides per axis; None for an axis whose stride is symbolic (the last
    axis always has stride 1)."""
    strides, acc = [], 1
    for d in reversed([const_value(d) for d in buffer.shape]):
        strides.append(acc)
        acc = None if acc is None or d is None else acc * d
    return strides[::-1]


def _strides(buffer, indices, iter_vars) -> dict:
    layout = _row_major_strides(buffer)
    out = {id(iv.var): 0 for iv in iter_vars}
    for axis, index in enumerate(indices):
        form = linear_form(index)
        for iv in iter_vars:
            key = id(iv.var)
            if out[key] is None:
                continue
            coeff = 0
            for atom, c in form.live_terms():
                if atom is iv.var:
                    coeff += c
                elif uses_var(atom, iv.var):
                    coeff = None
                    break
            if coeff is None or (coeff and layout[axis] is None):
                out[key] = None
            elif coeff:
                out[key] += coeff * layout[axis]
    return out


class _Accesses(StmtExprVisitor):
    def __init__(self, iter_vars):
        self.iter_vars = iter_vars
        self.found: list[Access] = []

    def visit_buffer_load(self, node):
        self.found.append(
            Access(node.buffer, _strides(node.buffer, node.indices, self.iter_vars), False)
        )
        self.generic_visit(node)

    def visit_buffer_store(self, node):
        self.found.append(
            Access(node.buffer, _strides(node.buffer, node.indices, self.iter_vars), True)
        )
        self.generic_visit(node)


def block_accesses(block: S.Block) -> tuple:
    """The loads and stores of the block's body (its init is the same store)."""
    visitor = _Accesses(block.iter_vars)
    visitor.visit(block.body)
    return tuple(visitor.found)


def leaf_blocks(func) -> list[BlockInfo] | None:
    """The blocks directly under the root block with the loops binding them, in program
    order; None when the function is not a plain "loops around blocks" nest (nested
    blocks, bindings that are not one loop variable each, loops not starting at 0),
    which the rules leave alone. Symbolic extents are kept as None."""
    infos: list[BlockInfo] = []
    ok = True

    def walk(stmt, loops):
        nonlocal ok
        if not ok:
            return
        if isinstance(stmt, S.SeqStmt):
            for s in stmt.seq:
                walk(s, loops)
        elif isinstance(stmt, S.For):
            walk(stmt.body, loops + [stmt])
        elif isinstance(stmt, S.BlockRealize):
            info = _block_info(stmt, loops)
            if info is None:
                ok = False
            else:
                infos.append(info)
        else:
            ok = False

    root = func.body
    if isinstance(root, S.BlockRealize) and not root.block.iter_vars:
        root = root.block.body
    walk(root, [])
    return infos if ok and infos else None


def _block_info(realize: S.BlockRealize, loops: list) -> BlockInfo | None:
    block = realize.block
    if not block.iter_vars or block.alloc_buffers or block.match_buffers:
        return None
    if not (isinstance(realize.predicate, E.IntImm) and realize.predicate.value):
        return None
    if _has_nested_block(block.body):
        return None
    loop_vars = [f.loop_var for f in loops]
    extents = []  # None where symbolic
    for f in loops:
        if const_value(f.min) != 0 or f.step is not None:
            return None
        extents.append(const_value(f.extent))
    bound = {}
    for iv, value in zip(block.iter_vars, realize.iter_values):
        if iv.iter_type not in (SPATIAL, REDUCE):
            return None
        position = next((p for p, v in enumerate(loop_vars) if v is value), None)
        if position is None or position in bound.values():
            return None
        bound[id(iv.var)] = position
    if len(bound) != len(loops):
        return None  # a loop binding nothing (or bound twice): not a plain nest
    return BlockInfo(
        block.name_hint, block, tuple(loop_vars), tuple(extents), bound, block_accesses(block)
    )


class _Nested(StmtExprVisitor):
    found = False

    def visit_block(self, node):
        self.found = True


def _has_nested_block(stmt) -> bool:
    visitor = _Nested()
    visitor.visit(stmt)
    return visitor.found


def vector_iter(info: BlockInfo):
    """The spatial iterator along which the block's output is contiguous (stride 1), or
    None."""
    write = info.write
    if write is None:
        return None
    for iv in info.spatial:
        if write.strides.get(id(iv.var)) == 1:
            return iv
    return None


def unit_or_invariant(info: BlockInfo, iv) -> bool:
    """Every access either does not move along ``iv`` or moves by one element."""
    return all(a.strides.get(id(iv.var)) in (0, 1) for a in info.accesses)
