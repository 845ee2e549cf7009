"""tilelang: a tensor-program compiler in Python.

Write a tensor function in TVMScript-style ``.tir`` text (or as a decorated Python
function), transform it with schedule primitives or your own passes, and compile it.
"""

from tilelang import ir
from tilelang.errors import (
    ArgumentError,
    BuildError,
    ScheduleError,
    TileLangError,
    TIRSyntaxError,
    TIRTypeError,
)  # fmt: skip
from tilelang.ir import IRModule, PrimFunc
from tilelang.register import get_global_func, register_func

__version__ = "0.1.0"


def parse(text: str, path: str | None = None) -> IRModule:
    """Parse ``.tir`` text into an IRModule (a bare prim_func is wrapped under its name)."""
    from tilelang.parser import parse as _parse

    return _parse(text, path)


def lower(mod_or_func, name: str = "main", bounds_check: bool | None = None) -> IRModule:
    """Run the lowering pipeline (see :func:`tilelang.transform.lower`)."""
    from tilelang.transform import lower as _lower

    return _lower(mod_or_func, name, bounds_check=bounds_check)


def parse_file(path) -> IRModule:
    """Parse a ``.tir`` file into an IRModule."""
    from tilelang.parser import parse_file as _parse_file

    return _parse_file(path)


#: subpackages reachable as attributes after a bare ``import tilelang`` (as ``tvm.relax``,
#: ``tvm.te``...), each imported on first use so that startup stays fast
_LAZY_SUBMODULES = (
    "arith", "contrib", "meta_schedule", "relax", "runtime", "schedule", "target", "te",
    "testing", "tiling", "topi", "transform", "tune",
)  # fmt: skip


def __getattr__(name):
    # The runtime loads on first use, so `import tilelang` stays light.
    if name in _LAZY_SUBMODULES:
        import importlib

        try:
            return importlib.import_module(f"tilelang.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tilelang.{name}":
                raise
            raise AttributeError(f"module 'tilelang' has no attribute {name!r}") from None
    if name == "Target":
        from tilelang.target import Target

        return Target
    if name == "Schedule":
        from tilelang.schedule import Schedule

        return Schedule
    if name == "tir":
        import tilelang.tir as tir

        return tir
    if name == "script":  # @tvm.script.ir_module with `import tilelang as tvm`
        import tilelang.script as script

        return script
    if name == "build":
        # the function, not the submodule of the same name (importing
        # tilelang.runtime.build replaces the package attribute with the module)
        from tilelang.runtime.build import build

        return build
    if name in ("nd", "cpu", "cuda"):
        from tilelang import runtime

        return getattr(runtime, name)
    raise AttributeError(f"module 'tilelang' has no attribute {name!r}")


__all__ = [
    "build", "nd", "cpu", "cuda", "Target", "Schedule", "tir", "register_func", "get_global_func",
    "script", "ir", "IRModule", "PrimFunc", "parse", "parse_file", "ArgumentError", "BuildError",
    "ScheduleError", "TileLangError", "TIRSyntaxError", "TIRTypeError",
]  # fmt: skip
