"""Statements, including TensorIR's blocks.

Field names and positional order follow TVM (``For(loop_var, min, extent, kind,
body)``, ``BufferStore(buffer, value, indices)``...). ``For`` adds a ``step`` for
strided loops: it runs ``loop_var = min, min + step, ...`` while below
``min + extent``.
"""

from __future__ import annotations

import enum

import attrs

from tilelang.ir import expr as E
from tilelang.ir.buffer import Buffer, Range
from tilelang.ir.convert import convert
from tilelang.ir.dtype import DataType
from tilelang.ir.lanes import check_predicate
from tilelang.ir.node import Node, child, define, plain, ref, span_field


class Stmt(Node):
    """Base class of statements (TVM's ``Stmt``)."""

    __slots__ = ()
    is_root = True


def _frozen_dict(mapping) -> dict:
    return dict(mapping or {})


def _tuple(items) -> tuple:
    """A tuple of ``items``; None (as TVM's constructors take it) is empty."""
    return () if items is None else tuple(items)


class ForKind(enum.IntEnum):
    """How a loop runs. The numbers are TVM's (``For.kind == 4`` is a thread binding);
    a member is also found by its script name: ``ForKind("unroll")``."""

    SERIAL = 0
    PARALLEL = 1
    VECTORIZED = 2
    UNROLLED = 3
    THREAD_BINDING = 4

    @property
    def tag(self) -> str:
        """The script name of the kind (``"serial"``, ``"unroll"``...)."""
        return _KIND_TAGS[self]

    @classmethod
    def _missing_(cls, value):
        if isinstance(value, str):
            for member, tag in _KIND_TAGS.items():
                if tag == value:
                    return member
        return None

    def __repr__(self) -> str:
        return f"ForKind.{self.name}"

    def __str__(self) -> str:
        return self.tag


_KIND_TAGS = {
    ForKind.SERIAL: "serial",
    ForKind.PARALLEL: "parallel",
    ForKind.VECTORIZED: "vectorized",
    ForKind.UNROLLED: "unroll",
    ForKind.THREAD_BINDING: "thread_binding",
}


def _optional_expr(value):
    return None if value is None else convert(value)


def _for_kind(kind) -> ForKind:
    return kind if isinstance(kind, ForKind) else ForKind(kind)


@attrs.frozen(eq=False, repr=False)
class BufferStore(Stmt):
    """``buffer[indices] = value``; with a ``predicate`` (TVM's
    ``A.vstore(indices, value, predicate=mask)``, a bool vector of the value's lanes)
    only the lanes whose mask is true are written."""

    buffer: Buffer = ref()
    value: E.PrimExpr = child()
    indices: tuple = child(converter=tuple)
    predicate: object = child(default=None, kw_only=True)
    span: object = span_field()

    def __attrs_post_init__(self):
        if self.predicate is not None:
            check_predicate(self, self.value.dtype)


class ThreadTag(str):
    """A loop's thread axis: the string ``"threadIdx.x"`` that also answers TVM's
    ``For.thread_binding.thread_tag``."""

    __slots__ = ()

    @property
    def thread_tag(self) -> str:
        return str(self)


def _thread_tag(value):
    return ThreadTag(value) if isinstance(value, str) else value


@attrs.frozen(eq=False, repr=False)
class For(Stmt):
    """A loop. ``thread_binding`` names the thread axis (``"threadIdx.x"``) of a
    ``THREAD_BINDING`` loop; ``step`` is None for unit-stride loops."""

    loop_var: E.Var = define()
    min: E.PrimExpr = child(converter=convert)
    extent: E.PrimExpr = child(converter=convert)
    kind: ForKind = plain(converter=_for_kind)
    body: Stmt = child()
    thread_binding: str | None = plain(default=None, converter=_thread_tag)
    annotations: dict = plain(factory=dict, converter=_frozen_dict)
    step: E.PrimExpr | None = child(default=None, converter=_optional_expr)
    span: object = span_field()

    def __attrs_post_init__(self):
        # ``For(i64_var, 0, n)``: a constant bound takes the loop variable's type, as a
        # literal does in ``i + 1`` (the converters cannot see the loop variable).
        dtype = self.loop_var.dtype
        for name in ("min", "extent", "step"):
            bound = getattr(self, name)
            if isinstance(bound, E.IntImm) and bound.dtype != dtype and dtype.is_integer():
                object.__setattr__(self, name, E.IntImm(dtype, bound.value, span=bound.span))


