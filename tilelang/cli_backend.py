"""The backend half of ``tilec``: which function, which schedule, which passes, and
the emitters that lower and generate code.

    tilec FILE.tir [--func NAME] [--schedule sched.py] [--target c|python|llvm|cuda]
                   [-O0..-O3] [--disable-pass NAME] [--print-after NAME | --print-after-all]
                   [--emit lowered|python|c|so|llvm|asm|obj] [-o OUT]

* ``--func NAME`` keeps only that function of the module.
* ``--schedule sched.py`` runs ``def schedule(sch)`` from that file on a
  :class:`~tilelang.schedule.Schedule` of the module; it may return nothing (the
  schedule's module is used), a Schedule or an IRModule.
* ``-O`` sets the :class:`~tilelang.transform.PassContext` opt level and the native
  compiler's (``-opt-level`` of the ``c`` and ``llvm`` targets).
* ``--disable-pass`` adds to the context's disabled passes; ``--print-after NAME`` and
  ``--print-after-all`` attach the :class:`~tilelang.transform.PrintIR` instrument,
  which prints to standard error so that standard output stays the emitted artifact.

Every problem a user can cause raises a :class:`~tilelang.errors.TileLangError`, which
``tilec`` prints as a diagnostic (exit 1); option values that cannot be right (an
unknown pass name, a malformed ``--shape``) raise :class:`UsageError` (exit 2).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import traceback
from pathlib import Path

from tilelang.errors import BuildError, ScheduleError, TileLangError


class UsageError(Exception):
    """A command line that cannot be right whatever the program (exit status 2)."""


class ScheduleFileError(TileLangError):
    """The ``--schedule`` file failed (its own exception, located in the file)."""


# ---------------------------------------------------------------- options


def parse_shape(text: str) -> dict[str, int]:
    """``"n=64"`` or ``"m=8,n=4"`` -> ``{"n": 64}`` / ``{"m": 8, "n": 4}``."""
    sizes = {}
    for item in text.split(","):
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name.isidentifier():
            raise argparse.ArgumentTypeError(f"expected NAME=INT, got {item!r}")
        try:
            sizes[name] = int(value, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}: {value!r} is not an integer") from None
    return sizes


def parse_target(text: str) -> str:
    """A target spelling (``"c"``, ``"llvm -num-cores=1"``) checked by parsing it."""
    from tilelang.target import Target

    try:
        Target(text)
    except TileLangError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of this module (see the module docstring)."""
    group = parser.add_argument_group("compilation")
    group.add_argument(
        "--target",
        type=parse_target,  # a default of None: checking "llvm" would load the runtime
        help="backend to build and run with: llvm (default), c, python, cuda, with "
        "options as in 'llvm -num-cores=1'",
    )
    group.add_argument("--func", metavar="NAME", help="the function to emit and run")
    group.add_argument(
        "-O",
        dest="opt_level",
        type=int,
        choices=range(4),
        metavar="{0,1,2,3}",
        help="optimisation level of the passes and the native compiler (-O0 .. -O3)",
    )
    group.add_argument(
        "--disable-pass",
        action="append",
        default=[],
        metavar="NAME",
        help="do not run this lowering pass (repeatable)",
    )
    group.add_argument(
        "--print-after",
        action="append",
        default=[],
        metavar="NAME",
        help="print the IR after this pass to stderr (repeatable)",
    )
    group.add_argument(
        "--print-after-all", action="store_true", help="print the IR after every pass to stderr"
    )
    group.add_argument(
        "--bounds-check",
        action="store_true",
        help="check every buffer access at run time (c, llvm): an out-of-bounds index "
        "stops the call with an error naming the access",
    )
    group.add_argument(
        "--warn-bounds",
        action="store_true",
        help="also warn about accesses that may be out of bounds (symbolic sizes); "
        "provable ones are always errors",
    )
    group.add_argument(
        "--allow-extern",
        action="append",
        default=[],
        metavar="NAME",
        help="let T.call_extern run NAME although the program does not declare it "
        "(e.g. libc's system; repeatable)",
    )
    group.add_argument(
        "--schedule",
        metavar="FILE.py",
        help="apply def schedule(sch) from this Python file before building",
    )


