"""``tilelang.build``: lower a module and hand it to the backend of a target."""

from __future__ import annotations

import inspect

from tilelang.errors import BuildError
from tilelang.ir.function import IRModule, PrimFunc
from tilelang.runtime.externs import check_extern_calls
from tilelang.runtime.module import Module
from tilelang.runtime.registry import get_backend
from tilelang.target import as_target
from tilelang.transform.verify_features import refuse_unsupported_features
from tilelang.transform.verify_lowered import verify_lowered


def _as_module(mod_or_func) -> IRModule:
    if isinstance(mod_or_func, IRModule):
        return mod_or_func
    if isinstance(mod_or_func, PrimFunc):
        return IRModule.from_expr(mod_or_func)
    raise BuildError(f"build() takes an IRModule or a PrimFunc, not {type(mod_or_func).__name__}")


def is_lowered(mod: IRModule) -> bool:
    """True when every PrimFunc of ``mod`` is marked ``tl.lowered``."""
    funcs = [f for _, f in mod if isinstance(f, PrimFunc)]
    return bool(funcs) and all(f.attrs.get("tl.lowered") for f in funcs)


def lower_module(mod: IRModule, bounds_check: bool | None = None) -> IRModule:
    """``mod`` lowered by the pipeline (unchanged if it is lowered already)."""
    if is_lowered(mod):
        if bounds_check:
            raise BuildError(
                "bounds_check=True needs the module before lowering (its buffers' shapes); "
                "pass the TensorIR function, not a lowered one"
            )
        return mod
    try:
        from tilelang.transform import lower
    except ImportError as exc:
        raise BuildError(f"the lowering pipeline is not available: {exc}") from exc
    return lower(mod, bounds_check=bounds_check)


#: backends whose generated code can stop a call at a failed check
_CHECKING_BACKENDS = ("python", "c", "llvm")
# Targets whose code runs on this CPU: the default schedule rules apply to them. The
# python backend is the reference and runs programs as written.
_AUTO_SCHEDULED_KINDS = ("c", "llvm")
# Targets that get the default GPU rules (tilelang.schedule.rules.gpu).
_GPU_KINDS = ("cuda",)


def apply_default_schedule(mod: IRModule, target) -> tuple[IRModule, object]:
    """``mod`` with the default rules applied to its unscheduled functions (the CPU
    rules of :mod:`tilelang.schedule.rules` for c/llvm, the GPU rules of
    :mod:`tilelang.schedule.rules.gpu` for cuda) and the trace of what they did;
    unchanged (and an empty trace) for other targets and for lowered modules."""
    from tilelang.schedule.rules import default_schedule
    from tilelang.schedule.trace import Trace

    target = as_target(target)
    if is_lowered(mod):
        return mod, Trace()
    if target.kind in _GPU_KINDS:
        from tilelang.schedule.rules.gpu import default_gpu_schedule

        sch = default_gpu_schedule(mod, target)
        return sch.mod, sch.trace
    if target.kind not in _AUTO_SCHEDULED_KINDS:
        return mod, Trace()
    sch = default_schedule(mod)
    return sch.mod, sch.trace


def build(mod_or_func, target="llvm", auto_schedule: bool = True,
          bounds_check: bool | None = None, **build_options) -> Module:  # fmt: skip
    """Compile an IRModule (or one PrimFunc) for ``target`` and return a :class:`Module`.

    ``target`` is a :class:`tilelang.target.Target` or its spelling (``"c"``,
    ``"llvm -num-cores=2"``, ``"python"``). ``build_options`` go to the backend; the C
    backend takes ``extern_sources`` (C files or source strings compiled in),
    ``extern_headers`` and ``libs``. Functions nobody scheduled get the default CPU
    schedule for the c and llvm targets and the default GPU schedule for cuda
    (``lib.trace`` shows it); ``auto_schedule=False`` builds them as written.
    ``allow_extern``: names ``T.call_extern`` may call although the program does not
    declare them (``"system"`` in libc; see :mod:`tilelang.runtime.externs`). Example::

        lib = tilelang.build(mod, target="c")
        lib["mm_relu"](a, b, c)

    ``bounds_check=True`` (or TVM's ``PassContext(config={"tir.instrument_bound_checkers":
    True})``) checks every access not shown inside its buffer at run time on the c and
    llvm backends: a failing one raises :class:`~tilelang.errors.OutOfBoundsError`
    naming the function, the buffer, the index and the access in the source, and
    nothing is written past the buffer. The python reference always checks (unless
    ``bounds_check=False``).
    """
    allow_extern = tuple(build_options.pop("allow_extern", ()) or ())
    target = as_target(target)
    if bounds_check and target.kind not in _CHECKING_BACKENDS:
        raise BuildError(f"bounds_check is not supported by the '{target.kind}' backend")
    mod, trace = _as_module(mod_or_func), None
    refuse_unsupported_features(mod, target.kind)
    if bounds_check is None and target.kind == "python" and not is_lowered(mod):
        bounds_check = True  # the reference checks what it can (a lowered module: no)
    if auto_schedule:
        mod, trace = apply_default_schedule(mod, target)
    if target.kind in _THREADED_TARGETS and not is_lowered(mod):
        # reductions over threadIdx-bound loops: allreduce across the threads
        from tilelang.transform.lower_cross_thread_reduction import (
            lower_cross_thread_reduction_module,
        )

        mod = lower_cross_thread_reduction_module(mod)
    lowered = lower_module(mod, bounds_check)
    backend = get_backend(target.kind)
    # One check of docs/lowered_ir.md for every backend, so none meets IR it cannot
    # translate (e.g. with FlattenBuffer disabled).
    verify_lowered(lowered, target.kind)
    refuse_unsupported_features(lowered, target.kind, returns_only=True)
    if build_options:
        accepted = inspect.signature(backend).parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
        unknown = [k for k in build_options if k not in accepted and not takes_any]
        if unknown:
            raise BuildError(
                f"the '{target.kind}' backend does not take the option(s) {', '.join(unknown)}"
            )
    if target.kind in ("c", "llvm"):
        # a program runs only the functions it declares (runtime/externs.py)
        check_extern_calls(lowered, build_options, allow_extern)
    return Module(backend(lowered, target, **build_options), lowered, target, trace)


#: targets whose thread-bound loops run on real threads
_THREADED_TARGETS = ("cuda",)


__all__ = ["build", "lower_module", "is_lowered", "apply_default_schedule"]