@attrs.frozen(eq=False, repr=False)
class While(Stmt):
    condition: E.PrimExpr = child()
    body: Stmt = child()
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class IfThenElse(Stmt):
    condition: E.PrimExpr = child()
    then_case: Stmt = child()
    else_case: Stmt | None = child(default=None)
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class LetStmt(Stmt):
    """``var = value`` for the rest of ``body``."""

    var: E.Var = define()
    value: E.PrimExpr = child()
    body: Stmt = child()
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class AttrStmt(Stmt):
    """An annotation ``attr_key = value`` on ``node`` that holds over ``body``."""

    node: object = plain()
    attr_key: str = plain()
    value: E.PrimExpr = child(converter=convert)
    body: Stmt = child()
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class BufferRealize(Stmt):
    """TVM's pre-TensorIR storage realisation: ``buffer`` holds ``bounds`` (ranges, one
    per axis) for ``body`` when ``condition`` holds. Written ``T.realize(A[0:16], "")``;
    tilelang parses and prints it but does not lower it (VerifyWellFormed refuses it)."""

    buffer: Buffer = ref()
    bounds: tuple = child(converter=tuple)
    condition: E.PrimExpr = child(converter=convert)
    body: Stmt = child()
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class AssertStmt(Stmt):
    """Fails with ``message`` unless ``condition`` holds, then runs ``body``.
    ``error_kind`` names the exception class the failure stands for (TVM's
    ``assert cond, ("ValueError", [...])``; ``RuntimeError`` by default)."""

    condition: E.PrimExpr = child()
    message: E.PrimExpr = child(converter=convert)
    body: Stmt = child()
    error_kind: str = plain(default="RuntimeError")
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class Allocate(Stmt):
    """Storage of ``extents`` elements of ``dtype`` behind ``buffer_var`` for ``body``."""

    buffer_var: E.Var = define()
    dtype: DataType = plain(converter=DataType)
    extents: tuple = child(converter=lambda xs: tuple(map(convert, xs)))
    condition: E.PrimExpr = child(converter=convert)
    body: Stmt = child()
    annotations: dict = plain(factory=dict, converter=_frozen_dict)
    scope: str = plain(default="global", kw_only=True)
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class AllocateConst(Stmt):
    """Constant storage: ``data`` (the values, flat, row-major) of ``dtype`` with shape
    ``extents`` behind ``buffer_var`` for ``body`` (TVM's ``T.allocate_const``)."""

    buffer_var: E.Var = define()
    dtype: DataType = plain(converter=DataType)
    extents: tuple = child(converter=lambda xs: tuple(map(convert, xs)))
    data: tuple = plain(converter=tuple)
    body: Stmt = child()
    annotations: dict = plain(factory=dict, converter=_frozen_dict)
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class DeclBuffer(Stmt):
    """Declares ``buffer`` (over storage allocated elsewhere) for ``body``."""

    buffer: Buffer = define()
    body: Stmt = child()
    span: object = span_field()


def _flat_seq(stmts) -> tuple:
    """A SeqStmt's children with nested SeqStmts spliced in (TVM normalizes them the
    same way, so that a sequence prints and parses back as itself)."""
    flat = []
    for stmt in stmts:
        if isinstance(stmt, SeqStmt):
            flat.extend(stmt.seq)
        else:
            flat.append(stmt)
    return tuple(flat)


@attrs.frozen(eq=False, repr=False)
class SeqStmt(Stmt):
    """Statements run in order; a nested SeqStmt is flattened into its parent. Use
    :func:`seq_stmt` to build one (it also drops ``None`` and unwraps a single one)."""

    seq: tuple = child(converter=_flat_seq)
    span: object = span_field()

    def __len__(self) -> int:
        return len(self.seq)

    def __getitem__(self, index):
        return self.seq[index]


@attrs.frozen(eq=False, repr=False)
class Evaluate(Stmt):
    """Evaluates an expression for its effect (an extern call)."""

    value: E.PrimExpr = child(converter=convert)
    span: object = span_field()


def seq_stmt(*stmts, span=None) -> Stmt:
    """One statement for ``stmts``: nested sequences are flattened, ``None`` dropped,
    and a single statement is returned as itself."""
    flat: list[Stmt] = []
    for stmt in stmts:
        if stmt is None:
            continue
        if isinstance(stmt, (list, tuple)):
            inner = seq_stmt(*stmt)
            if inner is not None:
                flat.extend(inner.seq if isinstance(inner, SeqStmt) else (inner,))
        elif isinstance(stmt, SeqStmt):
            flat.extend(stmt.seq)
        else:
            flat.append(stmt)
    if not flat:
        return Evaluate(E.IntImm("int32", 0), span=span)
    return flat[0] if len(flat) == 1 else SeqStmt(tuple(flat), span=span)


# ---------------------------------------------------------------- TensorIR


@attrs.frozen(eq=False, repr=False)
class IterVar(Node):
    """A block iterator: ``var`` ranges over ``dom``; ``iter_type`` says how."""

    DataPar = 0
    ThreadIndex = 1
    CommReduce = 2
    Ordered = 3
    Opaque = 4

    dom: Range = child()
    var: E.Var = define()
    iter_type: int = plain()
    thread_tag: str = plain(default="")
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class Block(Stmt):
    """A TensorIR block: an isolated computation over its iterators.

    ``reads``/``writes`` are the buffer regions it touches, ``init`` the statement a
    reduction block runs on its first reduction iteration.
    """

    # the iterators first: match_buffers sources and regions mention them
    iter_vars: tuple = child(first=True, converter=tuple)
    reads: tuple = child(converter=tuple)
    writes: tuple = child(converter=tuple)
    name_hint: str = plain()
    body: Stmt = child()
    init: Stmt | None = child(default=None)
    alloc_buffers: tuple = define(factory=tuple, converter=_tuple)
    match_buffers: tuple = child(first=True, factory=tuple, converter=_tuple)
    annotations: dict = plain(factory=dict, converter=_frozen_dict)
    span: object = span_field()


@attrs.frozen(eq=False, repr=False)
class BlockRealize(Stmt):
    """A block instance: iterator values bound from the surrounding loops, and the
    predicate (``T.where``) under which it runs."""

    iter_values: tuple = child(converter=lambda xs: tuple(map(convert, xs)))
    predicate: E.PrimExpr = child(converter=convert)
    block: Block = child()
    span: object = span_field()