def known_pass_names() -> set[str]:
    """Short names (``"Simplify"``) of the built-in lowering passes."""
    from tilelang.transform import phases

    return {p.info.name.rpartition(".")[2] for phase in phases() for p in phase}


def check_pass_names(args) -> None:
    """Unknown names in ``--disable-pass``/``--print-after`` are usage errors."""
    if not (args.disable_pass or args.print_after):
        return  # nothing to check: do not import the pass pipeline
    known = known_pass_names()
    for option in ("disable_pass", "print_after"):
        for name in getattr(args, option, ()):
            if name.rpartition(".")[2] not in known:
                flag = "--" + option.replace("_", "-")
                raise UsageError(
                    f"{flag}: unknown pass {name!r} (passes: {', '.join(sorted(known))})"
                )


def pass_context(args):
    """The PassContext the command line asks for (none when no option concerns passes,
    so that ``--emit tir`` never imports the pipeline)."""
    if not (args.print_after or args.print_after_all or args.disable_pass) and (
        args.opt_level is None and not args.bounds_check and not args.warn_bounds
    ):
        return contextlib.nullcontext()
    from tilelang.transform import PassContext, PrintIR

    instruments = []
    if args.print_after or args.print_after_all:
        instruments.append(
            PrintIR(
                print_after=args.print_after,
                print_after_all=args.print_after_all,
                file=sys.stderr,
            )
        )
    config = {
        "tir.instrument_bound_checkers": args.bounds_check,
        "tl.warn_bounds": args.warn_bounds,
    }
    options = {"disabled_pass": args.disable_pass, "instruments": instruments, "config": config}
    if args.opt_level is not None:
        options["opt_level"] = args.opt_level
    return PassContext(**options)


def target_of(args, spec: str | None = None):
    """The Target for ``--target`` (or ``spec``), with ``-O`` as its opt level."""
    from tilelang.target import Target

    target = Target(spec or args.target or "llvm")
    if args.opt_level is not None and target.kind in ("c", "llvm"):
        return Target(target, **{"opt-level": args.opt_level})
    return target


# ---------------------------------------------------------------- preparing the module


def select_function(module, args):
    """The module narrowed to ``--func`` (unchanged without it)."""
    from tilelang.ir import IRModule

    if not args.func:
        return module
    if args.func not in module.functions:
        known = ", ".join(sorted(module.functions)) or "none"
        raise BuildError(f"--func {args.func}: no such function (the module has: {known})")
    return IRModule({args.func: module[args.func]})


def apply_schedule(module, args):
    """The module after ``def schedule(sch)`` of ``--schedule`` (unchanged without it)."""
    if not args.schedule:
        return module
    from tilelang.ir import IRModule
    from tilelang.schedule import Schedule

    path = Path(args.schedule)
    namespace = _load_schedule_file(path)
    schedule = namespace.get("schedule")
    if not callable(schedule):
        raise ScheduleFileError(f"error: {path}: defines no function schedule(sch)")
    sch = Schedule(module)
    try:
        result = schedule(sch)
    except ScheduleError as exc:  # say which line of the schedule file failed
        raise ScheduleError(f"error: {exc}{_location(path, exc)}") from None
    except TileLangError:
        raise
    except Exception as exc:
        raise ScheduleFileError(_located(path, exc)) from None
    if isinstance(result, Schedule):
        return result.mod
    if isinstance(result, IRModule):
        return result
    return sch.mod


def _load_schedule_file(path: Path) -> dict:
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScheduleFileError(f"error: cannot read {path}: {exc}") from None
    namespace = {"__name__": "tilec_schedule", "__file__": str(path)}
    try:
        exec(compile(source, str(path), "exec"), namespace)
    except TileLangError:
        raise
    except SyntaxError as exc:
        raise ScheduleFileError(
            f"error: {exc.msg}\n --> {path}:{exc.lineno}:{exc.offset or 1}"
        ) from None
    except Exception as exc:
        raise ScheduleFileError(_located(path, exc)) from None
    return namespace


def _located(path: Path, exc: BaseException) -> str:
    """``error: <exception>`` pointing at the innermost line of ``path`` involved."""
    return f"error: {type(exc).__name__}: {exc}{_location(path, exc)}"


