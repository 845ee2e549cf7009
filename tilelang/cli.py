"""``tilec``: the command-line driver.

    tilec FILE.tir --emit tir        print the canonical form of the program

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
from collections.abc import Callable


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
        default="tir",
        help="what to print (default: tir)",
    )
    parser.add_argument("-o", "--output", help="write the output to this file, not stdout")
    return parser


def run(args) -> int:
    """Parse ``args.file`` and emit; returns the exit status."""
    from tilelang.errors import TileLangError
    from tilelang.parser import parse_file

    try:
        module = parse_file(args.file)
        emitter, _ = EMITTERS[args.emit]
        text = emitter(module, args)
    except TileLangError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except RecursionError:
        print(f"error: {args.file}: the program is nested too deeply", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug in tilec; still no traceback for the user
        print(f"error: internal compiler error ({type(exc).__name__}: {exc})", file=sys.stderr)
        print("note: please report this with the input file", file=sys.stderr)
        return 1
    if isinstance(text, bytes):  # a binary (--emit cubin): written as it is
        if not args.output:
            print(f"error: --emit {args.emit} writes a binary; give -o FILE", file=sys.stderr)
            return 1
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
