"""Tuning tasks of a whole model: the distinct tensor functions a graph module calls.

``extract_tasks(mod, params)`` walks the graph (relax) functions of ``mod``, counts
the ``call_tir`` / ``call_dps_packed`` calls of each prim_func, and groups the called
prim_funcs by workload: two functions that are structurally equal once each stands
alone as ``"main"`` (the same computation on the same shapes, whatever their names,
e.g. ``dense`` and ``dense_1`` of two layers of one width) are one task, whose weight
is the number of calls of all of them. A task's records in the database are keyed by
its workload hash (:func:`tilelang.tune.workload_hash`), so they are shared with
``tune_tir`` runs of the same function and with every function of the group.

Tasks are read off the module the VM builds (:func:`build_module`): a call whose
shapes the graph decides gets a prim_func specialised to them, and an elementwise call
is fused into its producer, as ``relax.build`` does before scheduling. Tuning the
unfused halves and then building them unfused (a tuned function takes no part in
fusion) ran an extra pass over memory per ReLU: the tuned model was slower than the
default build.

Only prim_funcs whose buffers all have constant shapes and that take no scalar
parameters can be measured; bind the weights (``params``) so that a model's sizes are
known. Other functions stay as they are (the default rules still schedule them at
build time).
"""

from __future__ import annotations

import attrs

from tilelang.ir import IntImm, IRModule, PrimFunc
from tilelang.tune.workload import workload_hash


@attrs.frozen
class TuningTask:
    """One distinct tensor function of a model.

    ``name`` is the first function of the group (in name order), ``mod`` that function
    alone as ``"main"``, ``func_names`` every function of the model with this workload,
    ``weight`` their calls in all, ``workload`` the database key."""

    name: str
    mod: IRModule
    func_names: tuple
    weight: int
    workload: str


def task_module(func: PrimFunc) -> IRModule:
    """``func`` alone in a module as ``"main"`` (how tasks and ``tune_tir`` see it)."""
    return IRModule({"main": func.with_attr("global_symbol", "main")})


def is_tunable(func: PrimFunc) -> bool:
    """Constant buffer shapes and no scalar parameters: the function can be measured."""
    return (
        all(all(isinstance(d, (int, IntImm)) for d in buf.shape) for buf in func.buffers)
        and not func.scalar_params()
    )


def bind_weights(mod: IRModule, params) -> IRModule:
    """``mod`` with ``params`` (name -> array) bound into its ``"main"`` as constants."""
    if not params:
        return mod
    from tilelang.relax.transform import bind_params

    return bind_params(mod, params)


def build_module(mod: IRModule) -> IRModule:
    """``mod`` as ``relax.build`` compiles it (:func:`tilelang.relax.vm.prepare_calls`);
    unchanged when it has no graph function. Idempotent."""
    from tilelang.relax.expr import Function
    from tilelang.relax.vm import prepare_calls

    if not any(isinstance(f, Function) for f in mod.functions.values()):
        return mod
    return prepare_calls(mod)


def call_counts(mod: IRModule) -> dict:
    """How many times each function is called by name from the graph functions."""
    from tilelang.ir.node import Node, child_fields
    from tilelang.relax.expr import Call, Function, callee_name

    counts: dict = {}

    def walk(node):
        if isinstance(node, Call) and node.op in ("relax.call_tir", "relax.call_dps_packed"):
            name = callee_name(node)
            counts[name] = counts.get(name, 0) + 1
        for field in child_fields(type(node)):
            value = getattr(node, field)
            for item in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(item, Node):
                    walk(item)

    for func in mod.functions.values():
        if isinstance(func, Function):
            walk(func)
    return counts


def extract_tasks(mod: IRModule, params: dict | None = None) -> list[TuningTask]:
    """The distinct tunable prim_funcs ``mod``'s graph functions call (``params``
    bound into ``"main"`` first), one task per workload, in name order of their first
    function. The functions are those the build runs (:func:`build_module`: calls
    specialised to their shapes, elementwise calls fused into their producers), so
    tuning a matmul followed by a ReLU tunes the fused function the default build
    would schedule, not the two halves."""
    mod = build_module(bind_weights(mod, params))
    counts = call_counts(mod)
    groups: dict[str, list] = {}
    for name in sorted(mod.functions):
        func = mod[name]
        if not isinstance(func, PrimFunc) or counts.get(name, 0) == 0 or not is_tunable(func):
            continue
        alone = task_module(func)
        groups.setdefault(workload_hash(alone), []).append((str(name), alone))
    tasks = []
    for key, members in groups.items():
        names = tuple(name for name, _ in members)
        weight = sum(counts[name] for name in names)
        tasks.append(TuningTask(names[0], members[0][1], names, weight, key))
    return tasks


__all__ = ["TuningTask", "extract_tasks", "task_module", "is_tunable", "bind_weights",
           "call_counts", "build_module"]  # fmt: skip
