"""Features of a candidate schedule for the cost model, read off its lowered IR.

MetaSchedule's cost model looks at each buffer store of the lowered program: the loops
around it (extents and kinds), how it vectorises, how much arithmetic it does, and how
its accesses walk memory. :func:`extract_features` does the same for one lowered
PrimFunc and returns a fixed-length vector (:data:`FEATURE_NAMES`): the features of
the store that does the most work, then whole-function totals.

Per store (all counts as ``log2(1 + x)``):

* loops: iterations of the nest, of its parallel / vectorised / unrolled loops, the
  innermost loop's extent and kind, nesting depth, vector lanes of the stored value;
* arithmetic: float and integer operations per iteration, and in total;
* memory: for the store and every load, the element stride along the innermost loop
  (counted as invariant / unit / strided / unknown), the unique bytes each touches in
  the whole nest, the reuse (iterations per unique element), and the working set of
  all accesses within the innermost 1, 2, 3 and 4 loops (what must stay in L1/L2);
* function: number of stores, bytes of local allocations, parallel extent.
"""

from __future__ import annotations

import math

import numpy as np

from tilelang.arith import linear_form
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.convert import const_int_value
from tilelang.ir.functor import StmtExprVisitor

LEVELS = (1, 2, 3, 4)
_STORE_FEATURES = [
    "iterations", "parallel", "vectorized", "unrolled", "inner_extent", "inner_serial",
    "inner_parallel", "inner_vectorized", "inner_unrolled", "depth", "lanes",
    "float_ops", "int_ops", "total_float_ops", "accesses", "stride_invariant",
    "stride_unit", "stride_other", "stride_unknown", "bytes_touched", "max_bytes",
    "reuse_min", "reuse_max", *(f"working_set_{k}" for k in LEVELS),
]  # fmt: skip
_FUNCTION_FEATURES = ["stores", "alloc_bytes", "total_parallel", "total_work"]
#: what each position of :func:`extract_features`' vector means
FEATURE_NAMES = _STORE_FEATURES + _FUNCTION_FEATURES


def _log(x: float) -> float:
    return math.log2(1.0 + max(0.0, float(x)))


class _Loop:
    __slots__ = ("var", "extent", "kind")

    def __init__(self, var, extent, kind):
        self.var, self.extent, self.kind = var, extent, kind


class _OpCounter(StmtExprVisitor):
    def __init__(self):
        self.float_ops = self.int_ops = 0
        self.loads: list[E.BufferLoad] = []

    def _count(self, op):
        if op.dtype.is_float():
            self.float_ops += op.dtype.lanes
        else:
            self.int_ops += op.dtype.lanes
        self.generic_visit(op)

    visit_add = visit_sub = visit_mul = visit_div = visit_floor_div = _count
    visit_mod = visit_floor_mod = visit_min = visit_max = _count

    def visit_call(self, op):
        if op.dtype.is_float():
            self.float_ops += op.dtype.lanes
        self.generic_visit(op)

    def visit_buffer_load(self, op):
        self.loads.append(op)
        self.generic_visit(op)


