"""The inverse of a bijective iterator map (TVM's ``InverseAffineIterMap``).

Given index expressions recognised by :func:`tilelang.arith.iter_map.detect_iter_map`
as a bijective map of iterators, and a value for each index, each iterator is written
as an expression of those values: the digits of fused iterators are taken apart with
``//`` and ``%`` in the order TVM's back-propagation takes them, so that the result
reads as TVM writes it (``(y + x * 128) // 8 % 8``).
"""

from __future__ import annotations

from tilelang.arith.analyzer import const_value
from tilelang.arith.iter_map import IterSum, _detect, _Fail
from tilelang.ir import expr as E

__all__ = ["inverse_map"]


def inverse_map(indices, iters: dict, outputs) -> dict | None:
    """For a bijective map ``indices`` over ``iters``, each iterator as an expression
    of the index values ``outputs`` (one expression per index): the inverse, as
    reverse_compute_inline needs it. None when the map is not bijective. Iterators of
    extent 1 that the map does not use are 0.

    The expressions are built as TVM's ``InverseAffineIterMap`` builds them (values
    propagated back through the map in reverse topological order, only trivial
    operations folded): the inverse of ``[f // 128, f % 128]`` for the fused
    ``f = vi * 2048 + vj * 64 + vk * 8 + vl`` at ``(x, y)`` gives
    ``vk = (y + x * 128) // 8 % 8``. Callers simplify when they want to."""
    try:
        # as written first: the simplifier may split ``(vi * 2048 + f) // 128`` into
        # ``vi * 16 + f // 128``, a different (but equal) map than TVM inverts
        detector, sums = _detect(indices, iters, None, True, presimplify=False)
    except _Fail:
        try:
            detector, sums = _detect(indices, iters, None, True)
        except _Fail:
            return None
    roots = []
    for total, out in zip(sums, outputs):
        if total.args:
            split, _ = detector.fuse(total)  # the same fused mark the check used
            roots.append((IterSum((split,), total.base), out))
    backprop: dict[int, E.PrimExpr] = {id(root): out for root, out in roots}
    inverse: dict = {}

    def accumulate(node, value):
        old = backprop.get(id(node))
        backprop[id(node)] = value if old is None else _plus(old, value)

    for node in _reverse_topology([root for root, _ in roots]):
        if isinstance(node, IterSum):
            value = backprop.get(id(node))
            if value is None:
                continue
            value = _minus(value, node.base)
            if len(node.args) == 1:
                arg = node.args[0]
                accumulate(arg, _times(value, arg.scale))
                continue
            # a fused iterator: each part is its digit of the value
            for k in range(len(node.args) - 1, -1, -1):
                arg = node.args[k]
                part = _floordiv(value, arg.scale)
                if k > 0:
                    part = _floormod(part, arg.extent)
                accumulate(arg, part)
        else:
            value = backprop.get(id(node))
            if value is None:
                continue
            value = _times(value, node.lower_factor)
            source = node.mark.source
            if isinstance(source, IterSum):
                accumulate(source, value)
            else:
                old = inverse.get(source)
                inverse[source] = value if old is None else _plus(old, value)
    return {
        var: inverse[var] if var in inverse else E.IntImm(var.dtype, 0) for var in detector.iters
    }


def _reverse_topology(roots) -> list:
    """Sums and splits of the map, each after every node that feeds it a value."""
    order, seen = [], set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, IterSum):
            for arg in node.args:
                visit(arg)
        elif isinstance(node.mark.source, IterSum):
            visit(node.mark.source)
        order.append(node)

    for root in roots:
        visit(root)
    return order[::-1]


def _plus(a, b):
    if const_value(a) == 0 and isinstance(a, E.IntImm):
        return b
    if const_value(b) == 0 and isinstance(b, E.IntImm):
        return a
    return a + b


def _minus(a, b):
    return a if isinstance(b, E.IntImm) and b.value == 0 else a - b


def _times(a, c):
    if isinstance(c, int) and c == 1:
        return a
    return a * E.IntImm(a.dtype, c) if isinstance(c, int) else a * c


def _floordiv(a, c):
    if isinstance(c, int) and c == 1:
        return a
    return E.FloorDiv(a, E.IntImm(a.dtype, c) if isinstance(c, int) else c)


def _floormod(a, c):
    return E.FloorMod(a, E.IntImm(a.dtype, c) if isinstance(c, int) else c)
