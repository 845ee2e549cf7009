"""The base of every IR node, and the field roles that traversals are derived from.

Each attrs field of a node declares its *role* in its metadata:

``child``
    a sub-tree (expression, statement, region, tuple of them). Visitors walk it and
    mutators rebuild it; structural equality recurses into it.
``define``
    a variable or buffer introduced here (``For.loop_var``, ``Block.alloc_buffers``).
    Not walked by default traversals (a use is not a definition); structural equality
    maps it to its counterpart, which is what makes comparison alpha-equivalence.
``ref``
    a reference to a buffer defined elsewhere (``BufferLoad.buffer``). Not walked;
    compared through the definition map.
``plain``
    plain data (names of blocks, dtypes, kinds, annotations). Compared with ``==``.
``ignore``
    not part of the meaning (source spans, variable names).

Visitors, mutators, structural equality and hashing all read these roles, so adding a
node means declaring its fields once; no traversal is written out node by node.
"""

from __future__ import annotations

import re
import sys
from contextlib import contextmanager
from typing import Any

import attrs

ROLE = "tilelang.role"
FIRST = "tilelang.first"


def child(first=False, **kwargs):
    """A field holding a sub-tree; ``first`` when it defines names that fields
    before it use (a block's ``match_buffers``), so equality maps it early."""
    return attrs.field(metadata={ROLE: "child", FIRST: first}, **kwargs)


def define(**kwargs):
    """A field that introduces a variable or buffer."""
    return attrs.field(metadata={ROLE: "define"}, **kwargs)


def ref(**kwargs):
    """A field that refers to a buffer defined elsewhere."""
    return attrs.field(metadata={ROLE: "ref"}, **kwargs)


def plain(**kwargs):
    """A field holding plain data compared with ``==``."""
    return attrs.field(metadata={ROLE: "value"}, **kwargs)


def ignored(**kwargs):
    """A field that carries no meaning for equality (spans, names)."""
    return attrs.field(metadata={ROLE: "ignore"}, **kwargs)


def span_field():
    return attrs.field(default=None, kw_only=True, metadata={ROLE: "ignore"})


@attrs.frozen(slots=True)
class Span:
    """Where a node came from in source text (1-based line and column)."""

    source: str | None
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None

    def __str__(self) -> str:
        return f"{self.source or '<string>'}:{self.line}:{self.column}"


_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake_name(class_name: str) -> str:
    """``BufferLoad`` -> ``buffer_load``, ``IfThenElse`` -> ``if_then_else``, ``EQ`` -> ``eq``."""
    return _CAMEL_RE.sub("_", class_name).lower()


class Node:
    """Base class of IR nodes.

    Nodes are immutable and compare by identity (``a is b``); structure is compared
    with :func:`tilelang.ir.structural_equal`. ``str(node)`` is its TVMScript text.
    """

    __slots__ = ()
    #: base classes whose name is no ``visit_`` fallback for their subclasses
    is_root = True

    #: ``visit_<name>`` is the functor method that handles this class.
    visit_name: str = "node"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "visit_name" not in cls.__dict__:
            cls.visit_name = snake_name(cls.__name__)

    def same_as(self, other: Any) -> bool:
        """Identity, as TVM spells it."""
        return self is other

    def script(self, show_meta: bool = False) -> str:
        """The canonical TVMScript text of this node (a plain ``str``). ``show_meta`` is
        TVM's option to print large constants in a metadata section; tilelang prints
        every value inline, so the text is the same either way."""
        from tilelang.ir.printer import script

        return script(self, show_meta=show_meta)

    def show(self, style: str | None = None, black_format: bool = False) -> None:
        """Print the TVMScript text, highlighted in a terminal or notebook when Pygments
        is installed (see :mod:`tilelang.ir.highlight`)."""
        from tilelang.ir.highlight import cprint

        cprint(self, style=style, black_format=black_format)

    def __str__(self) -> str:
        return self.script()

    def __repr__(self) -> str:
        try:
            text = self.script()
        except Exception:  # repr must never fail, even on a half-built tree
            return f"<{type(self).__name__} at {id(self):#x}>"
        return text if "\n" not in text else f"<{type(self).__name__}:\n{text}>"


def node_fields(cls: type) -> tuple[tuple[str, str], ...]:
    """``(field name, role)`` pairs of a node class, definitions first.

    Definitions (and children marked ``first``) come first so that equality maps a
    block's buffers before its ``reads`` and body mention them.
    """
    cached = _FIELDS_CACHE.get(cls)
    if cached is None:
        fields = attrs.fields(cls)

        def rank(field):
            role = field.metadata.get(ROLE, "value")
            return 0 if role == "define" else 1 if field.metadata.get(FIRST) else 2

        cached = tuple((f.name, f.metadata.get(ROLE, "value")) for f in sorted(fields, key=rank))
        _FIELDS_CACHE[cls] = cached
    return cached


def child_fields(cls: type) -> tuple[str, ...]:
    """Names of the fields that default traversals walk."""
    cached = _CHILDREN_CACHE.get(cls)
    if cached is None:
        cached = tuple(name for name, role in node_fields(cls) if role == "child")
        _CHILDREN_CACHE[cls] = cached
    return cached


_FIELDS_CACHE: dict[type, tuple[tuple[str, str], ...]] = {}
_CHILDREN_CACHE: dict[type, tuple[str, ...]] = {}

# Deep trees (5,000-term chains, long unrolled bodies) recurse further than Python's
# default limit. Since 3.11 Python-to-Python calls do not grow the C stack, so raising
# the limit while a traversal runs is safe; it is restored when the outermost one ends.
DEEP_RECURSION_LIMIT = 200_000
_depth = [0]
#: ``[depth]`` of the deep traversals under way, for hot loops that cannot afford a
#: call to :func:`in_deep_traversal` (the functors' dispatch)
TRAVERSAL_DEPTH = _depth


@contextmanager
def deep_recursion():
    """Allow deep recursion for the duration of an outermost IR traversal."""
    if _depth[0]:
        _depth[0] += 1
        try:
            yield
        finally:
            _depth[0] -= 1
        return
    old = sys.getrecursionlimit()
    _depth[0] = 1
    sys.setrecursionlimit(max(old, DEEP_RECURSION_LIMIT))
    try:
        yield
    finally:
        _depth[0] = 0
        sys.setrecursionlimit(old)


def in_deep_traversal() -> bool:
    """True inside an outermost :func:`deep_recursion` (a cheap test for hot paths)."""
    return _depth[0] > 0