class _Extractor(StmtExprVisitor):
    def __init__(self):
        self.loops: list[_Loop] = []
        self.stores: list[np.ndarray] = []
        self.work: list[float] = []
        self.alloc_bytes = 0
        self.parallel = 1

    def visit_for(self, op: S.For):
        extent = const_int_value(op.extent)
        extent = 16 if extent is None else max(extent, 1)  # symbolic: a guess
        step = const_int_value(op.step) if op.step is not None else 1
        if step and step > 1:
            extent = max(1, math.ceil(extent / step))
        if op.kind == S.ForKind.PARALLEL:
            self.parallel *= extent
        self.loops.append(_Loop(op.loop_var, extent, op.kind))
        self.visit(op.body)
        self.loops.pop()

    def visit_allocate(self, op: S.Allocate):
        count = 1
        for extent in op.extents:
            value = const_int_value(extent)
            count *= value if value is not None else 16
        self.alloc_bytes += count * op.dtype.bits // 8 * op.dtype.lanes
        self.visit(op.body)

    def visit_buffer_store(self, op: S.BufferStore):
        counter = _OpCounter()
        counter.visit(op.value)
        for index in op.indices:
            counter.visit(index)
        self.stores.append(self.store_features(op, counter))

    def store_features(self, store, counter) -> np.ndarray:
        loops = self.loops
        iterations = math.prod(loop.extent for loop in loops)
        by_kind = {kind: math.prod(lp.extent for lp in loops if lp.kind == kind) for kind in
                   (S.ForKind.PARALLEL, S.ForKind.VECTORIZED, S.ForKind.UNROLLED)}  # fmt: skip
        inner = loops[-1] if loops else None
        kinds = [S.ForKind.SERIAL, S.ForKind.PARALLEL, S.ForKind.VECTORIZED, S.ForKind.UNROLLED]
        inner_kind = [float(inner is not None and inner.kind == k) for k in kinds]
        lanes = store.value.dtype.lanes
        accesses = [(store.buffer, store.indices)] + [
            (ld.buffer, ld.indices) for ld in counter.loads
        ]
        strides = [0, 0, 0, 0]
        touched, reuse = [], []
        working = [0.0] * len(LEVELS)
        for buffer, indices in accesses:
            index = indices[0] if indices else E.IntImm("int32", 0)
            if isinstance(index, E.Ramp):
                index = index.base
            used, coeffs = self.dependence(index)
            inner_used = inner is not None and id(inner.var) in used
            coeff = coeffs.get(id(inner.var)) if inner_used else 0
            strides[0 if coeff == 0 else 1 if coeff in (1, -1) else 3 if coeff is None else 2] += 1
            elem = buffer.dtype.bits // 8 * max(buffer.dtype.lanes, 1)
            unique = math.prod(lp.extent for lp in loops if id(lp.var) in used)
            touched.append(unique * elem)
            reuse.append(iterations / max(unique, 1))
            for i, depth in enumerate(LEVELS):
                inner_loops = loops[-depth:] if depth <= len(loops) else loops
                working[i] += elem * math.prod(
                    lp.extent for lp in inner_loops if id(lp.var) in used
                )
        work = iterations * max(counter.float_ops, 1)
        self.work.append(work)
        values = [
            _log(iterations), _log(by_kind[S.ForKind.PARALLEL]),
            _log(by_kind[S.ForKind.VECTORIZED]),
            _log(by_kind[S.ForKind.UNROLLED]), _log(inner.extent if inner else 1), *inner_kind,
            float(len(loops)), float(lanes), _log(counter.float_ops), _log(counter.int_ops),
            _log(iterations * counter.float_ops), float(len(accesses)), *map(float, strides),
            _log(sum(touched)), _log(max(touched)), _log(min(reuse)), _log(max(reuse)),
            *map(_log, working),
        ]  # fmt: skip
        return np.array(values, dtype=np.float64)

    def dependence(self, index) -> tuple[set, dict]:
        """Loop variables ``index`` uses, and each one's coefficient (None: non-linear)."""
        from tilelang.ir.analysis import collect_vars

        loop_ids = {id(lp.var) for lp in self.loops}
        used = {id(v) for v in collect_vars(index) if id(v) in loop_ids}
        coeffs: dict = {}
        if index.dtype.is_integer() and index.dtype.lanes == 1:
            form = linear_form(index)
            for atom, coeff in form.live_terms():
                if isinstance(atom, E.Var) and id(atom) in used:
                    coeffs[id(atom)] = coeff
                else:  # a loop variable inside a non-linear term has no single stride
                    for var in collect_vars(atom):
                        if id(var) in used:
                            coeffs[id(var)] = None
        return used, coeffs


def extract_features(lowered_func) -> np.ndarray:
    """The feature vector (see :data:`FEATURE_NAMES`) of one lowered PrimFunc."""
    extractor = _Extractor()
    extractor.visit(lowered_func.body)
    if extractor.stores:
        dominant = extractor.stores[int(np.argmax(extractor.work))]
    else:
        dominant = np.zeros(len(_STORE_FEATURES))
    totals = [
        float(len(extractor.stores)), _log(extractor.alloc_bytes),
        _log(extractor.parallel), _log(sum(extractor.work)),
    ]  # fmt: skip
    return np.concatenate([dominant, np.array(totals)])


def candidate_features(text: str) -> np.ndarray | None:
    """Features of a candidate given as TVMScript (what the tuner's workers receive),
    or None when it does not lower."""
    import tilelang
    from tilelang.errors import TileLangError
    from tilelang.ir.function import PrimFunc

    try:
        lowered = tilelang.lower(tilelang.parse(text))
    except TileLangError:
        return None
    funcs = [f for f in lowered.functions.values() if isinstance(f, PrimFunc)]
    return extract_features(funcs[0]) if funcs else None
