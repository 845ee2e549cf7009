"""``seq()``: turning a comprehension of statements into an IR body.

A tiled program is a Python generator of statements::

    body = seq(
        load(view) for seg in segment_by_chunk(0, 4, N) for view in [A[seg]]
    )

With concrete sizes the loops are plain Python loops, unrolled at build time. With a
symbolic size, ``segment_by_chunk`` (like :func:`loop` and :func:`let`) yields a
single symbolic value and must turn into a real ``For``. It does so by opening a
*frame* when the generator asks it for its value and closing it when the generator
asks for the next one: every statement :func:`seq` receives in between is collected
in that frame and ends up inside the loop. That only works when ``seq`` consumes the
generator lazily, one statement at a time, which is why a list (evaluated before
``seq`` runs) cannot hold a symbolic loop; doing so is reported as an error.
"""

from __future__ import annotations

import contextvars
import types
from collections.abc import Callable, Iterable, Iterator

from tilelang.errors import TIRTypeError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.convert import convert
from tilelang.ir.functor import StmtExprVisitor
from tilelang.tiling import arith

# The builder of the innermost running seq(). A context variable rather than a
# parameter because the frames are opened by iterators that the user's generator
# calls, far from seq() itself (the same reason TVM's IRBuilder keeps a stack).
_ACTIVE: contextvars.ContextVar[_Builder | None] = contextvars.ContextVar(
    "tilelang_tiling_builder", default=None
)


class _Frame:
    """Statements collected while a symbolic loop or binding is open."""

    def __init__(self, label: str, wrap: Callable[[S.Stmt], S.Stmt] | None, defines=()):
        self.label = label
        self.wrap = wrap
        self.defines = tuple(defines)
        self.stmts: list[S.Stmt] = []


class _Builder:
    """The frame stack of one seq() call."""

    def __init__(self):
        self.frames = [_Frame("seq()", None)]
        self.scoped_vars: dict[E.Var, str] = {}

    def add(self, stmt: S.Stmt) -> None:
        self.frames[-1].stmts.append(stmt)

    def consume(self, item) -> None:
        if item is None:
            return
        if isinstance(item, S.Stmt):
            self.add(item)
        elif isinstance(item, E.Call):
            self.add(S.Evaluate(item))
        elif isinstance(item, (list, tuple)):
            for element in item:
                self.consume(element)
        elif isinstance(item, (types.GeneratorType, Iterator)):
            for element in item:  # lazily: open frames wrap what comes next
                self.consume(element)
        else:
            raise TIRTypeError(
                f"seq() takes statements, calls, lists and generators of them, "
                f"not {type(item).__name__} {item!r}"
            )


def seq(body: Iterable) -> S.Stmt:
    """The IR body for a generator (or list) of statements.

    ``body`` may yield IR statements, extern calls (wrapped in ``Evaluate``), ``None``
    (skipped), and nested lists or generators of those. It is consumed lazily, so a
    symbolic loop (:func:`~tilelang.tiling.segment_by_chunk` with a symbolic bound,
    :func:`loop`, :func:`let`) wraps exactly the statements yielded while it is open.

    Example::

        body = seq(
            C_tile.store(0.0, i, j)
            for m in segment_by_chunk(0, 32, M)     # symbolic M: a real For
            for C_tile in [C[m, :]]
            for i in loop(C_tile.shape[0])
            for j in loop(C_tile.shape[1])
        )

    Raises ``TIRTypeError`` when a symbolic loop was evaluated outside ``seq()`` (a
    list comprehension), or when a statement uses a loop variable outside its loop.
    """
    builder = _Builder()
    token = _ACTIVE.set(builder)
    try:
        builder.consume(body)
    finally:
        _ACTIVE.reset(token)
    if len(builder.frames) != 1:
        open_labels = ", ".join(f.label for f in builder.frames[1:])
        raise TIRTypeError(
            f"seq() ended with {open_labels} still open: a symbolic loop must be iterated "
            "to its end by the generator passed to seq() (no break, no next())"
        )
    result = S.seq_stmt(*builder.frames[0].stmts)
    if builder.scoped_vars:
        _ScopeCheck(builder.scoped_vars).visit(result)
    return result


