"""Instructions of a trace: :class:`InstructionKind` (what a primitive takes and how it
prints) and :class:`Instruction` (one traced call), as TVM defines them.

TVM splits a primitive's arguments into *inputs* (handles and values that may depend
on handles: the block, the loops, the split factors, an annotation's value) and
*attrs* (plain settings: a buffer index, a scope, ``preserve_unit_iters``). A kind
lists the Python parameters of its Schedule method in call order, each marked input
or attr, so one table serves every direction: a recorded call becomes
``(inputs, attrs)``, and ``(inputs, attrs)`` becomes a printed call or a replayed one.

A Schedule method missing from the table (a primitive added later) gets a kind on
first use, named in TVM's style (``cache_read`` -> ``CacheRead``) with every
argument an input, so it traces and replays like the others.
"""

from __future__ import annotations

import json

from tilelang.errors import ArgumentError
from tilelang.ir import expr as E

#: parameter roles: one input, one attr, the rest of the positional inputs
INPUT, ATTR, VARIADIC = "input", "attr", "variadic"
#: how a kind's outputs are printed: none, ``a = ...``, ``a, b = ...`` (``a, = ...``)
NO_OUTPUT, SINGLE, LIST = "none", "single", "list"


class InstructionKind:
    """A kind of traced instruction (TVM's ``InstructionKind``): its TVM ``name``
    (``"Split"``), the Schedule ``method`` it calls (``"split"``), its ``params`` as
    ``(keyword, role)`` pairs in call order (role :data:`INPUT`, :data:`ATTR` or
    :data:`VARIADIC`; keyword None for positional ones), how its outputs print, and
    ``is_pure`` (no effect but its outputs, so :meth:`Trace.simplified` may drop it
    when they are unused). ``has_decision``: a sampling kind whose replay takes the
    recorded decision."""

    _by_name: dict[str, InstructionKind] = {}
    _by_method: dict[str, InstructionKind] = {}

    def __init__(
        self, name, method, params=(), outputs=NO_OUTPUT, is_pure=False, has_decision=False
    ):
        self.name = name
        self.method = method
        self.params = tuple(params)
        self.output_style = outputs
        self.is_pure = is_pure
        self.has_decision = has_decision

    @classmethod
    def register(cls, kind: InstructionKind, *aliases: str) -> InstructionKind:
        cls._by_name[kind.name] = kind
        for alias in aliases:
            cls._by_name[alias] = kind
        cls._by_method.setdefault(kind.method, kind)
        return kind

    @classmethod
    def get(cls, name: str) -> InstructionKind:
        """The kind registered under TVM's ``name`` (``"GetLoops"``); ValueError when
        there is none."""
        kind = cls._by_name.get(name)
        if kind is None:
            raise ValueError(f"unknown instruction kind {name!r}")
        return kind

    @classmethod
    def for_method(cls, method: str, keywords=()) -> InstructionKind:
        """The kind recorded for the Schedule method ``method``; one is made (every
        argument an input, in ``keywords`` order) for a method outside the table."""
        kind = cls._by_method.get(method)
        if kind is None:
            name = "".join(part.capitalize() for part in method.split("_"))
            params = [(k, INPUT if k is not None else VARIADIC) for k in keywords]
            kind = cls.register(cls(name, method, params, outputs=LIST))
        return kind

    @property
    def is_postproc(self) -> bool:
        """Whether instructions from here on are post-processing (``EnterPostproc``)."""
        return self.name == "EnterPostproc"

    def same_as(self, other) -> bool:
        return self is other

    def __eq__(self, other) -> bool:
        # a kind also equals its method's name, so code that reads a trace by method
        # (``inst.kind in ("get_block", "get_loops")``) keeps working
        if isinstance(other, str):
            return other == self.method
        return self is other

    def __hash__(self) -> int:
        return hash(self.method)

    def __repr__(self) -> str:
        return f"InstructionKind({self.name!r})"


