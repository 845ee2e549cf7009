"""The trace: every primitive a schedule applied, printable as replayable Python.

``print(sch.trace)`` gives TVM's form::

    def apply_trace(sch: tir.Schedule) -> None:
      b0 = sch.get_block(name="Y", func_name="mm_relu")
      l1, l2, l3 = sch.get_loops(block=b0)
      l4, l5 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True, ...)

Each :class:`Instruction` stores the method name and its arguments exactly as the
public method takes them, so replaying is calling the method again (with handles
mapped to the new schedule's, and sampled decisions forced).
"""

from __future__ import annotations

import attrs

from tilelang.schedule.state import _RV

#: methods whose result is a list (printed ``a, b = ...`` even for one element)
LIST_RESULTS = frozenset(
    {
        "get_loops",
        "split",
        "sample_perfect_tile",
        "get_child_blocks",
        "get_producers",
        "get_consumers",
    }
)
SAMPLING = frozenset({"sample_perfect_tile", "sample_categorical"})


@attrs.frozen
class Instruction:
    """One traced call: ``kind`` is the Schedule method, ``args`` its arguments as
    ``(keyword or None, value)`` pairs, ``outputs`` the handles it returned."""

    kind: str
    args: tuple
    outputs: tuple
    decision: object = None

    def with_decision(self, decision) -> Instruction:
        return attrs.evolve(self, decision=decision)


class Trace:
    """An ordered list of instructions; ``str(trace)`` is the replayable Python."""

    def __init__(self, insts=()):
        self.insts: list[Instruction] = list(insts)

    @property
    def decisions(self) -> dict:
        """Sampling instruction -> its decision."""
        return {inst: inst.decision for inst in self.insts if inst.kind in SAMPLING}

    def append(self, inst: Instruction) -> None:
        self.insts.append(inst)

    def copy(self) -> Trace:
        return Trace(self.insts)

    def with_decision(self, inst: Instruction, decision, remove_postproc: bool = True) -> Trace:
        """A copy whose sampling instruction ``inst`` takes ``decision`` on replay."""
        return Trace(i.with_decision(decision) if i is inst else i for i in self.insts)

    def as_python(self) -> list[str]:
        """The trace as lines of Python (the body of ``apply_trace``)."""
        names: dict[int, str] = {}
        counter = 0
        lines = []
        for inst in self.insts:
            for rv in inst.outputs:
                names[id(rv)] = f"{rv.prefix}{counter}"
                counter += 1
            lines.append(_format_call(inst, names))
        return lines

    def __str__(self) -> str:
        body = [f"  {line}" for line in self.as_python()] or ["  pass"]
        return "\n".join(["def apply_trace(sch: tir.Schedule) -> None:", *body])

    def __repr__(self) -> str:
        return str(self)

    def show(self) -> None:
        print(self)

    def apply_to_schedule(self, sch, remove_postproc: bool = True, decision_provider=None):
        """Replays every instruction on ``sch`` (sampling with the recorded decisions,
        or ``decision_provider(inst, inputs, attrs, decision)``'s when given)."""
        mapping: dict[int, object] = {}
        for inst in self.insts:
            positional, keywords = [], {}
            for key, value in inst.args:
                value = _map_rv(value, mapping)
                if key is None:
                    positional.append(value)
                else:
                    keywords[key] = value
            if inst.kind in SAMPLING:
                decision = inst.decision
                if decision_provider is not None:
                    decision = decision_provider(inst, positional, keywords, decision)
                keywords["decision"] = decision
            result = getattr(sch, inst.kind)(*positional, **keywords)
            outputs = result if isinstance(result, (list, tuple)) else [result]
            for old, new in zip(inst.outputs, outputs):
                mapping[id(old)] = new
        return sch


def _map_rv(value, mapping):
    if isinstance(value, _RV):
        return mapping.get(id(value), value)
    if isinstance(value, list):
        return [_map_rv(v, mapping) for v in value]
    return value


def _format_value(value, names) -> str:
    if isinstance(value, _RV):
        return names.get(id(value), "<undefined>")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format_value(v, names) for v in value) + "]"
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return '"' + escaped + '"'
    return repr(value)


def _format_call(inst: Instruction, names) -> str:
    parts = [
        _format_value(value, names) if key is None else f"{key}={_format_value(value, names)}"
        for key, value in inst.args
    ]
    if inst.kind in SAMPLING and inst.decision is not None:
        parts.append(f"decision={_format_value(inst.decision, names)}")
    call = f"sch.{inst.kind}({', '.join(parts)})"
    outs = [names[id(rv)] for rv in inst.outputs]
    if not outs:
        return call
    if len(outs) == 1 and inst.kind in LIST_RESULTS:
        return f"{outs[0]}, = {call}"
    return f"{', '.join(outs)} = {call}"
