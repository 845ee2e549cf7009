"""Tensor intrinsics: a description paired with an implementation, registered by name.

A :class:`TensorIntrin` is what :meth:`Schedule.tensorize` replaces a block with. The
*description* is a PrimFunc whose parameters are matched buffers and whose body is a
root block over the computation the hardware (or micro-kernel) performs; the
*implementation* has the same parameters, in the same order, and a root block whose
body does it, usually a ``T.call_extern`` through ``access_ptr``s (SEED §7)::

    @T.prim_func
    def tmm16_desc(a: T.handle, b: T.handle, c: T.handle):
        A = T.match_buffer(a, (16, 16), "float32", offset_factor=16)
        ...
        with T.block("root"):
            T.reads(C[0:16, 0:16], A[0:16, 0:16], B[0:16, 0:16])
            T.writes(C[0:16, 0:16])
            for i, j, k in T.grid(16, 16, 16):
                with T.block(""):
                    ...

    TensorIntrin.register("tmm16", tmm16_desc, tmm16_impl)

The registry is the one piece of module-level mutable state the schedule has (as
TVM's); registering a name twice is an error unless ``override=True``.
"""

from __future__ import annotations

import attrs

from tilelang.errors import ScheduleError
from tilelang.ir import stmt as S
from tilelang.ir.function import IRModule, PrimFunc

_REGISTRY: dict[str, TensorIntrin] = {}


def _as_prim_func(func, role: str) -> PrimFunc:
    """A PrimFunc from a PrimFunc or a one-function IRModule."""
    if isinstance(func, IRModule):
        funcs = [f for f in func.functions.values() if isinstance(f, PrimFunc)]
        if len(funcs) == 1:
            func = funcs[0]
    if not isinstance(func, PrimFunc):
        raise TypeError(f"TensorIntrin: the {role} must be a PrimFunc, not {type(func).__name__}")
    return func


def _root_block(func: PrimFunc, role: str, name: str) -> S.Block:
    body = func.body
    if not isinstance(body, S.BlockRealize):
        raise ScheduleError(
            f"TensorIntrin({name!r}): the {role}'s body must be one root block "
            '(with T.block("root"): T.reads(...) T.writes(...) ...)'
        )
    return body.block


@attrs.frozen(eq=False)
class TensorIntrin:
    """A named pair of PrimFuncs: ``desc`` (what is computed) and ``impl`` (how)."""

    desc: PrimFunc
    impl: PrimFunc
    name: str = ""

    @staticmethod
    def register(name: str, desc, impl, override: bool = False) -> TensorIntrin:
        """Registers ``desc``/``impl`` under ``name`` and returns the intrinsic.

        Both functions take the same number of buffer parameters; the i-th buffer of
        the implementation stands for the i-th of the description. Each has a root
        block whose reads and writes name those buffers.
        """
        desc, impl = _as_prim_func(desc, "description"), _as_prim_func(impl, "implementation")
        if name in _REGISTRY and not override:
            raise ValueError(f"TensorIntrin {name!r} is already registered (pass override=True)")
        if len(desc.params) != len(impl.params):
            raise ValueError(
                f"TensorIntrin {name!r}: the description has {len(desc.params)} parameters "
                f"and the implementation {len(impl.params)}"
            )
        for func, role in ((desc, "description"), (impl, "implementation")):
            _root_block(func, role, name)
            missing = [p.name for p in func.params if p not in func.buffer_map]
            if missing:
                raise ValueError(
                    f"TensorIntrin {name!r}: the {role}'s parameters {missing} are not "
                    "matched to buffers (T.match_buffer)"
                )
        intrin = TensorIntrin(desc, impl, name)
        _REGISTRY[name] = intrin
        return intrin

    @staticmethod
    def get(name: str, allow_missing: bool = False) -> TensorIntrin | None:
        """The intrinsic registered as ``name`` (None when missing and allowed). A name
        not registered yet loads the library's fixed intrinsics first (as importing
        TVM's ``tensor_intrin`` does), so ``sch.tensorize(loop, "wmma_sync_...")``
        needs no import of :mod:`tilelang.intrinsics.cuda_wmma`."""
        intrin = _REGISTRY.get(name)
        if intrin is None and not allow_missing:
            _load_library()
            intrin = _REGISTRY.get(name)
        if intrin is None and not allow_missing:
            known = ", ".join(sorted(_REGISTRY)) or "none"
            raise ValueError(f"TensorIntrin {name!r} is not registered (registered: {known})")
        return intrin

    def desc_buffers(self) -> list:
        return [self.desc.buffer_map[p] for p in self.desc.params]

    def impl_buffers(self) -> list:
        return [self.impl.buffer_map[p] for p in self.impl.params]


#: modules whose import registers fixed intrinsics (portable, no CPU feature check)
LIBRARY = (
    "tilelang.intrinsics.reference",
    "tilelang.intrinsics.cuda_wmma",
    "tilelang.intrinsics.cuda_mma",
)


def _load_library() -> None:
    import importlib

    for module in LIBRARY:
        importlib.import_module(module)


def registered_names() -> list[str]:
    """The names of every registered intrinsic, sorted."""
    return sorted(_REGISTRY)