class Instruction:
    """One traced call (TVM's ``Instruction``): ``kind``, ``inputs`` (handles and
    values), ``attrs`` (settings) and ``outputs`` (the handles it returned).

    ``str(inst)`` is the call as Python with every handle written ``_``. Instructions
    compare and hash by identity, as TVM's do, so a trace's decisions are keyed by them.
    """

    __slots__ = ("kind", "inputs", "attrs", "outputs")

    def __init__(self, kind, inputs=(), attrs=(), outputs=()):
        if isinstance(kind, str):
            kind = InstructionKind.get(kind)
        if not isinstance(kind, InstructionKind):
            raise ArgumentError(f"Instruction kind must be an InstructionKind, not {kind!r}")
        self.kind = kind
        self.inputs = tuple(inputs)
        self.attrs = tuple(attrs)
        self.outputs = tuple(outputs)

    @classmethod
    def from_call(cls, method: str, args, outputs=()) -> Instruction:
        """The instruction for ``Schedule.method`` called with ``args``, a list of
        ``(keyword or None, value)`` pairs as the method takes them."""
        kind = InstructionKind.for_method(method, [k for k, _ in args])
        given = {k: v for k, v in args if k is not None}
        known = {k for k, _ in kind.params}
        # a keyword the table does not list (a primitive that grew an option) is kept as
        # a trailing input, so the call still replays with it
        kind.params += tuple((k, INPUT) for k in given if k not in known)
        positional = [v for k, v in args if k is None]
        inputs, attrs = [], []
        for keyword, role in kind.params:
            if role == VARIADIC:
                inputs.extend(positional)
            elif role == INPUT and keyword == "factors":
                inputs.extend(given.get(keyword, ()))  # TVM: split's inputs are loop, *factors
            elif keyword in given or role == ATTR:
                (inputs if role == INPUT else attrs).append(given.get(keyword))
        return cls(kind, inputs, attrs, outputs)

    @property
    def method(self) -> str:
        """The Schedule method this instruction calls."""
        return self.kind.method

    @property
    def args(self) -> list:
        """The call's arguments as ``(keyword or None, value)`` pairs in call order."""
        inputs, attrs = list(self.inputs), list(self.attrs)
        out = []
        for keyword, role in self.kind.params:
            if role == VARIADIC:
                out.extend((None, v) for v in inputs)
                inputs = []
            elif role == INPUT and keyword == "factors":
                out.append((keyword, inputs))
                inputs = []
            elif role == INPUT:
                if inputs:
                    out.append((keyword, inputs.pop(0)))
            elif attrs:
                out.append((keyword, attrs.pop(0)))
        return out

    def same_as(self, other) -> bool:
        return self is other

    def format(self, names, decision=None) -> str:
        """The call as one line of Python: handles named by ``names`` (id -> name,
        ``"_"`` when missing), with ``decision=`` for a sampling kind."""
        parts = [
            format_value(value, names) if key is None else f"{key}={format_value(value, names)}"
            for key, value in self.args
        ]
        if self.kind.has_decision and decision is not None:
            parts.append(f"decision={format_value(decision, names)}")
        call = f"sch.{self.kind.method}({', '.join(parts)})"
        outs = [names.get(id(rv), "_") if rv is not None else "_" for rv in self.outputs]
        if not outs:
            return call
        if len(outs) == 1 and self.kind.output_style == LIST:
            return f"{outs[0]}, = {call}"
        return f"{', '.join(outs)} = {call}"

    def __str__(self) -> str:
        return self.format({})

    def __repr__(self) -> str:
        return str(self)


def plain_value(value):
    """An IR constant as the Python value a Schedule method takes (``T.int32(32)`` ->
    32, ``T.bool(True)`` -> True); lists element-wise; anything else unchanged."""
    if isinstance(value, E.IntImm):
        return bool(value.value) if value.dtype == "bool" else int(value.value)
    if isinstance(value, E.FloatImm):
        return float(value.value)
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    return value


