"""Out-of-bounds accesses: located compile-time errors when provable, bounds-checked
builds on c and llvm, and the python reference reporting the same located error."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from conftest import SAMPLES_DIR, available_targets

import tilelang
from tilelang.bounds import find_out_of_bounds
from tilelang.errors import OutOfBoundsError, ScheduleError
from tilelang.transform import BoundsWarning, PassContext

CHECKED = available_targets("python", "c", "llvm")


def _write(tmp_path, text: str, name="prog.tir"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def _main(mod):
    return next(iter(mod.functions.values())) if hasattr(mod, "functions") else mod


# ---------------------------------------------------------------- static check

WRITE_PAST_END = """
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in range(5):
        A[i] = T.float32(1)
"""


def test_constant_loop_past_the_end_is_a_located_error(tmp_path):
    path = _write(tmp_path, WRITE_PAST_END)
    with pytest.raises(OutOfBoundsError) as info:
        tilelang.build(tilelang.parse_file(path), target="c")
    lines = str(info.value).splitlines()
    assert lines[:4] == [
        "error: out-of-bounds access A[i] in function 'f': index i takes values in [0, 4], "
        "but A has shape (4,)",
        f" --> {path}:4:9",
        "  |",
        "4 |         A[i] = T.float32(1)",
    ]
    assert lines[4].startswith("  |         ^^^^^^")


@pytest.mark.parametrize(
    "loops, access, shape, message",
    [
        ("for i in range(n + 1):", "A[i] = T.float32(0)", "(n,)", "index i takes values in [0, n]"),
        ("for i in range(n):", "A[i + 1] = T.float32(0)", "(n,)", "index i + 1 takes values in [1, n]"),
        ("for i in range(n):", "A[i - 1] = T.float32(0)", "(n,)", "index i - 1 takes values in [-1, n - 2]"),
        ("for i, j in T.grid(8, 8):", "B[i, j + 1] = T.float32(0)", "(8, 8)",
         "index 1 (j + 1) takes values in [1, 8]"),
        ("for i in range(16):", "A[i // 2 + 8] = T.float32(0)", "(16,)", "index i // 2 + 8 takes values in [8, 15]"),
    ],
)  # fmt: skip
def test_provable_cases(loops, access, shape, message):
    buffer = access[0]
    text = f"""
@T.prim_func
def f(a: T.handle):
    n = T.int32()
    {buffer} = T.match_buffer(a, {shape}, "float32")
    {loops}
        {access}
"""
    issues = find_out_of_bounds(_main(tilelang.parse(text)))
    if "[8, 15]" in message:  # inside: i // 2 + 8 <= 15
        assert issues == []
        return
    assert len(issues) == 1 and issues[0].provable
    assert message in issues[0].message()


def test_guards_and_predicates_narrow_the_index():
    text = """
@T.prim_func
def f(A: T.Buffer((14,), "float32"), B: T.Buffer((16,), "float32")):
    for i0, i1 in T.grid(4, 4):
        with T.block("b"):
            vi = T.axis.spatial(14, i0 * 4 + i1)
            T.where(i0 * 4 + i1 < 14)
            A[vi] = T.float32(0)
    for i in range(16):
        if i < 15:
            B[i + 1] = T.float32(0)
        if i >= 1:
            B[i - 1] = T.float32(0)
    for i in range(20):
        B[T.min(i, 15)] = T.if_then_else(i < 14, A[i], T.float32(0))
"""
    assert find_out_of_bounds(_main(tilelang.parse(text)), possible=True) == []


def test_possible_only_with_symbolic_sizes_warns_when_asked():
    text = """
@T.prim_func
def f(a: T.handle, b: T.handle):
    n = T.int32()
    m = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (m,), "float32")
    for i in range(m):
        B[i] = A[i]
