"""The random-program strategies themselves: well-formed, and safe when runnable."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings

from tilelang.arith import eval_interval
from tilelang.ir import For, ForKind, IterVar, post_order_visit
from tilelang.ir import stmt as S
from tilelang.ir.printer import script
from tilelang.ir.var_usage import undefined_vars
from tilelang.testing.strategies import prim_funcs, program_cases

FAST = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))


def _nodes(func, cls):
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, cls) else None)
    return found


@FAST
@given(prim_funcs())
def test_generated_functions_are_closed_and_print(func):
    assert undefined_vars(func) == []
    text = script(func)
    assert text.startswith("@T.prim_func\ndef main(")
    for block in _nodes(func, S.Block):
        # regions are stored, as the parser stores them
        assert block.name_hint == "root" or block.reads or block.writes


@FAST
@given(program_cases())
def test_runnable_cases_are_safe_by_construction(case):
    func = case.func
    loops = _nodes(func, For)
    assert all(loop.kind is not ForKind.THREAD_BINDING for loop in loops)
    reduce_loops = []
    for realize in _nodes(func, S.BlockRealize):
        for iv, value in zip(realize.block.iter_vars, realize.iter_values):
            if iv.iter_type == IterVar.CommReduce:
                reduce_loops.append(value)
        # the init never reads the reduction iterator
        if realize.block.init is not None:
            reduce_vars = [iv.var for iv in realize.block.iter_vars if iv.iter_type == 2]
            text_vars = undefined_vars(realize.block.init)
            assert not any(v is r for v in text_vars for r in reduce_vars)
    # a runnable reduction block sits under serial loops only
    for loop in loops:
        if _nodes_under(loop, S.Block, lambda b: b.init is not None):
            assert loop.kind in (ForKind.SERIAL, ForKind.UNROLLED)
    # the arguments fit the parameters, with every symbolic size bound
    args = case.make_arguments(seed=1)
    assert len(args) == len(func.params)
    for param, array in zip(func.params, args):
        buffer = func.buffer_map[param]
        assert array.shape == case.shape_of(buffer)
        assert array.dtype == np.dtype(buffer.dtype.numpy_name())
        if buffer.name in case.outputs:
            assert not array.any()
    assert set(case.inputs).isdisjoint(case.outputs)


def _nodes_under(stmt, cls, predicate):
    found = []
    post_order_visit(
        stmt, lambda n: found.append(n) if isinstance(n, cls) and predicate(n) else None
    )
    return found


@FAST
@given(program_cases())
def test_runnable_store_regions_stay_in_bounds(case):
    """Every stored block region, with sizes made concrete, lies inside its buffer."""
    for block in _nodes(case.func, S.Block):
        ranges = {iv.var: iv.dom for iv in block.iter_vars}
        for region in (*block.writes, *block.reads):
            shape = case.shape_of(region.buffer)
            for rng, dim in zip(region.region, shape):
                lo, _ = eval_interval(rng.min, ranges)
                lo_value = getattr(lo, "value", None)
                assert lo_value is None or 0 <= lo_value < max(dim, 1)