def format_value(value, names) -> str:
    """``value`` as Python source in a printed trace."""
    from tilelang.schedule.state import _RV

    if isinstance(value, (_RV, E.Var)):
        return names.get(id(value), "_")
    value = plain_value(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(v, names) for v in value) + "]"
    if isinstance(value, dict):
        items = (f"{format_value(k, names)}: {format_value(v, names)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, str):
        return json.dumps(value)  # one line: quotes, backslashes and newlines escaped
    return repr(value)


def _kind(name, method, params, outputs=NO_OUTPUT, pure=False, decision=False, aliases=()):
    parsed = []
    for p in params.split():
        keyword, _, role = p.partition(":")
        parsed.append(
            (None if keyword == "*" else keyword, {"i": INPUT, "a": ATTR, "*": VARIADIC}[role])
        )
    InstructionKind.register(
        InstructionKind(name, method, parsed, outputs, pure, decision), *aliases
    )


# TVM's kinds: name, Schedule method, parameters in call order (``keyword:i`` input,
# ``keyword:a`` attr, ``*:*`` the positional inputs), outputs. Kinds of primitives
# tilelang does not have yet are listed too, so that they trace as TVM's once added.
_kind("GetBlock", "get_block", "name:a func_name:a", SINGLE, pure=True, aliases=("GetSBlock",))
_kind("GetLoops", "get_loops", "block:i", LIST, pure=True)
_kind("GetChildBlocks", "get_child_blocks", "*:*", LIST, pure=True)
_kind("GetProducers", "get_producers", "block:i", LIST, pure=True)
_kind("GetConsumers", "get_consumers", "block:i", LIST, pure=True)
_kind("GetOutputBlocks", "get_output_blocks", "block:i", LIST, pure=True)
_kind("Split", "split", "loop:i factors:i preserve_unit_iters:a disable_predication:a", LIST)
_kind("LoopPartition", "loop_partition", "loop:i factors:i preserve_unit_iters:a", LIST)
_kind("Fuse", "fuse", "*:* preserve_unit_iters:a", SINGLE)
_kind("Merge", "merge", "*:*", SINGLE)
_kind("Reorder", "reorder", "*:*")
_kind("AddUnitLoop", "add_unit_loop", "block_or_loop:i", SINGLE)
_kind("Parallel", "parallel", "loop:i")
_kind("Vectorize", "vectorize", "loop:i")
_kind("Unroll", "unroll", "loop:i")
_kind("Bind", "bind", "loop:i thread_axis:a")
_kind("Annotate", "annotate", "block_or_loop:i ann_key:a ann_val:i")
_kind("Unannotate", "unannotate", "block_or_loop:i ann_key:a")
_kind("ComputeAt", "compute_at", "block:i loop:i preserve_unit_loops:a index:a")
_kind("ReverseComputeAt", "reverse_compute_at", "block:i loop:i preserve_unit_loops:a index:a")
_kind("ComputeInline", "compute_inline", "block:i")
_kind("ReverseComputeInline", "reverse_compute_inline", "block:i")
_kind(
    "CacheRead",
    "cache_read",
    "block:i read_buffer_index:a storage_scope:a consumer_blocks:i",
    SINGLE,
)
_kind(
    "CacheWrite",
    "cache_write",
    "block:i write_buffer_index:a storage_scope:a consumer_blocks:i",
    SINGLE,
)
_kind(
    "ReindexCacheRead",
    "reindex_cache_read",
    "block:i read_buffer_index:a storage_scope:a index_map:i",
    SINGLE,
)
_kind(
    "ReindexCacheWrite",
    "reindex_cache_write",
    "block:i write_buffer_index:a storage_scope:a index_map:i",
    SINGLE,
)
_kind("CacheInplace", "cache_inplace", "block:i read_buffer_index:a storage_scope:a", LIST)
_kind("ReIndex", "reindex", "block:i buffer:a", SINGLE)
_kind("SetScope", "set_scope", "block:i buffer_index:a storage_scope:a")
_kind("StorageAlign", "storage_align", "block:i buffer_index:a axis:a factor:a offset:a")
_kind("DecomposeReduction", "decompose_reduction", "block:i loop:i", SINGLE)
_kind("MergeReduction", "merge_reduction", "init:i update:i")  # tilelang's, not TVM's
_kind("RFactor", "rfactor", "loop:i factor_axis:a", SINGLE)
_kind("Blockize", "blockize", "target:i preserve_unit_iters:a", SINGLE)
_kind("Tensorize", "tensorize", "block_or_loop:i tensor_intrin:a preserve_unit_iters:a")
_kind(
    "SamplePerfectTile",
    "sample_perfect_tile",
    "loop:i n:a max_innermost_factor:a",
    LIST,
    pure=True,
    decision=True,
)
_kind(
    "SampleCategorical",
    "sample_categorical",
    "candidates:a probs:a",
    SINGLE,
    pure=True,
    decision=True,
)
_kind(
    "SampleComputeLocation", "sample_compute_location", "block:i", SINGLE, pure=True, decision=True
)
_kind("RollingBuffer", "rolling_buffer", "block:i write_buffer_index:a")
_kind("PadEinsum", "pad_einsum", "block:i padding:a")
_kind("ReadAt", "read_at", "loop:i block:i read_buffer_index:a storage_scope:a", SINGLE)
_kind("WriteAt", "write_at", "loop:i block:i write_buffer_index:a storage_scope:a", SINGLE)
_kind("CacheIndex", "cache_index", "block:i storage_scope:a cse_thresh:a", LIST)
_kind("TransformBlockLayout", "transform_block_layout", "block:i index_map:a")
_kind("SetAxisSeparator", "set_axis_separator", "block:i buffer_index:a axis_separators:a")
_kind("EnterPostproc", "enter_postproc", "")
