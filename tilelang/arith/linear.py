"""Canonical linear forms of integer expressions: ``sum(coeff * atom) + constant``.

An *atom* is any sub-expression that is not a sum, a difference or a product with a
constant (a variable, a ``floordiv``, a load...). Atoms are matched by identity for
variables and structurally otherwise, so ``a * x + b * x`` collects into
``(a + b) * x``. Terms keep the order in which they first appear, so rebuilding gives
the form a person would write (``i_0 * 4 + i_1``).
"""

from __future__ import annotations

from tilelang.arith.constfold import wrap_int
from tilelang.ir import expr as E
from tilelang.ir.buffer import Buffer
from tilelang.ir.node import Node, node_fields
from tilelang.ir.structural import structural_hash


class LinearForm:
    """``sum(coeff * atom) + const`` over one integer dtype."""

    __slots__ = ("dtype", "terms", "const", "_buckets")

    def __init__(self, dtype):
        self.dtype = dtype
        self.terms: dict[object, list] = {}  # key -> [atom, coeff], insertion-ordered
        self.const = 0
        self._buckets: dict[int, list] = {}

    def _key(self, atom: E.PrimExpr):
        if isinstance(atom, E.Var):
            return ("v", id(atom))
        h = structural_hash(atom)
        key = self._find(h, atom)
        if key is None and isinstance(atom, E.Mul):
            # a product of two non-constant terms is the same atom either way round
            # (``(M + 63) // 64 * ((N + 15) // 16)`` cancels its mirror image)
            swapped = E.Mul(atom.b, atom.a)
            key = self._find(structural_hash(swapped), swapped)
        if key is not None:
            return key
        bucket = self._buckets.setdefault(h, [])
        bucket.append(atom)
        return ("s", h, len(bucket) - 1)

    def _find(self, h, atom):
        for index, known in enumerate(self._buckets.get(h, ())):
            if same_expr(known, atom):
                return ("s", h, index)
        return None

    def add_atom(self, atom: E.PrimExpr, coeff: int) -> None:
        if coeff == 0:
            return
        key = self._key(atom)
        entry = self.terms.get(key)
        if entry is None:
            self.terms[key] = [atom, coeff]
        else:
            entry[1] += coeff

    def add_form(self, other: LinearForm, scale: int = 1) -> None:
        for atom, coeff in other.terms.values():
            self.add_atom(atom, coeff * scale)
        self.const += other.const * scale

    def live_terms(self) -> list[tuple[E.PrimExpr, int]]:
        return [(atom, coeff) for atom, coeff in self.terms.values() if coeff != 0]

    def is_const(self) -> bool:
        return not self.live_terms()

    def scaled(self, factor: int) -> LinearForm:
        out = LinearForm(self.dtype)
        out.add_form(self, factor)
        return out

    def to_expr(self) -> E.PrimExpr:
        """The form as an expression: positive terms first, then the subtracted ones,
        then the constant (``x + 1``, ``x - y - 2``)."""
        dtype = self.dtype
        # Integers wrap at their width, as the machine's do.
        terms = [(a, wrap_int(c, dtype)) for a, c in self.live_terms()]
        terms = [(a, c) for a, c in terms if c != 0]
        # the type's least value has no negation in the type: it is added, not subtracted
        least = dtype.value_range()[0] if dtype.is_int() else None
        positive = [(a, c) for a, c in terms if c > 0 or c == least]
        negative = [(a, c) for a, c in terms if c < 0 and c != least]
        result = None
        for atom, coeff in positive:
            term = atom if coeff == 1 else E.Mul(atom, E.IntImm(dtype, coeff))
            result = term if result is None else E.Add(result, term)
        constant = wrap_int(self.const, dtype)
        if result is None and negative and constant > 0:
            result = E.IntImm(dtype, constant)
            constant = 0
        for atom, coeff in negative:
            if result is None:
                result = E.Mul(atom, E.IntImm(dtype, coeff))
                continue
            term = atom if coeff == -1 else E.Mul(atom, E.IntImm(dtype, -coeff))
            result = E.Sub(result, term)
        if result is None:
            return E.IntImm(dtype, constant)
        if constant > 0 or constant == least:
            result = E.Add(result, E.IntImm(dtype, constant))
        elif constant < 0:
            result = E.Sub(result, E.IntImm(dtype, -constant))
        return result


