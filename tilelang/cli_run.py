"""``tilec --run`` and ``--check``: run a function on seeded random inputs, time it,
and compare it with the reference backend.

    tilec FILE.tir --run [--shape n=64] [--target llvm]     build, run, print the time
    tilec FILE.tir --check [--shape n=64]                   ... and compare

Inputs: every buffer parameter gets random data of its dtype and shape (floats
uniform in [-1, 1), signed integers in [-64, 64), unsigned in [0, 64), bools
half true), drawn from a fixed seed so runs repeat. Symbolic sizes and scalar
parameters take their values from ``--shape NAME=INT``.

``--check`` runs the *unscheduled* program, lowered by the default pipeline, on the
reference backend (target ``"python"``) from the same inputs, and compares every
array afterwards: integers exactly, floats to a relative tolerance of 1e-5 (for
elements near zero, relative to the array's largest magnitude), bfloat16 (passed as
its uint16 bits) as floats to 2**-7, two units in its last place. So a wrong schedule,
a skipped pass or a backend bug all show up as a mismatch (exit status 1).
"""

from __future__ import annotations

import time

from tilelang.cli_backend import UsageError, lowered, target_of
from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir.functor import post_order_visit

RTOL = 1e-5
#: bfloat16 keeps 8 significant bits: two units in the last place
RTOL_BF16 = 2.0**-7
SEED = 0
#: a timed repeat lasts at least this long (seconds); slower calls are timed once
MIN_REPEAT_S = 0.02
SLOW_CALL_S = 0.25
#: loop iterations above which the note suggests --reference c
SLOW_REFERENCE_WORK = 5e7


def add_run_arguments(parser) -> None:
    """``--run``, ``--check``, ``--shape`` and ``--reference``."""
    from tilelang.cli_backend import parse_shape

    group = parser.add_argument_group("running")
    group.add_argument(
        "--run", action="store_true", help="run on seeded random inputs and print the time"
    )
    group.add_argument(
        "--check",
        action="store_true",
        help="also run the unscheduled program on the reference backend and compare",
    )
    group.add_argument(
        "--shape",
        type=parse_shape,
        action="append",
        default=[],
        metavar="NAME=INT",
        help="value of a symbolic size or scalar parameter (repeatable; m=8,n=4 works too)",
    )
    group.add_argument(
        "--reference",
        default="python",
        choices=("python", "c", "llvm"),
        help="backend --check compares with (default: python, the oracle)",
    )


def shape_values(args) -> dict[str, int]:
    """The ``--shape`` options merged into one dict."""
    merged: dict[str, int] = {}
    for item in args.shape:
        merged.update(item)
    return merged


def function_name(module, args) -> str:
    """The PrimFunc to run: ``--func``, the only one, or ``main``."""
    from tilelang.ir import PrimFunc

    names = [k for k, f in module.functions.items() if isinstance(f, PrimFunc)]
    if args.func:
        if args.func not in names:
            raise BuildError(
                f"--func {args.func}: not a PrimFunc of the module ({', '.join(names)})"
            )
        return args.func
    if len(names) == 1:
        return names[0]
    if "main" in names:
        return "main"
    raise UsageError(
        f"the module has several functions ({', '.join(names) or 'none runnable'}); "
        "choose one with --func"
    )


# ---------------------------------------------------------------- inputs


def free_sizes(func) -> dict[str, E.Var]:
    """Name -> variable of every value ``--shape`` must give: scalar parameters and
    the variables in the shapes and strides of buffer parameters."""
    wanted: dict[str, E.Var] = {}
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            wanted.setdefault(param.name, param)
            continue
        for expr in (*buffer.shape, *buffer.strides):
            post_order_visit(
                expr, lambda n: wanted.setdefault(n.name, n) if isinstance(n, E.Var) else None
            )
    return wanted


