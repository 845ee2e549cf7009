"""``tilec FILE.tir --tune N --database DIR``: tuning from the command line.

The scheduled program then goes to the chosen ``--emit`` (by default its canonical
``.tir`` form, which is replayable and can be built like any other program). A graph
module (one with ``@R.function``s) is tuned as a whole model: its distinct tensor
functions share the N trials (:func:`tilelang.tune.tune_relax`) and each is replaced
by its best schedule.
"""

from __future__ import annotations

import sys


def add_arguments(parser) -> None:
    """The tuning options of ``tilec``."""
    group = parser.add_argument_group("tuning")
    group.add_argument("--tune", type=int, metavar="N", help="tune with N trials, then emit")
    group.add_argument("--database", metavar="DIR", help="tuning work dir (default: a temp dir)")
    group.add_argument(
        "--tune-target", help="target to tune for (default: tilec's --target, else llvm)"
    )
    group.add_argument("--space", default="auto", help="search space (auto: the generic one)")
    group.add_argument("--plot", metavar="PNG", help="save the best-so-far curve (matplotlib)")


def tune_module(module, args):
    """``module`` scheduled by the best of ``args.tune`` trials (progress on stderr)."""
    from tilelang.errors import ArgumentError
    from tilelang.tune import compile_tir, tune_tir

    if args.tune < 1:
        raise ArgumentError(f"--tune needs a positive number of trials, not {args.tune}")
    if args.space != "auto":
        raise ArgumentError("--space: only 'auto' can be named on the command line")
    target = args.tune_target or getattr(args, "target", None) or "llvm"
    if _is_graph_module(module):
        from tilelang.tune.tune_model import apply_best, tune_relax

        result = tune_relax(module, None, target, args.database, args.tune,
                            plot=args.plot, stream=sys.stderr)  # fmt: skip
        return apply_best(result.database, module, target)
    db = tune_tir(module, target, space="auto", max_trials=args.tune,
                  work_dir=args.database, plot=args.plot, stream=sys.stderr)  # fmt: skip
    return compile_tir(db, module, target)


def _is_graph_module(module) -> bool:
    from tilelang.relax.expr import Function

    return any(isinstance(f, Function) for f in module.functions.values())