"""
    mod = tilelang.parse(text)
    assert find_out_of_bounds(_main(mod)) == []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tilelang.lower(mod)
        assert caught == []
        with PassContext(config={"tl.warn_bounds": True}):
            tilelang.lower(mod)
    (warning,) = [w for w in caught if w.category is BoundsWarning]
    assert str(warning.message).startswith(
        "warning: possibly out-of-bounds access A[i] in function 'f': index i ranges over "
        "[0, m - 1], not shown to be inside A's shape (n,)"
    )


BLOCKS_PAST_END = """
@T.prim_func
def f(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 17):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj - 1]
"""


def test_oob_found_after_split_and_fuse():
    mod = tilelang.parse(BLOCKS_PAST_END)
    sch = tilelang.Schedule(mod)
    i, j = sch.get_loops(sch.get_block("B"))
    fused = sch.fuse(i, j)
    sch.split(fused, factors=[None, 8])
    with pytest.raises(
        OutOfBoundsError,
        match=r"access A\[vi, vj - 1\].*index 1 \(vj - 1\) takes values in \[-1, 15\]",
    ):
        tilelang.lower(sch.mod)


WINDOW = """
@T.prim_func
def f(A: T.Buffer((16,), "float32"), C: T.Buffer((15,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(16):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(2)
    for i in range(15):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi] + B[vi + 1]
"""


def test_debug_schedule_never_accepts_an_out_of_bounds_result():
    """compute_at of B under a split of C's loop needs B[i0*4 : i0*4 + 5], which runs
    past B for the last i0 unless a bound predicate is added: in debug mode the result
    is in bounds or the primitive is refused, the schedule unchanged."""
    sch = tilelang.Schedule(tilelang.parse(WINDOW), debug_mask="all")
    (i,) = sch.get_loops(sch.get_block("C"))
    i0, _ = sch.split(i, factors=[None, 4])
    before = sch.mod
    try:
        sch.compute_at(sch.get_block("B"), i0)
    except ScheduleError as exc:
        assert "out of bounds" in str(exc) and sch.mod is before
    assert [i.message() for i in find_out_of_bounds(_main(sch.mod)) if i.provable] == []


def test_debug_check_refuses_a_result_newly_out_of_bounds():
    from tilelang.schedule.errors import check_bounds_after

    good = _main(tilelang.parse(WINDOW))
    bad = _main(tilelang.parse(WINDOW.replace("range(15)", "range(16)")))
    check_bounds_after("split", "f", good, good)
    with pytest.raises(
        ScheduleError, match=r"split\(f\): the result would access a buffer out of bounds"
    ):
        check_bounds_after("split", "f", good, bad)


# ---------------------------------------------------------------- correct programs


@pytest.mark.parametrize("path", sorted(SAMPLES_DIR.glob("*.tir")), ids=lambda p: p.name)
def test_samples_have_no_bounds_issue(path):
    mod = tilelang.parse_file(path)
    for name, func in mod.functions.items():
        if hasattr(func, "buffer_map"):
            assert [i.message() for i in find_out_of_bounds(func, name) if i.provable] == []


# ---------------------------------------------------------------- run-time checks

SCATTER = """
@T.prim_func
def scatter(A: T.Buffer((4,), "float32"), idx: T.Buffer((4,), "int32"), B: T.Buffer((8,), "float32")):
    for i in range(4):
        B[idx[i]] = A[i]
"""

GATHER_2D = """
@T.prim_func
def gather(A: T.Buffer((4, 8), "float32"), idx: T.Buffer((6,), "int32"), B: T.Buffer((6,), "float32")):
    for i in T.parallel(6):
        B[i] = A[idx[i] // 8, idx[i] % 8 + 1]
"""


def _guarded_array(n: int, canary=7.0):
    """A view of ``n`` float32 elements inside a bigger array filled with canaries."""
    backing = np.full(n + 64, canary, dtype="float32")
    view = backing[32 : 32 + n]
    view[:] = 0
    return backing, view


@pytest.mark.parametrize("target", CHECKED)
def test_checked_build_stops_an_out_of_bounds_store(tmp_path, target):
    path = _write(tmp_path, SCATTER)
    lib = tilelang.build(tilelang.parse_file(path), target=target, bounds_check=True)
    a = np.arange(1, 5, dtype="float32")
    backing, b = _guarded_array(8)
    lib["scatter"](a, np.array([0, 2, 4, 6], "int32"), b)
    np.testing.assert_array_equal(b, [1, 0, 2, 0, 3, 0, 4, 0])
    for bad, shown in (([1, 3, 8, 5], "8"), ([1, -3, 2, 5], "-3"), ([1, 9000, 2, 5], "9000")):
        backing, b = _guarded_array(8)
        with pytest.raises(OutOfBoundsError) as info:
            lib["scatter"](a, np.array(bad, "int32"), b)
        assert str(info.value).splitlines()[:2] == [
            "error: out-of-bounds access in function 'scatter': B[idx[i]] reached "
            f"B[{shown}], but B has shape (8,)",
            f" --> {path}:4:9",
        ]
        assert (backing[:32] == 7).all() and (backing[40:] == 7).all(), "wrote past B"


@pytest.mark.parametrize("target", CHECKED)
def test_checked_build_reports_a_2d_load_in_a_parallel_loop(target):
    lib = tilelang.build(tilelang.parse(GATHER_2D), target=target, bounds_check=True)
    a = np.random.rand(4, 8).astype("float32")
    b = np.zeros(6, "float32")
    good = np.array([0, 5, 9, 14, 20, 30], "int32")
    lib["gather"](a, good, b)
    np.testing.assert_array_equal(b, a[good // 8, good % 8 + 1])
    with pytest.raises(OutOfBoundsError, match=r"reached A\[0, 8\], but A has shape \(4, 8\)"):
        lib["gather"](a, np.array([0, 5, 7, 14, 20, 30], "int32"), b)


def test_messages_agree_across_backends():
    messages = set()
    for target in CHECKED:
        lib = tilelang.build(tilelang.parse(SCATTER), target=target, bounds_check=True)
        with pytest.raises(OutOfBoundsError) as info:
            lib["scatter"](
                np.zeros(4, "float32"), np.array([0, 1, 2, 12], "int32"), np.zeros(8, "float32")
            )
        messages.add(str(info.value))
    assert len(messages) == 1


def test_python_reference_checks_by_default():
    lib = tilelang.build(tilelang.parse(SCATTER), target="python")
    with pytest.raises(OutOfBoundsError, match=r"B\[-1\]"):
        lib["scatter"](
            np.zeros(4, "float32"), np.array([0, 1, 2, -1], "int32"), np.zeros(8, "float32")
        )


def test_tvm_config_spelling_enables_checks():
    with PassContext(config={"tir.instrument_bound_checkers": True}):
        lib = tilelang.build(tilelang.parse(SCATTER), target="c")
    with pytest.raises(OutOfBoundsError):
        lib["scatter"](
            np.zeros(4, "float32"), np.array([0, 1, 2, 8], "int32"), np.zeros(8, "float32")
        )


def test_affine_accesses_cost_no_check():
    lowered = tilelang.lower(tilelang.parse_file(SAMPLES_DIR / "mm_relu.tir"), bounds_check=True)
    assert "bounds_error" not in lowered.script()


@pytest.mark.parametrize("target", CHECKED)
def test_guarded_load_is_checked_only_when_it_runs(target):
    text = """
@T.prim_func
def f(A: T.Buffer((4,), "float32"), idx: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")):
    for i in T.vectorized(8):
        B[i] = T.if_then_else(idx[i] < 4, A[idx[i]], T.float32(-1))
"""
    lib = tilelang.build(tilelang.parse(text), target=target, bounds_check=True)
    a = np.arange(4, dtype="float32")
    b = np.zeros(8, "float32")
    lib["f"](a, np.array([0, 9, 1, 100, 2, 3, 4, 5], "int32"), b)
    np.testing.assert_array_equal(b, [0, -1, 1, -1, 2, 3, -1, -1])
    with pytest.raises(OutOfBoundsError, match=r"A\[-2\]"):
        lib["f"](a, np.array([0, -2, 1, 1, 2, 3, 4, 5], "int32"), b)


def test_bounds_check_needs_an_unlowered_module_and_a_checking_backend():
    lowered = tilelang.lower(tilelang.parse(SCATTER))
    with pytest.raises(tilelang.errors.BuildError, match="before lowering"):
        tilelang.build(lowered, target="c", bounds_check=True)
    with pytest.raises(tilelang.errors.BuildError, match="not supported by the 'cuda'"):
        tilelang.build(tilelang.parse(SCATTER), target="cuda", bounds_check=True)


# ---------------------------------------------------------------- tilec


def _tilec(*args):
    return subprocess.run(
        [sys.executable, "-m", "tilelang.cli", *map(str, args)], capture_output=True, text=True
    )


def test_tilec_reports_a_provable_error_with_status_1(tmp_path):
    path = _write(tmp_path, WRITE_PAST_END)
    done = _tilec(path, "--run")
    assert done.returncode == 1
    assert done.stderr.startswith("error: out-of-bounds access A[i] in function 'f'")
    assert f" --> {path}:4:9" in done.stderr and "Traceback" not in done.stderr


def test_tilec_check_reports_a_runtime_error_from_the_reference(tmp_path):
    path = _write(tmp_path, SCATTER)  # random int32 inputs index far past B
    done = _tilec(path, "--run", "--check")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "error: out-of-bounds access in function 'scatter': B[idx[i]] reached B[" in done.stderr
    assert "internal compiler error" not in done.stderr


def test_tilec_bounds_check_and_warn_bounds(tmp_path):
    path = _write(tmp_path, SCATTER)
    done = _tilec(path, "--run", "--target", "c", "--bounds-check")
    assert done.returncode == 1 and "reached B[" in done.stderr
    sym = _write(tmp_path, """
@T.prim_func
def f(a: T.handle, b: T.handle):
    n = T.int32()
    m = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (m,), "float32")
    for i in range(m):
        B[i] = A[i]
""", "sym.tir")  # fmt: skip
    quiet = _tilec(sym, "--emit", "c")
    assert quiet.returncode == 0 and quiet.stderr == ""
    loud = _tilec(sym, "--emit", "c", "--warn-bounds")
    assert loud.returncode == 0
    assert loud.stderr.startswith("warning: possibly out-of-bounds access A[i]")


def test_oob_found_after_compute_at():
    """C reads B[vi + 1] up to B[16]: still provably out of bounds once B is computed
    under C's loop."""
    sch = tilelang.Schedule(tilelang.parse(WINDOW.replace("range(15)", "range(16)")
                                           .replace("(15,)", "(16,)")))  # fmt: skip
    (i,) = sch.get_loops(sch.get_block("C"))
    try:
        sch.compute_at(sch.get_block("B"), i)
    except ScheduleError:
        pytest.skip("compute_at refuses this consumer")
    with pytest.raises(OutOfBoundsError, match=r"out-of-bounds access [AB]\["):
        tilelang.lower(sch.mod)
