"""Passes and the context they run in (TVM's ``tvm.transform``).

A :class:`Pass` maps an IRModule to an IRModule and is called like a function. It
runs under the current :class:`PassContext`, which decides whether it runs at all (its
``opt_level`` against the context's, the ``disabled_pass`` and ``required_pass``
lists) and calls the context's instruments around it.

Function passes are written with a decorator::

    @prim_func_pass(opt_level=0)
    def print_tir(f, mod, ctx):
        print(f)
        return f

    with PassContext(opt_level=3, config={"tir.add_lower_pass": [(3, print_tir)]}):
        lowered = tilelang.lower(mod)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import attrs

from tilelang.ir import IRModule, PrimFunc


@attrs.frozen
class PassInfo:
    """A pass's name, the lowest ``opt_level`` at which it runs, and the names of the
    passes it needs before it (informational, as TVM records them)."""

    opt_level: int
    name: str
    required: tuple = attrs.field(default=(), converter=tuple)


def _short_name(name: str) -> str:
    return name.split(".", 1)[1] if name.startswith("tir.") else name


class PassContext:
    """The settings passes run under; a context manager, nestable.

    ``opt_level`` (default 2): a pass with a higher ``opt_level`` is skipped.
    ``required_pass``: names that run whatever their level. ``disabled_pass``: names
    that never run (``"tir.Simplify"`` and ``"Simplify"`` both name the Simplify
    pass). ``config``: free-form settings such as ``"tir.add_lower_pass"``.
    ``instruments``: objects with any of ``enter_pass_ctx()``, ``exit_pass_ctx()``,
    ``should_run(mod, info)``, ``run_before_pass(mod, info)`` and
    ``run_after_pass(mod, info)``.
    """

    _local = threading.local()

    def __init__(
        self,
        opt_level: int = 2,
        required_pass: Sequence[str] = (),
        disabled_pass: Sequence[str] = (),
        instruments: Sequence[object] = (),
        config: dict | None = None,
    ):
        self.opt_level = opt_level
        self.required_pass = list(required_pass)
        self.disabled_pass = list(disabled_pass)
        self.instruments = list(instruments)
        self.config = dict(config or {})

    @classmethod
    def current(cls) -> PassContext:
        """The innermost active context, or a default one."""
        stack = getattr(cls._local, "stack", None)
        return stack[-1] if stack else PassContext()

    def __enter__(self) -> PassContext:
        stack = getattr(PassContext._local, "stack", None)
        if stack is None:
            stack = PassContext._local.stack = []
        for instrument in self.instruments:
            _call(instrument, "enter_pass_ctx")
        stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        PassContext._local.stack.pop()
        for instrument in self.instruments:
            _call(instrument, "exit_pass_ctx")

    def _names(self, names) -> set[str]:
        return {_short_name(n) for n in names}

    def pass_enabled(self, info: PassInfo) -> bool:
        """Whether a pass with ``info`` runs under this context."""
        name = _short_name(info.name)
        if name in self._names(self.disabled_pass):
            return False
        if name in self._names(self.required_pass):
            return True
        return info.opt_level <= self.opt_level


def _call(instrument, method: str, *args):
    fn = getattr(instrument, method, None)
    return None if fn is None else fn(*args)


class Pass:
    """IRModule -> IRModule, run under the current :class:`PassContext`."""

    info: PassInfo

    def __call__(self, mod: IRModule) -> IRModule:
        ctx = PassContext.current()
        if not ctx.pass_enabled(self.info):
            return mod
        if any(_call(i, "should_run", mod, self.info) is False for i in ctx.instruments):
            return mod
        for instrument in ctx.instruments:
            _call(instrument, "run_before_pass", mod, self.info)
        result = self.transform_module(mod, ctx)
        for instrument in ctx.instruments:
            _call(instrument, "run_after_pass", result, self.info)
        return result

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.info.name} opt_level={self.info.opt_level}>"


class ModulePass(Pass):
    """A pass made from ``fn(mod, ctx) -> mod``."""

    def __init__(self, fn: Callable, info: PassInfo):
        self.fn, self.info = fn, info

    def transform_module(self, mod, ctx):
        return self.fn(mod, ctx)


class PrimFuncPass(Pass):
    """A pass made from ``fn(func, mod, ctx) -> func`` applied to every PrimFunc of the
    module (other functions pass through). Returning ``None`` drops the function."""

    def __init__(self, fn: Callable, info: PassInfo):
        self.fn, self.info = fn, info

    def transform_module(self, mod, ctx):
        functions, changed = {}, False
        for name, func in mod.functions.items():
            new = self.fn(func, mod, ctx) if isinstance(func, PrimFunc) else func
            changed = changed or new is not func
            if new is not None:
                functions[name] = new
        return attrs.evolve(mod, functions=functions) if changed else mod


class Sequential(Pass):
    """Runs ``passes`` in order; each one still checks the context for itself.

    The sequence as a whole is not reported to instruments, so ``PrintIR`` and the
    timing table show the passes inside it.
    """

    def __init__(self, passes: Sequence[Pass], opt_level: int = 0, name: str = "sequential"):
        self.passes = list(passes)
        self.info = PassInfo(opt_level, name)

    def __call__(self, mod: IRModule) -> IRModule:
        if not PassContext.current().pass_enabled(self.info):
            return mod
        for p in self.passes:
            mod = p(mod)
        return mod

    def transform_module(self, mod, ctx):
        return self(mod)


def _decorator(kind: type, adapter_method: str, pass_func, opt_level, name, required):
    def make(target):
        pass_name = name or target.__name__
        info = PassInfo(opt_level or 0, pass_name, required or ())
        if isinstance(target, type):
            return _class_pass_factory(kind, adapter_method, target, info)
        return kind(target, info)

    if pass_func is not None:
        return make(pass_func)
    return make


def _class_pass_factory(kind, method, cls, info):
    def factory(*args, **kwargs):
        instance = cls(*args, **kwargs)
        return kind(getattr(instance, method), info)

    factory.__name__ = factory.__qualname__ = cls.__name__
    factory.__doc__ = cls.__doc__
    return factory


def prim_func_pass(
    pass_func=None, opt_level: int | None = None, name: str | None = None, required=()
):
    """Make a :class:`PrimFuncPass` from ``f(func, mod, ctx) -> func``, or from a class
    with ``transform_function(self, func, mod, ctx)`` (then calling the decorated class
    builds the pass). Usable as ``@prim_func_pass(opt_level=0)`` or
    ``prim_func_pass(f, opt_level=0)``."""
    return _decorator(PrimFuncPass, "transform_function", pass_func, opt_level, name, required)


def module_pass(pass_func=None, opt_level: int | None = None, name: str | None = None, required=()):
    """Make a :class:`ModulePass` from ``f(mod, ctx) -> mod``, or from a class with
    ``transform_module(self, mod, ctx)``; see :func:`prim_func_pass`."""
    return _decorator(ModulePass, "transform_module", pass_func, opt_level, name, required)
