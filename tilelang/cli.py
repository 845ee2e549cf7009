"""``tilec``: the command-line driver.

    tilec FILE.tir --emit tir        print the canonical form of the program
    tilec FILE.tir --emit c          lower and print the generated C
    tilec FILE.tir --run --check     build, run on random inputs, time, compare
    tilec FILE.tir --emit trace      the default CPU schedule (tilelang.cli_schedule)
    tilec FILE.tir --tune 64 --database DIR   tune, then emit the best schedule

The compilation options (``--target``, ``--func``, ``-O``, ``--schedule``, pass
options) are in :mod:`tilelang.cli_backend`, running and checking in
:mod:`tilelang.cli_run`, tuning in :mod:`tilelang.tune.cli` (``--tune`` schedules the
program before it is emitted, run or checked). The whole command runs inside the
PassContext the options ask for, so every emitter that lowers honours ``-O`` and the
pass options.

Exit status: 0 on success, 1 for a bad program (the diagnostic goes to stderr; a user
never sees a Python traceback), 2 for bad usage.

Each output kind is an *emitter*: a function ``(module, args) -> str`` registered in
:data:`EMITTERS` under its ``--emit`` name. Adding ``--emit lowered`` or ``--emit c``
means adding one function and one entry; options they need (``--target``...) are added
to :func:`make_argument_parser`. Heavy modules are imported inside the emitters, so
startup stays cheap.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable

from tilelang import cli_backend, cli_run, cli_schedule
from tilelang.tune import cli as tune_cli


def emit_tir(module, args) -> str:
    """The canonical TVMScript text of the parsed module."""
    from tilelang.ir.printer import script

    return script(module)


def _cuda_emitter(name: str) -> Callable:
    """The CUDA backend's emitter ``name`` (imported when used)."""

    def emit(module, args):
        from tilelang.backends.cuda import emit as cuda_emit

        return getattr(cuda_emit, name)(module, args)

    return emit


#: ``--emit`` name -> (emitter, one-line help); an emitter returning bytes writes a binary
EMITTERS: dict[str, tuple[Callable, str]] = {
    "tir": (emit_tir, "the canonical .tir form of the program"),
    "cuda": (_cuda_emitter("emit_cuda"), "CUDA C++ source (nvcc not needed)"),
    "ptx": (_cuda_emitter("emit_ptx"), "PTX made by nvcc"),
    "cubin": (_cuda_emitter("emit_cubin"), "a cubin made by nvcc (needs -o FILE)"),
    **cli_backend.EMITTERS,
    **cli_schedule.EMITTERS,
}


def make_argument_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tilec",
        description="Compile a .tir tensor program.",
        epilog="emitters: " + "; ".join(f"{k}: {h}" for k, (_, h) in EMITTERS.items()),
    )
    parser.add_argument("file", help="the .tir program to read")
    parser.add_argument(
        "--emit",
        choices=sorted(EMITTERS),
        help="what to print (default: tir, or nothing with --run/--check)",
    )
    parser.add_argument("-o", "--output", help="write the output to this file, not stdout")
    cli_backend.add_backend_arguments(parser)
    cli_run.add_run_arguments(parser)
    cli_schedule.add_arguments(parser)
    tune_cli.add_arguments(parser)
    return parser


def run(args) -> int:
    """Parse ``args.file``, prepare, emit, run; returns the exit status. Warnings about
    the program (``--warn-bounds``) go to stderr after the run."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status = _run(args)
    shown = set()
    for warning in caught:
        if warning.category.__name__ == "BoundsWarning":  # a located diagnostic
            if str(warning.message) not in shown:  # lowering checks again: say it once
                shown.add(str(warning.message))
                print(warning.message, file=sys.stderr)
        else:
            warnings.showwarning(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return status


def _run(args) -> int:
    from tilelang.errors import TileLangError
    from tilelang.parser import parse_file

    try:
        cli_backend.check_pass_names(args)
        module = parse_file(args.file)
        with cli_backend.pass_context(args):
            original = cli_backend.select_function(module, args)
            module = cli_backend.apply_schedule(original, args)
            if args.warn_bounds:
                cli_backend.check_bounds(module)
            if args.tune is not None:
                module = tune_cli.tune_module(module, args)
            module = cli_schedule.apply_rules(module, args)
            if args.emit or not (args.run or args.check):
                emitter, _ = EMITTERS[args.emit or "tir"]
                status = write_output(emitter(module, args), args)
                if status:
                    return status
            if args.run or args.check:
                return cli_run.run_and_check(original, module, args, sys.stdout)
    except cli_backend.UsageError as exc:
        print(f"tilec: error: {exc}", file=sys.stderr)
        return 2
    except TileLangError as exc:
        message = str(exc)
        if not message.startswith("error"):  # rendered diagnostics carry it already
            message = f"error: {message}"
        print(message, file=sys.stderr)
        return 1
    except RecursionError:
        print(f"error: {args.file}: the program is nested too deeply", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug in tilec; still no traceback for the user
        print(f"error: internal compiler error ({type(exc).__name__}: {exc})", file=sys.stderr)
        print("note: please report this with the input file", file=sys.stderr)
        return 1
    return 0


def write_output(text, args) -> int:
    """Writes an emitter's result to ``-o`` or stdout; returns the exit status."""
    if isinstance(text, bytes):  # a binary (--emit cubin, so): written as it is
        if not args.output:
            print(
                f"tilec: error: --emit {args.emit} writes a binary; give -o FILE", file=sys.stderr
            )
            return 2
        try:
            with open(args.output, "wb") as handle:
                handle.write(text)
        except OSError as exc:
            print(f"error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        return 0
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as handle:
                handle.write(text.rstrip("\n") + "\n")
        except OSError as exc:
            print(f"error: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(text.rstrip("\n") + "\n")
    return 0


def main(argv=None) -> int:
    """Entry point of the ``tilec`` console script."""
    args = make_argument_parser().parse_args(argv)  # exits with 2 on bad usage
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
