"""A commutative reducer as an IR value: the combiner of a cross-thread reduction.

TVM writes it ``T.comm_reducer(lambda x, y: x + y, [T.float32(0)])`` as the node of a
``T.attr(..., "reduce_scope", ...)``. The reducer combines ``n`` values at once: its
combiner takes ``lhs`` (n variables) and ``rhs`` (n variables) and gives ``n``
``result`` expressions; ``identity_element`` holds the n starting values. The variables
are defined by the reducer (structural equality maps them), so two reducers written
with different parameter names are equal.
"""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir.node import Node, child, define, span_field


def _check(reducer: CommReducer, *_) -> None:
    n = len(reducer.identity_element)
    if not (len(reducer.lhs) == len(reducer.rhs) == len(reducer.result) == n) or n == 0:
        raise E.TIRTypeError(
            f"a reducer of {n} values needs {n} lhs and {n} rhs variables and {n} results, "
            f"got {len(reducer.lhs)}, {len(reducer.rhs)} and {len(reducer.result)}"
        )
    for i, (x, y, res, ident) in enumerate(
        zip(reducer.lhs, reducer.rhs, reducer.result, reducer.identity_element)
    ):
        if not (x.dtype == y.dtype == res.dtype == ident.dtype):
            raise E.TIRTypeError(
                f"value {i} of the reducer: the identity is {ident.dtype}, the combined "
                f"value {res.dtype} (both must be of the parameters' type {x.dtype})"
            )


@attrs.frozen(eq=False, repr=False)
class CommReducer(Node):
    """``result = combine(lhs, rhs)`` over tuples of ``n`` values, with identities."""

    lhs: tuple = define(converter=tuple)
    rhs: tuple = define(converter=tuple)
    result: tuple = child(converter=tuple)
    identity_element: tuple = child(converter=tuple)
    span: object = span_field()

    def __attrs_post_init__(self):
        _check(self)