def is_linear_node(expr: E.PrimExpr) -> bool:
    """True for the nodes a linear form absorbs (integer scalar ``+``, ``-``, ``*``)."""
    return (
        isinstance(expr, (E.Add, E.Sub, E.Mul))
        and expr.dtype.is_integer()
        and expr.dtype.lanes == 1
    )


def linear_form(expr: E.PrimExpr, atom_fn=None) -> LinearForm:
    """The linear form of an integer scalar expression.

    ``atom_fn`` (optional) maps each atom before it is recorded: the simplifier passes
    itself, so atoms are simplified and constants found inside them fold in. Walks
    with an explicit stack, so 5,000-term sums do not recurse.
    """
    form = LinearForm(expr.dtype)
    stack = [(expr, 1)]
    while stack:
        node, scale = stack.pop()
        if scale == 0:
            continue
        if isinstance(node, E.IntImm):
            form.const += scale * node.value
        elif is_linear_node(node) and isinstance(node, E.Add):
            stack.append((node.b, scale))
            stack.append((node.a, scale))
        elif is_linear_node(node) and isinstance(node, E.Sub):
            stack.append((node.b, -scale))
            stack.append((node.a, scale))
        elif is_linear_node(node):
            _push_product(node, scale, stack, form, atom_fn)
        else:
            atom = node if atom_fn is None else atom_fn(node)
            if isinstance(atom, E.IntImm):
                form.const += scale * atom.value
            elif atom is not node and is_linear_node(atom):
                form.add_form(linear_form(atom), scale)
            else:
                form.add_atom(atom, scale)
    return form


def _push_product(node: E.Mul, scale: int, stack: list, form: LinearForm, atom_fn) -> None:
    a, b = node.a, node.b
    if isinstance(b, E.IntImm):
        stack.append((a, scale * b.value))
        return
    if isinstance(a, E.IntImm):
        stack.append((b, scale * a.value))
        return
    # Neither side is a literal constant: either may still reduce to one.
    fa, fb = linear_form(a, atom_fn), linear_form(b, atom_fn)
    if fb.is_const():
        form.add_form(fa, scale * fb.const)
    elif fa.is_const():
        form.add_form(fb, scale * fa.const)
    else:
        form.add_atom(E.Mul(fa.to_expr(), fb.to_expr()), scale)


def same_expr(a, b) -> bool:
    """Structural equality of two expressions with variables and buffers compared by
    identity: a cheap test for "did simplification change anything" and for matching
    atoms (no failure report is built, unlike ``assert_structural_equal``)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        if type(x) is not type(y):
            return False
        if isinstance(x, (tuple, list)):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
            continue
        if not isinstance(x, Node) or isinstance(x, (E.Var, Buffer)):
            if isinstance(x, Node) or x != y:
                return False
            continue
        for name, role in node_fields(type(x)):
            if role == "ignore":
                continue
            stack.append((getattr(x, name), getattr(y, name)))
    return True


def scale_ordered(expr: E.PrimExpr) -> E.PrimExpr:
    """An integer sum written as TVM's canonical simplifier writes it: terms by
    decreasing coefficient (``v0 * 2 + v3``, not ``v3 + v0 * 2``), the constant last.
    Anything else is returned as it is."""
    if not (expr.dtype.is_integer() and isinstance(expr, (E.Add, E.Sub))):
        return expr
    form = linear_form(expr)
    ordered = LinearForm(form.dtype)
    for atom, coeff in sorted(form.live_terms(), key=lambda t: -t[1]):
        ordered.add_atom(atom, coeff)
    ordered.const = form.const
    return ordered.to_expr()
