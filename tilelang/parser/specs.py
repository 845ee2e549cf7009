"""Values that ``T.*`` calls produce before the statement around them gives them meaning.

``T.grid(4, 8)`` means nothing until a ``for`` consumes it; ``T.alloc_buffer(...)``
needs the name it is assigned to. The function table returns these small records and
the statement builder turns them into IR.
"""

from __future__ import annotations

import attrs

from tilelang.ir import Buffer, DataType, IntImm, PrimExpr, Var, decl_buffer
from tilelang.ir.buffer import default_index_dtype


@attrs.frozen
class LoopDesc:
    """One loop of a ``for`` header: its range, kind and options."""

    min: PrimExpr
    extent: PrimExpr
    kind: str
    thread: str | None = None
    annotations: dict | None = None
    step: PrimExpr | None = None


@attrs.frozen
class LoopSpec:
    """``T.grid`` / ``T.serial`` / ``range`` / ...: the loops a ``for`` header makes."""

    loops: tuple


@attrs.frozen
class BlockSpec:
    """``T.block(name)``, consumed by ``with``."""

    name: str


@attrs.frozen
class InitSpec:
    """``T.init()``, consumed by ``with`` inside a block."""


@attrs.frozen
class AttrSpec:
    """``T.attr(node, key, value)``, consumed by ``with``."""

    node: object
    key: str
    value: object


@attrs.frozen
class AssertSpec:
    """``T.Assert(condition, message)``, consumed by ``with`` (an assert over a body
    that is not the rest of its block)."""

    condition: PrimExpr
    message: object


@attrs.frozen
class AxisSpec:
    """``T.axis.spatial(dom, binding)`` and friends: one block iterator."""

    iter_type: int
    dom: object  # a Range
    binding: PrimExpr
    dtype: DataType


@attrs.frozen
class RemapSpec:
    """``T.axis.remap("SSR", [i, j, k])``: one iterator per loop variable."""

    kinds: str
    bindings: tuple


@attrs.frozen
class BufferSpec:
    """The arguments of ``T.Buffer`` / ``T.alloc_buffer`` / ``T.match_buffer``."""

    shape: tuple
    dtype: DataType
    data: Var | None = None
    strides: tuple = ()
    elem_offset: object = None
    scope: str = "global"
    offset_factor: int = 0
    axis_separators: tuple = ()

    def make(self, name: str, span=None, allocation: bool = False) -> Buffer:
        """The buffer, named ``name``. An ``allocation`` owns its memory, so its
        offset is 0 even with an ``offset_factor`` (a view's is the matched memory's)."""
        # a fresh data pointer is located where the buffer is declared
        data = self.data if self.data is not None else Var(name, "handle", span=span)
        elem_offset = self.elem_offset
        if allocation and elem_offset is None:
            elem_offset = IntImm(default_index_dtype(self.shape), 0)
        return decl_buffer(
            self.shape,
            self.dtype,
            name,
            data=data,
            strides=self.strides,
            elem_offset=elem_offset,
            scope=self.scope,
            offset_factor=self.offset_factor,
            span=span,
            axis_separators=self.axis_separators,
        )


@attrs.frozen
class AllocBufferSpec:
    """``T.alloc_buffer(...)``: a buffer owned by the enclosing block (or the root)."""

    buffer: BufferSpec
    annotations: dict = attrs.field(factory=dict)


@attrs.frozen
class MatchBufferSpec:
    """``T.match_buffer(source, ...)``: source is a handle parameter or a region."""

    source: object
    buffer: BufferSpec


@attrs.frozen
class DeclBufferSpec:
    """``T.decl_buffer(...)``: a DeclBuffer over the rest of the body."""

    buffer: BufferSpec


@attrs.frozen
class AllocateSpec:
    """``T.allocate(extents, dtype, scope)``: an Allocate over the rest of the body."""

    extents: tuple
    dtype: DataType
    scope: str
    condition: PrimExpr
    annotations: dict = attrs.Factory(dict)


@attrs.frozen
class SymbolicVarSpec:
    """``T.int64()``: a new symbolic variable, named by the assignment;
    ``T.int64(is_size_var=True)`` makes a :class:`~tilelang.ir.SizeVar` (known >= 0)."""

    dtype: DataType
    is_size_var: bool = False
    #: a handle's pointer type (``T.handle("float32", "shared")``), or None
    pointer: object = None


@attrs.frozen
class Directive:
    """A statement-level call that annotates its surroundings: ``T.where``,
    ``T.reads``, ``T.writes``, ``T.block_attr``, ``T.func_attr``."""

    kind: str
    payload: object


@attrs.frozen
class Evaluated:
    """``T.evaluate(value)``."""

    value: PrimExpr


@attrs.frozen
class BufferMethod:
    """``A.access_ptr`` before it is called."""

    buffer: Buffer
    name: str


@attrs.frozen
class EnvThreadSpec:
    """``T.env_thread("blockIdx.x")``: a thread index variable, named by the assignment."""

    tag: str


@attrs.frozen
class LaunchSpec:
    """``T.launch_thread(thread, extent)``: ``thread`` is a tag (a new variable, named by
    the assignment or ``as``) or a variable from ``T.env_thread``."""

    thread: object
    extent: PrimExpr


@attrs.frozen
class AllocateConstSpec:
    """``T.allocate_const(data, dtype, extents)``: constant storage, named by the
    assignment (or ``with ... as``)."""

    data: tuple
    dtype: DataType
    extents: tuple
    annotations: dict


@attrs.frozen
class LetSpec:
    """``T.LetStmt(value)``, consumed by ``with ... as x:`` (classic TVMScript's let),
    or ``T.LetStmt(value, var=y)`` by ``with ...:``, binding the existing ``y``."""

    value: PrimExpr
    var: object = None


class Captured:
    """A Python function from a decorated function's scope, called while parsing
    (``A[0] = expression(i, j, k)`` with ``expression = lambda i, j, k: ...``)."""

    def __init__(self, name: str, func):
        self.name, self.func = name, func

    def __repr__(self):
        return f"Python function {self.name}"


@attrs.frozen
class LambdaSpec:
    """A ``lambda`` argument (T.comm_reducer's combiner): ``apply(values)`` evaluates
    its body with the parameters bound to ``values`` (variables the callee makes)."""

    params: tuple
    apply: object


@attrs.frozen
class RealizeSpec:
    """``T.realize(A[0:16], "global", condition=...)``: TVM's BufferRealize over the rest
    of the body (or a ``with`` body), under ``T.attr(A, "realize_scope", scope)`` when a
    storage scope is given."""

    region: object  # a BufferRegion
    scope: str | None
    condition: object