def bind_sizes(func, given: dict[str, int]) -> dict:
    """Var -> value for :func:`free_sizes`, from ``--shape``; a missing or unknown
    name is a :class:`UsageError` naming it."""
    wanted = free_sizes(func)
    unknown = sorted(set(given) - set(wanted))
    if unknown:
        have = ", ".join(sorted(wanted)) or "none"
        raise UsageError(
            f"--shape {unknown[0]}: the function has no size or scalar parameter "
            f"{unknown[0]} (it has: {have})"
        )
    missing = [name for name in wanted if name not in given]
    if missing:
        shown = " ".join(f"--shape {n}=64" for n in missing)
        raise UsageError(
            f"running the function needs a value for {', '.join(missing)} "
            f"(symbolic size or scalar parameter); give it, e.g. {shown}"
        )
    return {var: given[name] for name, var in wanted.items()}


def _evaluate(expr, values, what):
    from tilelang.runtime.args import eval_int

    value = eval_int(expr, values)
    if value is None:
        raise BuildError(f"cannot work out {what} from the --shape values")
    return value


def make_arguments(func, values: dict, seed: int = SEED) -> list:
    """Seeded random arguments for ``func`` (arrays for buffers, ints for scalars)."""
    import numpy as np  # lazily: tilec --emit tir must start fast

    rng = np.random.default_rng(seed)
    out = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            out.append(values[param])
            continue
        shape = tuple(_evaluate(s, values, f"the shape of {buffer.name}") for s in buffer.shape)
        out.append(_strided(_random(rng, buffer, shape), buffer, values))
    return out