def _location(path: Path, exc: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
    if not frames:
        return f"\n --> {path}"
    line = f"\n   | {frames[-1].line}" if frames[-1].line else ""
    return f"\n --> {path}:{frames[-1].lineno}{line}"


# ---------------------------------------------------------------- emitters


def check_bounds(module) -> None:
    """``--warn-bounds``: the bounds check with warnings, whatever is emitted."""
    from tilelang.ir import PrimFunc
    from tilelang.transform.verify_bounds import verify_buffer_bounds

    for name, func in module.functions.items():
        if isinstance(func, PrimFunc):
            verify_buffer_bounds(func, name, warn=True)


def lowered(module, args, bounds_check: bool | None = None):
    """``tilelang.lower`` of the module's PrimFuncs (under the current PassContext,
    which ``tilec`` makes from the command line; ``bounds_check`` as for ``lower``)."""
    from tilelang.ir import IRModule, PrimFunc
    from tilelang.transform import lower

    prim_funcs = {k: f for k, f in module.functions.items() if isinstance(f, PrimFunc)}
    if not prim_funcs:
        raise BuildError("the module has no PrimFunc to lower")
    if len(prim_funcs) != len(module.functions):
        module = IRModule(prim_funcs)  # graph functions are built by relax, not lowered
    return lower(module, bounds_check=bounds_check)


def emit_lowered(module, args) -> str:
    """The lowered module as TVMScript (the backend contract, docs/lowered_ir.md)."""
    return lowered(module, args).script()


def emit_python(module, args) -> str:
    """The reference backend's NumPy source."""
    from tilelang.backends.python import codegen

    return codegen(lowered(module, args))


def emit_c(module, args) -> str:
    """The C backend's source (not compiled)."""
    from tilelang.backends.c import generate_c

    return generate_c(lowered(module, args), target_of(args, "c")).text


def _llvm_module(module, args, emit: str):
    """The LLVM backend's module of the lowered program (``--target llvm``)."""
    import tilelang

    kind = target_of(args).kind
    if kind != "llvm":
        raise UsageError(f"--emit {emit} needs --target llvm, not {kind}")
    return tilelang.build(
        lowered(module, args), target=target_of(args), allow_extern=args.allow_extern
    ).backend_module


def emit_llvm(module, args) -> str:
    """The optimised LLVM IR (``get_source("ll")``)."""
    return _llvm_module(module, args, "llvm").get_source("ll")


def emit_asm(module, args) -> str:
    """Assembly for the target CPU (``get_source("asm")``)."""
    return _llvm_module(module, args, "asm").get_source("asm")


def emit_obj(module, args) -> bytes:
    """An object file, as bytes for ``-o``."""
    if not args.output:
        raise UsageError("--emit obj writes a binary; give -o FILE")
    return _llvm_module(module, args, "obj").emit("obj")


def emit_so(module, args) -> bytes:
    """A shared library for ``--target`` (c or llvm), as bytes for ``-o``."""
    import tempfile

    import tilelang

    if not args.output:
        raise UsageError("--emit so writes a binary; give -o FILE")
    kind = target_of(args).kind
    if kind not in ("c", "llvm"):
        raise UsageError(f"--emit so needs --target c or llvm, not {kind}")
    lib = tilelang.build(
        lowered(module, args), target=target_of(args), allow_extern=args.allow_extern
    )
    with tempfile.TemporaryDirectory() as folder:
        return lib.export_library(Path(folder) / "module.so").read_bytes()


#: ``--emit`` name -> (emitter, one-line help), merged into tilec's table
EMITTERS = {
    "lowered": (emit_lowered, "the lowered IR (tilelang.lower)"),
    "python": (emit_python, "the reference backend's NumPy source"),
    "c": (emit_c, "the generated C source"),
    "so": (emit_so, "a shared library for --target c|llvm (needs -o FILE)"),
    "llvm": (emit_llvm, "the optimised LLVM IR (--target llvm)"),
    "asm": (emit_asm, "assembly for the target CPU (--target llvm)"),
    "obj": (emit_obj, "an object file (--target llvm; needs -o FILE)"),
}