def open_frame(label: str, wrap: Callable[[S.Stmt], S.Stmt], defines=()) -> _Frame:
    """Start collecting statements for a symbolic construct (used by the iterators)."""
    builder = _ACTIVE.get()
    if builder is None:
        raise TIRTypeError(
            f"{label} is symbolic and must be consumed lazily by seq(): pass a generator "
            "expression `seq(... for x in ...)`, not a list `[... for x in ...]` or a "
            "plain for loop, so that the statements it yields land inside the loop"
        )
    frame = _Frame(label, wrap, defines)
    for var in frame.defines:
        builder.scoped_vars[var] = label
    builder.frames.append(frame)
    return frame


def close_frame(frame: _Frame) -> None:
    """Wrap the statements collected in ``frame`` and hand them to the enclosing one."""
    builder = _ACTIVE.get()
    if builder is None or builder.frames[-1] is not frame:
        raise TIRTypeError(
            f"{frame.label} was closed outside the seq() that opened it, or out of order"
        )
    builder.frames.pop()
    if frame.stmts:
        builder.add(frame.wrap(S.seq_stmt(*frame.stmts)))


def scoped(label: str, wrap: Callable[[S.Stmt], S.Stmt], value, defines=()) -> Iterator:
    """A one-element iterator yielding ``value`` while a frame is open."""
    frame = open_frame(label, wrap, defines)
    yield value
    # Reached only when the consumer asks for the next element, i.e. after the body
    # for ``value`` has been yielded to seq(). An abandoned iterator never gets here,
    # and seq() reports the frame as still open.
    close_frame(frame)


def loop(extent, name: str = "i", kind: str = "serial", start=0) -> Iterator:
    """A real ``For`` loop over ``[start, start + extent)``, as an iterator of one Var.

    Use it inside a comprehension passed to :func:`seq`; the statements yielded while
    the loop variable is in use form the loop body::

        seq(C.store(0.0, i) for i in loop(n))   # for i in range(n): C[i] = 0
    """
    extent = arith.value(extent)
    start = arith.value(start)
    dtype = arith.int_dtype(extent, start)
    var = E.Var(name, dtype)

    def wrap(body):
        begin, count = arith.typed(start, dtype), arith.typed(extent, dtype)
        return S.For(var, begin, count, S.ForKind(kind), body)

    return scoped(f"loop {name!r}", wrap, var, (var,))


def let(value, name: str = "v") -> Iterator:
    """A ``LetStmt`` binding ``name = value``, as an iterator of one Var.

    A concrete integer needs no binding and is yielded as it is::

        seq(A.store(x, x) for x in let(n * 2, "x"))   # x = n * 2; A[x] = x
    """
    known = arith.as_int(value)
    if known is not None:
        return iter((known,))
    value = convert(value)
    var = E.Var(name, value.dtype)
    return scoped(f"let {name!r}", lambda body: S.LetStmt(var, value, body), var, (var,))


class _ScopeCheck(StmtExprVisitor):
    """Reports a tiling variable used outside the loop or let that defines it (what a
    list comprehension over a symbolic loop produces)."""

    def __init__(self, scoped_vars: dict):
        self.scoped_vars = scoped_vars
        self.in_scope: dict[E.Var, int] = {}

    def _enter(self, var, visit):
        self.in_scope[var] = self.in_scope.get(var, 0) + 1
        visit()
        self.in_scope[var] -= 1

    def visit_for(self, op):
        self.visit(op.min)
        self.visit(op.extent)
        if op.step is not None:
            self.visit(op.step)
        self._enter(op.loop_var, lambda: self.visit(op.body))

    def visit_let_stmt(self, op):
        self.visit(op.value)
        self._enter(op.var, lambda: self.visit(op.body))

    def visit_var(self, var):
        label = self.scoped_vars.get(var)
        if label is not None and not self.in_scope.get(var):
            raise TIRTypeError(
                f"{var.name} of {label} is used outside its loop: the statements were "
                "built before seq() could place them (a list comprehension?); yield them "
                "from a generator expression instead"
            )

    visit_size_var = visit_var
