"""Traces as JSON: structured instructions with their decisions, replayable anywhere.

A record stores a trace as a list of instructions::

    {"kind": "split", "args": [["loop", {"rv": "l2"}], ["factors", [{"rv": "v5"}, ...]]],
     "outputs": ["l6", "l7"], "decision": null}

Handles are named like the printed trace (``b0``, ``l1``, ``v2``); :func:`trace_from_json`
makes fresh handles for the names, so the result replays with
:meth:`Trace.apply_to_schedule` like a trace recorded in this process.
"""

from __future__ import annotations

from tilelang.errors import ArgumentError
from tilelang.schedule import BlockRV, ExprRV, Instruction, LoopRV, Schedule, Trace
from tilelang.schedule.state import _RV

_RV_KINDS = {cls.prefix: cls for cls in (BlockRV, LoopRV, ExprRV)}


def trace_to_json(trace: Trace) -> list[dict]:
    """``trace`` as JSON-serialisable data."""
    names: dict[int, str] = {}
    out = []
    for inst in trace.insts:
        for rv in inst.outputs:
            names[id(rv)] = f"{rv.prefix}{len(names)}"
        out.append(
            {
                "kind": inst.method,
                "args": [[key, _encode(value, names)] for key, value in inst.args],
                "outputs": [names[id(rv)] for rv in inst.outputs],
                "decision": trace.get_decision(inst),
            }
        )
    return out


def _encode(value, names):
    if isinstance(value, _RV):
        if id(value) not in names:
            raise ArgumentError(f"the trace uses the handle {value!r} before defining it")
        return {"rv": names[id(value)]}
    if isinstance(value, (list, tuple)):
        return [_encode(v, names) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ArgumentError(f"cannot store the trace argument {value!r} as JSON")


def trace_from_json(data: list) -> Trace:
    """The :class:`Trace` stored by :func:`trace_to_json`."""
    handles: dict[str, _RV] = {}
    insts, decisions = [], {}
    try:
        for item in data:
            outputs = []
            for name in item["outputs"]:
                handles[name] = _RV_KINDS[name[0]]()
                outputs.append(handles[name])
            args = tuple((key, _decode(value, handles)) for key, value in item["args"])
            insts.append(Instruction.from_call(item["kind"], args, outputs))
            if item.get("decision") is not None:
                decisions[insts[-1]] = item["decision"]
    except (KeyError, TypeError, IndexError, ValueError) as exc:
        raise ArgumentError(f"malformed stored trace: {exc!r}") from None
    return Trace(insts, decisions)


def _decode(value, handles):
    if isinstance(value, dict):
        return handles[value["rv"]]
    if isinstance(value, list):
        return [_decode(v, handles) for v in value]
    return value


def replay(mod, trace: Trace) -> Schedule:
    """A new schedule of ``mod`` with ``trace`` applied (its decisions forced)."""
    sch = Schedule(mod)
    trace.apply_to_schedule(sch)
    return sch
