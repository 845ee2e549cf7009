"""Structural equality and hashing.

Two trees are structurally equal when they have the same shape, the same constants and
types, and their variables and buffers correspond one to one: a variable *defined* in
one tree (a loop variable, a let, a parameter, an allocated buffer) may stand for a
differently named one in the other. Free variables must be the same objects unless
``map_free_vars=True``. Names of variables and buffers and source spans do not count;
block names do.

``structural_hash`` agrees: structurally equal trees hash alike.
"""

from __future__ import annotations

from tilelang.ir.buffer import Buffer
from tilelang.ir.expr import Var
from tilelang.ir.node import Node, deep_recursion, node_fields


def _is_symbol(x) -> bool:
    """Variables and buffers, and nodes of other IRs that declare themselves symbols
    (``structural_symbol = True``, e.g. graph-level variables)."""
    return isinstance(x, (Var, Buffer)) or getattr(x, "structural_symbol", False)


class StructuralMismatch(AssertionError):
    """Raised by :func:`assert_structural_equal`; says where the trees first differ."""

    def __init__(self, path: str, lhs, rhs, reason: str):
        self.path, self.lhs, self.rhs, self.reason = path, lhs, rhs, reason
        super().__init__(
            f"structural mismatch at {path}: {reason}\n  lhs: {_brief(lhs)}\n  rhs: {_brief(rhs)}"
        )


def _brief(x) -> str:
    text = repr(x)
    return text if len(text) < 300 else text[:297] + "..."


class _Compare:
    def __init__(self, map_free_vars: bool):
        self.map_free_vars = map_free_vars
        self.forward: dict = {}
        self.backward: dict = {}
        self.defining = 0

    def fail(self, path, a, b, reason):
        raise StructuralMismatch("".join(path), a, b, reason)

    def bind(self, a, b, path) -> None:
        """Record that ``a`` (lhs) stands for ``b`` (rhs)."""
        old_b, old_a = self.forward.get(a), self.backward.get(b)
        if old_b is b and old_a is a:
            return
        if old_b is not None or old_a is not None:
            self.fail(path, a, b, "a variable or buffer corresponds to two different ones")
        self.forward[a], self.backward[b] = b, a
        if not isinstance(a, Var):  # buffers and other symbols: compare their fields
            self.defining += 1
            try:
                self.fields(a, b, path)
            finally:
                self.defining -= 1
        elif a.dtype != b.dtype:
            self.fail(path, a, b, f"dtype {a.dtype} != {b.dtype}")
        elif a.dtype.is_handle() and a.ty != b.ty:
            self.fail(path, a, b, f"type {a.ty} != {b.ty}")

    def symbol(self, a, b, path, defines: bool) -> None:
        if type(a) is not type(b):
            self.fail(path, a, b, f"{type(a).__name__} != {type(b).__name__}")
        if a in self.forward or b in self.backward:
            if self.forward.get(a) is not b:
                self.fail(path, a, b, "different variables or buffers")
        elif defines or self.defining or self.map_free_vars or self.is_view(a):
            self.bind(a, b, path)
        elif a is not b:
            self.fail(path, a, b, "different free variables or buffers")

    def is_view(self, a) -> bool:
        """A buffer used without a declaration over storage already mapped (the flat
        view of a parameter in lowered code) compares by its fields, as in TVM."""
        return isinstance(a, Buffer) and a.data in self.forward

    def compare(self, a, b, path, role="child") -> None:
        if _is_symbol(a) or _is_symbol(b):
            return self.symbol(a, b, path, role == "define")
        if isinstance(a, Node) or isinstance(b, Node):
            if type(a) is not type(b):
                self.fail(path, a, b, f"{type(a).__name__} != {type(b).__name__}")
            return self.fields(a, b, path)
        if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
            if len(a) != len(b):
                self.fail(path, a, b, f"length {len(a)} != {len(b)}")
            for i, (x, y) in enumerate(zip(a, b)):
                self.compare(x, y, (*path, f"[{i}]"), role)
            return None
        if isinstance(a, dict) and isinstance(b, dict):
            if len(a) != len(b):
                self.fail(path, a, b, f"{len(a)} entries != {len(b)}")
            for i, ((ka, va), (kb, vb)) in enumerate(zip(a.items(), b.items())):
                self.compare(ka, kb, (*path, f".keys[{i}]"), role)
                self.compare(va, vb, (*path, f"[{ka!r}]"), role)
            return None
        if type(a) is not type(b) or a != b:
            self.fail(path, a, b, f"{a!r} != {b!r}")
        return None

    def fields(self, a: Node, b: Node, path) -> None:
        for name, role in node_fields(type(a)):
            if role != "ignore":
                self.compare(getattr(a, name), getattr(b, name), (*path, "." + name), role)


def structural_equal(lhs, rhs, map_free_vars: bool = False) -> bool:
    """True when ``lhs`` and ``rhs`` are equal up to renaming of defined variables."""
    try:
        assert_structural_equal(lhs, rhs, map_free_vars)
    except StructuralMismatch:
        return False
    return True


def assert_structural_equal(lhs, rhs, map_free_vars: bool = False) -> None:
    """Raises :class:`StructuralMismatch` naming the path and both sides of the first
    difference."""
    with deep_recursion():
        _Compare(map_free_vars).compare(lhs, rhs, ("root",))


class _Hash:
    def __init__(self, map_free_vars: bool):
        self.map_free_vars = map_free_vars
        self.numbering: dict = {}
        self.defining = 0

    def symbol(self, x, defines: bool) -> int:
        number = self.numbering.get(x)
        if number is not None:
            return hash(("sym", number))
        view = isinstance(x, Buffer) and x.data in self.numbering
        if not (defines or self.defining or self.map_free_vars or view):
            return hash(("free", id(x)))
        self.numbering[x] = len(self.numbering)
        if not isinstance(x, Var):
            self.defining += 1
            try:
                inner = self.fields(x)
            finally:
                self.defining -= 1
            return hash(("buffer", len(self.numbering), inner))
        return hash(("var", x.dtype, self.numbering[x]))

    def value(self, x, role="child") -> int:
        if _is_symbol(x):
            return self.symbol(x, role == "define")
        if isinstance(x, Node):
            return self.fields(x)
        if isinstance(x, (tuple, list)):
            return hash(("seq", *(self.value(e, role) for e in x)))
        if isinstance(x, dict):
            return hash(
                ("map", *((self.value(k, role), self.value(v, role)) for k, v in x.items()))
            )
        return hash((type(x).__name__, x))

    def fields(self, x: Node) -> int:
        parts = [type(x).__name__]
        for name, role in node_fields(type(x)):
            if role != "ignore":
                parts.append(self.value(getattr(x, name), role))
        return hash(tuple(parts))


def structural_hash(node, map_free_vars: bool = False) -> int:
    """A hash consistent with :func:`structural_equal`."""
    with deep_recursion():
        return _Hash(map_free_vars).value(node)
