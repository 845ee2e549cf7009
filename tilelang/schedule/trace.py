"""The trace: every primitive a schedule applied, with the decisions of its sampling
instructions, printable as replayable Python and storable as JSON (TVM's ``Trace``).

``print(sch.trace)`` gives TVM's form (without the ``# from tvm import tir`` comment
line TVM puts first: the project's seed programs print the trace as below)::

    def apply_trace(sch: tir.Schedule) -> None:
      b0 = sch.get_block(name="Y", func_name="mm_relu")
      l1, l2, l3 = sch.get_loops(block=b0)
      l4, l5 = sch.split(loop=l2, factors=[None, 4], preserve_unit_iters=True, ...)

Each :class:`~tilelang.schedule.instruction.Instruction` holds its kind, inputs, attrs
and outputs; the decisions live in the trace (``trace.decisions[inst]``), so
:meth:`Trace.with_decision` makes a variant without touching the instructions.
Replaying calls the Schedule methods again, with handles mapped to the new
schedule's and the recorded decisions forced.
"""

from __future__ import annotations

from tilelang.errors import ArgumentError
from tilelang.ir import expr as E
from tilelang.schedule.instruction import Instruction, InstructionKind, plain_value
from tilelang.schedule.state import _RV, BlockRV, ExprRV, LoopRV

HEADER = ("def apply_trace(sch: tir.Schedule) -> None:",)
_RV_TYPES = {"b": BlockRV, "l": LoopRV, "v": ExprRV}


def _is_rv(value) -> bool:
    return isinstance(value, (_RV, E.Var))


def _prefix(rv) -> str:
    return getattr(rv, "prefix", "v")


class Trace:
    """An ordered list of instructions and the decisions of its sampling ones.

    ``Trace(insts, decisions)`` as in TVM: ``decisions`` maps instructions of
    ``insts`` to their decisions (a list of factors, an index). ``str(trace)`` is the
    replayable Python.
    """

    def __init__(self, insts=(), decisions=None):
        self.insts: list[Instruction] = list(insts)
        self._decisions: dict[Instruction, object] = dict(decisions or {})

    @property
    def decisions(self) -> dict:
        """Instruction -> its decision, for the instructions that have one."""
        return {inst: self._decisions[inst] for inst in self.insts if inst in self._decisions}

    def get_decision(self, inst: Instruction):
        """The decision of ``inst``, or None."""
        return self._decisions.get(inst)

    def append(self, inst: Instruction, decision=None) -> None:
        """Adds ``inst`` at the end, with its ``decision`` when it has one."""
        self.insts.append(inst)
        if decision is not None:
            self._decisions[inst] = decision

    def pop(self) -> Instruction | None:
        """Removes and returns the last instruction (and its decision); None when empty."""
        if not self.insts:
            return None
        inst = self.insts.pop()
        self._decisions.pop(inst, None)
        return inst

    def copy(self) -> Trace:
        return Trace(self.insts, self._decisions)

    def _valid(self, remove_postproc: bool) -> list[Instruction]:
        """The instructions before ``EnterPostproc`` (all of them when not removing)."""
        if not remove_postproc:
            return list(self.insts)
        out = []
        for inst in self.insts:
            if inst.kind.is_postproc:
                break
            out.append(inst)
        return out

    def with_decision(self, inst: Instruction, decision, remove_postproc: bool = True) -> Trace:
        """A copy (cut at post-processing when ``remove_postproc``) in which ``inst``
        takes ``decision``."""
        decisions = dict(self._decisions)
        decisions[inst] = decision
        return Trace(self._valid(remove_postproc), decisions)

    def simplified(self, remove_postproc: bool) -> Trace:
        """A copy without the pure instructions (lookups, samples) whose outputs nothing
        later uses, cut at post-processing when ``remove_postproc``."""
        used: set[int] = set()
        kept = []
        for inst in reversed(self._valid(remove_postproc)):
            if inst.kind.is_pure and not any(id(rv) in used for rv in inst.outputs):
                continue
            kept.append(inst)
            _mark_used(inst.inputs, used)
        kept.reverse()
        return Trace(kept, {i: self._decisions[i] for i in kept if i in self._decisions})

    # ------------------------------------------------------------ printing

    def as_python(self, remove_postproc: bool = False) -> list[str]:
        """The trace as lines of Python (the body of ``apply_trace``)."""
        names: dict[int, str] = {}
        lines = []
        for inst in self._valid(remove_postproc):
            for rv in inst.outputs:
                names[id(rv)] = f"{_prefix(rv)}{len(names)}" if rv is not None else "_"
            lines.append(inst.format(names, self._decisions.get(inst)))
        return lines

    def __str__(self) -> str:
        body = [f"  {line}" for line in self.as_python()] or ["  pass"]
        return "\n".join([*HEADER, *body])

    def __repr__(self) -> str:
        return str(self)

    def show(self, *_style, **_options) -> None:
        print(self)

    # ------------------------------------------------------------- replaying

    def apply_to_schedule(self, sch, remove_postproc: bool = True, decision_provider=None):
        """Replays the instructions on ``sch`` (up to post-processing when
        ``remove_postproc``), sampling with the recorded decisions, or with
        ``decision_provider(inst, inputs, attrs, decision)``'s when given. Returns ``sch``."""
        mapping: dict[int, object] = {}
        for inst in self._valid(remove_postproc):
            inputs = [_map_rv(v, mapping) for v in inst.inputs]
            decision = self._decisions.get(inst)
            if decision_provider is not None:
                decision = decision_provider(inst, inputs, list(inst.attrs), decision)
            outputs = _call(sch, inst.kind, inputs, list(inst.attrs), decision)
            for old, new in zip(inst.outputs, outputs):
                mapping[id(old)] = new
        return sch

    # ------------------------------------------------------------------ JSON

    def as_json(self, remove_postproc: bool = False) -> list:
        """``[instructions, decisions]`` as plain JSON data (TVM's layout): each
        instruction ``[kind name, inputs, attrs, output names]`` with handles written
        by name and string inputs in double quotes; each decision ``[index, decision]``."""
        names: dict[int, str] = {}
        insts, decisions = [], []
        for index, inst in enumerate(self._valid(remove_postproc)):
            inputs = [_input_json(v, names) for v in inst.inputs]
            outputs = []
            for rv in inst.outputs:
                names[id(rv)] = f"{_prefix(rv)}{len(names)}" if rv is not None else "_"
                outputs.append(names[id(rv)])
            insts.append([inst.kind.name, inputs, [_attr_json(a) for a in inst.attrs], outputs])
            if inst in self._decisions:
                decisions.append([index, _attr_json(self._decisions[inst])])
        return [insts, decisions]

    @staticmethod
    def apply_json_to_schedule(json_obj, sch) -> None:
        """Replays a trace stored by :meth:`as_json` on ``sch``."""
        try:
            json_insts, json_decisions = json_obj
            decisions = {int(index): decision for index, decision in json_decisions}
            entries = [(InstructionKind.get(k), i, a, o) for k, i, a, o in json_insts]
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not a trace in JSON form: {exc}") from None
        named: dict[str, object] = {"None": None}
        for index, (kind, inputs, attrs, outputs) in enumerate(entries):
            inputs = [_input_from_json(v, named) for v in inputs]
            results = _call(sch, kind, inputs, list(attrs), decisions.get(index))
            named.update(zip(outputs, results))

    @staticmethod
    def from_json(json_obj) -> Trace:
        """The :class:`Trace` stored by :meth:`as_json`, with fresh handles."""
        json_insts, json_decisions = json_obj
        named: dict[str, object] = {"None": None}
        insts = []
        for kind_name, inputs, attrs, outputs in json_insts:
            inputs = [_input_from_json(v, named) for v in inputs]
            rvs = []
            for name in outputs:
                named[name] = _RV_TYPES[name[0]]() if name != "_" else None
                rvs.append(named[name])
            insts.append(Instruction(InstructionKind.get(kind_name), inputs, attrs, rvs))
        return Trace(insts, {insts[int(i)]: d for i, d in json_decisions})


