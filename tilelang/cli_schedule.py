"""``tilec``'s default schedule: the CPU rules of :mod:`tilelang.schedule.rules` applied
to every function the program does not schedule itself, before it is lowered, built or
run for the c or llvm target; for cuda (``--target cuda``, ``--emit cuda/ptx/cubin``)
the GPU rules of :mod:`tilelang.schedule.rules.gpu`.

    tilec FILE.tir --emit c                    the C of the rules' schedule
    tilec FILE.tir --emit trace                the primitives the rules chose
    tilec FILE.tir --run --no-auto-schedule    the program exactly as written

``--emit tir`` prints the program as written. A ``--schedule`` file or ``--tune``
means the user schedules, and the rules stay out of the way.
"""

from __future__ import annotations

from tilelang.cli_backend import target_of

# Emitters whose output depends on the schedule and the c/llvm code it becomes;
# None stands for --run/--check without --emit.
_SCHEDULED_EMITS = (None, "lowered", "c", "llvm", "asm", "obj", "so", "cuda", "ptx", "cubin")
_CUDA_EMITS = ("cuda", "ptx", "cubin")


def add_arguments(parser) -> None:
    """``--no-auto-schedule``."""
    parser.add_argument(
        "--no-auto-schedule",
        action="store_true",
        help="build unscheduled functions as written, without the default CPU schedule",
    )


def _rules_target(args):
    """The target whose rules apply: cuda for the CUDA emitters, c for ``--emit c``,
    else ``--target``."""
    target = target_of(args)
    if args.emit in _CUDA_EMITS and target.kind != "cuda":
        return target_of(args, "cuda")
    return target_of(args, "c") if args.emit == "c" else target


def _wanted(args) -> bool:
    if args.no_auto_schedule or args.schedule or args.tune is not None:
        return False
    return _rules_target(args).kind in ("c", "llvm", "cuda")


def default_schedule(module, target=None):
    """The rules' Schedule of ``module`` (imported when used): the GPU rules when
    ``target`` is cuda, else the CPU rules."""
    from tilelang.ir import IRModule, PrimFunc
    from tilelang.schedule.rules import default_schedule as rules

    prim_funcs = {k: f for k, f in module.functions.items() if isinstance(f, PrimFunc)}
    if len(prim_funcs) != len(module.functions):
        module = IRModule(prim_funcs)
    if target is not None and target.kind == "cuda":
        from tilelang.schedule.rules.gpu import default_gpu_schedule

        return default_gpu_schedule(module, target)
    return rules(module)


def apply_rules(module, args):
    """``module`` with the rules applied when the command builds c or llvm code."""
    if args.emit not in _SCHEDULED_EMITS or not _wanted(args):
        return module
    return default_schedule(module, _rules_target(args)).mod


def emit_trace(module, args) -> str:
    """The default schedule's trace, as replayable Python."""
    if args.no_auto_schedule or args.schedule or args.tune is not None:
        return "# the rules do not apply: the program is scheduled by the command line\n"
    return str(default_schedule(module, target_of(args)).trace) + "\n"


EMITTERS = {"trace": (emit_trace, "the default schedule the rules choose for --target, as a trace")}
