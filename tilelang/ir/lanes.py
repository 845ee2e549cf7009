"""Lane counts of vector expressions, and the masks of predicated accesses.

A ``Ramp``/``Broadcast`` has an int number of lanes, or ``k * T.vscale()`` for a
scalable vector (TVM's ``float32xvscalex4``: Arm SVE's length, known at run time),
kept as an expression. :mod:`tilelang.ir.expr` builds its vector nodes with these
helpers; they look the node classes up when called (expr imports this module).
"""

from __future__ import annotations

from tilelang.ir.dtype import INT32, DataType, raw_lanes


def _expr():
    from tilelang.ir import expr

    return expr


def check_predicate(node, value_dtype: DataType) -> None:
    """A load's or store's mask is a bool vector with one lane per accessed element."""
    E = _expr()
    mask = node.predicate.dtype
    if not (
        mask.is_bool() and value_dtype.is_vector() and raw_lanes(mask) == raw_lanes(value_dtype)
    ):
        raise E.TIRTypeError(
            f"the predicate of {type(node).__name__} must be a bool vector of the access's "
            f"lanes ({value_dtype}), not {mask}"
        )


def vscale_factor(lanes) -> int | None:
    """``k`` when the lane count ``lanes`` is the expression ``k * T.vscale()`` (or
    ``T.vscale() * k``, ``T.vscale()``): a scalable vector's; None otherwise."""
    E = _expr()
    if isinstance(lanes, E.Call):
        return 1 if lanes.op == "vscale" and not lanes.args else None
    if isinstance(lanes, E.Mul):
        for k, v in ((lanes.a, lanes.b), (lanes.b, lanes.a)):
            if isinstance(k, E.IntImm) and k.value > 0 and vscale_factor(v) == 1:
                return k.value
    return None


def lanes_expr(dtype: DataType):
    """The lane count of ``dtype`` as a Ramp/Broadcast takes it: an int, or
    ``k * T.vscale()`` for a scalable vector."""
    count = raw_lanes(dtype)
    if count > 0:
        return count
    E = _expr()
    return E.Mul(E.IntImm(INT32, -count), E.Call(INT32, "vscale", ()))


def convert_lanes(value):
    """A lane count: an int, or a scalable ``k * T.vscale()`` kept as an expression."""
    if type(value) is int:  # the usual case, without the module lookup
        return value
    E = _expr()
    if isinstance(value, E.IntImm):
        return value.value
    if isinstance(value, E.PrimExpr):
        if vscale_factor(value) is None:
            raise E.TIRTypeError(
                f"the lanes of a vector are a constant or a multiple of T.vscale(), not {value!r}"
            )
        return value
    return int(value)


def vector_dtype(element: DataType, lanes) -> DataType:
    if isinstance(lanes, int):
        return element.with_lanes(lanes)
    return element.with_scalable_lanes(vscale_factor(lanes))


def check_lanes(node) -> None:
    if type(node.lanes) is not int:
        return  # scalable: vscale_factor checked it (convert_lanes gives an int or that)
    if node.lanes < 1:
        raise _expr().TIRTypeError(
            f"{type(node).__name__} needs a positive number of lanes, got {node.lanes}"
        )