def _call(sch, kind, inputs, attrs, decision) -> list:
    """``kind``'s Schedule method called on ``sch``; its outputs as a list."""
    inst = Instruction(kind, [plain_value(v) for v in inputs], [plain_value(a) for a in attrs])
    positional, keywords = [], {}
    for key, value in inst.args:
        if key is None:
            positional.append(value)
        else:
            keywords[key] = value
    if kind.has_decision:
        keywords["decision"] = plain_value(decision)
    method = getattr(sch, kind.method, None)
    if method is None:
        raise ArgumentError(f"the schedule has no primitive {kind.method!r} ({kind.name})")
    result = method(*positional, **keywords)
    if result is None:
        return []
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _mark_used(values, used: set) -> None:
    for value in values:
        if _is_rv(value):
            used.add(id(value))
        elif isinstance(value, (list, tuple)):
            _mark_used(value, used)


def _map_rv(value, mapping):
    if _is_rv(value):
        return mapping.get(id(value), value)
    if isinstance(value, (list, tuple)):
        return [_map_rv(v, mapping) for v in value]
    return value


def _input_json(value, names):
    if value is None:
        return "None"
    if isinstance(value, str):
        return '"' + value + '"'
    if _is_rv(value):
        if id(value) not in names:
            raise ArgumentError(f"the trace uses the handle {value!r} before defining it")
        return names[id(value)]
    if isinstance(value, (list, tuple)):
        return [_input_json(v, names) for v in value]
    return _attr_json(value)


def _attr_json(value):
    value = plain_value(value)
    if isinstance(value, (list, tuple)):
        return [_attr_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _attr_json(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ArgumentError(f"cannot store the trace value {value!r} as JSON")


def _input_from_json(value, named):
    if isinstance(value, list):
        return [_input_from_json(v, named) for v in value]
    if not isinstance(value, str):
        return value
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    if value not in named:
        raise ValueError(f"the trace uses the handle {value!r} before defining it")
    return named[value]