def _random(rng, buffer, shape):
    import numpy as np  # lazily: tilec --emit tir must start fast

    if buffer.dtype.is_bfloat16():  # passed as the bits (uint16) of bfloat16 values
        from tilelang.ir import bfloat16

        return bfloat16.to_bits(rng.uniform(-1, 1, shape).astype(np.float32))
    try:
        dtype = np.dtype(str(buffer.dtype))
    except TypeError:
        raise BuildError(f"cannot make {buffer.dtype} inputs for {buffer.name}") from None
    if dtype.kind == "f":
        return rng.uniform(-1, 1, shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        low = -64 if dtype.kind == "i" else 0
        return rng.integers(low, 64, shape).astype(dtype)
    raise BuildError(f"cannot make {buffer.dtype} inputs for {buffer.name}")


def _strided(array, buffer, values):
    """``array`` laid out with the buffer's strides (when it declares any)."""
    import numpy as np  # lazily: tilec --emit tir must start fast

    if not buffer.strides:
        return array
    strides = [_evaluate(s, values, f"the strides of {buffer.name}") for s in buffer.strides]
    dense = [int(np.prod(array.shape[d + 1 :])) for d in range(array.ndim)]
    if strides == dense or array.size == 0:
        return array
    span = 1 + sum((n - 1) * s for n, s in zip(array.shape, strides))
    base = np.zeros(span, array.dtype)
    view = np.lib.stride_tricks.as_strided(
        base, array.shape, tuple(s * array.itemsize for s in strides)
    )
    view[...] = array
    return view


# ---------------------------------------------------------------- running


def run_and_check(original, scheduled, args, out) -> int:
    """Builds ``scheduled`` for ``--target``, runs and times it; with ``--check``
    compares with ``original`` on the reference backend. Returns the exit status."""
    import tilelang

    name = function_name(scheduled, args)
    func = scheduled[name]
    values = bind_sizes(func, shape_values(args))
    target = target_of(args)
    lib = tilelang.build(lowered(scheduled, args), target=target, allow_extern=args.allow_extern)
    expected = _reference_run(original, name, args, out) if args.check else None
    results = make_arguments(func, values)  # each run gets fresh copies of one draw
    start = time.perf_counter()
    lib[name](*results)
    once = time.perf_counter() - start
    out.write(_timing(lib, name, make_arguments(func, values), once, target.kind) + "\n")
    if not args.check:
        return 0
    report, ok = compare(func, results, expected, args.reference)
    out.write(report + "\n")
    return 0 if ok else 1


def _reference_run(original, name, args, out):
    """The arguments after running the unscheduled ``original`` on the reference.
    It runs first: an out-of-bounds access is reported by the reference (which checks
    every access) before native code could write past a buffer."""
    import tilelang

    reference = args.reference
    if name not in original.functions:
        raise BuildError(f"the unscheduled module has no function {name!r} to check against")
    values = bind_sizes(original[name], shape_values(args))
    work = loop_work(original[name], values)
    if reference == "python" and work > SLOW_REFERENCE_WORK:
        out.write(
            f"note: the python reference runs ~{work:.0e} loop iterations; "
            "--reference c or a smaller --shape is faster\n"
        )
    from tilelang.transform import PassContext

    with PassContext():  # the oracle: the default pipeline, whatever the options say
        checked = reference == "python" or args.bounds_check
        ref_lib = tilelang.build(
            lowered(original, args, bounds_check=checked), target=reference,
            allow_extern=args.allow_extern,
        )  # fmt: skip
    expected = make_arguments(original[name], values)
    ref_lib[name](*expected)
    return expected


def _timing(lib, name, arguments, once, target) -> str:
    if once >= SLOW_CALL_S:
        return f"{name}: {once * 1e3:.3f} ms per call (target {target}, 1 call)"
    number = max(1, int(MIN_REPEAT_S / max(once, 1e-7)))
    result = lib.time_evaluator(name, number=number, repeat=3)(*arguments)
    return (
        f"{name}: {result.mean * 1e3:.4f} ms per call (target {target}, mean of 3 x {number} calls)"
    )


def compare(func, got, expected, reference) -> tuple[str, bool]:
    """A report comparing the arrays of two runs, and whether they agree."""
    lines, bad = [], 0
    for param, g, w in zip(func.params, got, expected):
        buffer = func.buffer_map.get(param)
        if buffer is None:
            continue
        if buffer.dtype.is_bfloat16():
            from tilelang.ir import bfloat16

            g, w = bfloat16.from_bits(g), bfloat16.from_bits(w)
        problem = _difference(g, w, RTOL_BF16 if buffer.dtype.is_bfloat16() else RTOL)
        if problem:
            bad += 1
            lines.append(f"  {buffer.name}: {problem}")
    arrays = sum(1 for p in func.params if p in func.buffer_map)
    if not bad:
        plural = "the array matches" if arrays == 1 else f"all {arrays} arrays match"
        return f"check: {plural} the {reference} reference", True
    head = f"check: MISMATCH: {bad} of {arrays} arrays differ from the {reference} reference"
    return "\n".join([head, *lines]), False


def _difference(got, want, rtol=RTOL) -> str | None:
    import numpy as np  # lazily: tilec --emit tir must start fast

    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.kind == "f":
        finite = np.abs(want[np.isfinite(want)])
        scale = float(finite.max()) if finite.size else 0.0
        close = np.isclose(got, want, rtol=rtol, atol=rtol * scale, equal_nan=True)
    else:
        close = got == want
    wrong = np.argwhere(~close)
    if not len(wrong):
        return None
    first = tuple(int(i) for i in wrong[0])
    text = (
        f"{len(wrong)} of {want.size} elements differ; first at {list(first)}: "
        f"got {_show(got[first])}, expected {_show(want[first])}"
    )
    if got.dtype.kind == "f":
        error = np.abs(got.astype(np.float64) - want.astype(np.float64))
        text += f"; max abs error {np.nanmax(error):.3g}"
    return text


def _show(value) -> str:
    value = value.item()
    return f"{value:.7g}" if isinstance(value, float) else repr(value)


def loop_work(func, values) -> float:
    """Iterations of the innermost statements, with loop extents evaluated (a guess)."""
    from tilelang.ir import stmt as S
    from tilelang.runtime.args import eval_int
    from tilelang.schedule.state import stmt_children

    total, stack = 0.0, [(func.body, 1.0)]
    while stack:
        node, scale = stack.pop()
        if isinstance(node, S.For):
            scale *= eval_int(node.extent, values) or 1
        children = stmt_children(node)
        if not children:
            total += scale
        stack.extend((child, scale) for child in children)
    return total
