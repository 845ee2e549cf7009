"""tilec's backend options: emitters whose output really runs, --run/--check
(including a planted wrong rewrite that --check must catch), pass options, and the
exit statuses (0 ok, 1 bad program, 2 bad usage; never a traceback).

The end-to-end cases run the real ``tilec`` entry point in a subprocess; option
details call :func:`tilelang.cli.main` in-process, which is the same code path
without the interpreter start-up."""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tilelang import cli
from tilelang.cli_backend import UsageError
from tilelang.cli_run import bind_sizes, compare, make_arguments
from tilelang.parser import parse_file

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
MM_RELU = str(SAMPLES / "mm_relu.tir")
WINDOW = str(SAMPLES / "window_sum.tir")
LINEAR0 = str(SAMPLES / "linear0.tir")


def tilec(*args, tmp_path):
    env = {**os.environ, "TILELANG_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "tilelang.cli", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)


def run_main(capsys, *args):
    """``(status, stdout, stderr)`` of tilec in-process; argparse's exit is a status."""
    try:
        status = cli.main([str(a) for a in args])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def window_sum(a):
    return a[:-3] + a[1:-2] + a[2:-1]


# ---------------------------------------------------------------- end to end


def test_readme_command_runs_and_checks(tmp_path):
    result = tilec(MM_RELU, "--run", "--check", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert re.fullmatch(r"mm_relu: [0-9.]+ ms per call \(target llvm, .*\)", lines[0])
    assert lines[1] == "check: all 3 arrays match the python reference"


WRONG_REWRITE = """
import tilelang

def schedule(sch):
    # a "rewrite" that changes the meaning: relu becomes min(x, 0)
    text = open({path!r}).read().replace("T.max(", "T.min(")
    return tilelang.parse(text)
"""


def test_check_catches_a_wrong_rewrite(tmp_path):
    sched = tmp_path / "wrong.py"
    sched.write_text(WRONG_REWRITE.format(path=MM_RELU))
    result = tilec(MM_RELU, "--check", "--target", "c", "--schedule", sched, tmp_path=tmp_path)
    assert result.returncode == 1
    assert "check: MISMATCH: 1 of 3 arrays differ from the python reference" in result.stdout
    assert re.search(r"  C: \d+ of 16384 elements differ; first at \[\d+, \d+\]", result.stdout)
    assert "Traceback" not in result.stderr


GOOD_SCHEDULE = """
def schedule(sch):
    block_Y = sch.get_block("Y", func_name="mm_relu")
    i, j, k = sch.get_loops(block_Y)
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(j0, k, j1)
    sch.reverse_compute_at(sch.get_block("C", "mm_relu"), j0)
    sch.decompose_reduction(block_Y, k)
"""


def test_schedule_file_is_applied(tmp_path):
    sched = tmp_path / "good.py"
    sched.write_text(GOOD_SCHEDULE)
    result = tilec(MM_RELU, "--schedule", sched, "--emit", "tir", "--check", tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert 'with T.block("Y_init")' in result.stdout
    assert "check: all 3 arrays match" in result.stdout


def test_emit_so_is_a_loadable_library(tmp_path):
    library = tmp_path / "window.so"
    result = tilec(WINDOW, "--emit", "so", "--target", "c", "-o", library, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    lib = ctypes.CDLL(str(library))
    a = np.random.default_rng(1).random(1027).astype("float32")
    b = np.zeros(1024, "float32")
    pointer = ctypes.POINTER(ctypes.c_float)
    lib.main_(a.ctypes.data_as(pointer), b.ctypes.data_as(pointer))
    np.testing.assert_allclose(b, window_sum(a), rtol=1e-6)


def test_exit_statuses_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.tir"
    bad.write_text(Path(WINDOW).read_text().replace("T.block(", "T.blok("))
    program = tilec(bad, "--run", tmp_path=tmp_path)
    assert program.returncode == 1
    assert program.stderr.startswith("error: ") and f"{bad}:" in program.stderr
    usage = tilec(WINDOW, "--emit", "nonsense", tmp_path=tmp_path)
    assert usage.returncode == 2 and "invalid choice" in usage.stderr
    for result in (program, usage):
        assert "Traceback" not in result.stderr


# ---------------------------------------------------------------- emitters


def test_emit_python_source_runs(capsys):
    status, out, _ = run_main(capsys, WINDOW, "--emit", "python")
    assert status == 0
    namespace = {}
    exec(compile(out, "emitted.py", "exec"), namespace)
    a = np.random.default_rng(2).random(1027).astype("float32")
    b = np.zeros(1024, "float32")
    namespace["main"](a, b)
    np.testing.assert_allclose(b, window_sum(a), rtol=1e-6)


def test_emit_lowered_and_c(capsys):
    status, out, _ = run_main(capsys, WINDOW, "--emit", "lowered")
    assert status == 0
    assert '"tl.lowered": True' in out and "T.block" not in out
    status, out, _ = run_main(capsys, WINDOW, "--emit", "c", "-O1")
    assert status == 0
    assert "void main_(const float* A, float* B)" in out


def test_emit_so_usage(capsys, tmp_path):
    status, _, err = run_main(capsys, WINDOW, "--emit", "so")
    assert status == 2 and "give -o FILE" in err
    out = tmp_path / "x.so"
    status, _, err = run_main(capsys, WINDOW, "--emit", "so", "--target", "python", "-o", out)
    assert status == 2 and "needs --target c or llvm" in err


# ---------------------------------------------------------------- passes


def test_print_after_all_and_print_after(capsys):
    status, out, err = run_main(capsys, WINDOW, "--emit", "c", "--print-after-all")
    assert status == 0
    headers = re.findall(r"^# IR after (\S+)$", err, re.M)
    assert headers[0] == "tir.VerifyWellFormed" and headers[-1] == "tir.BindArguments"
    assert "tir.FlattenBuffer" in headers
    assert out.startswith("#include")  # stdout stays the artifact
    status, _, err = run_main(capsys, WINDOW, "--emit", "c", "--print-after", "Simplify")
    assert re.findall(r"^# IR after (\S+)$", err, re.M) == ["tir.Simplify"] * 2


def test_disabled_required_pass_is_reported(capsys):
    status, _, err = run_main(
        capsys, MM_RELU, "--run", "--target", "c", "--disable-pass", "FlattenBuffer"
    )
    assert status == 1
    assert err.startswith("error: ") and "flat, one-index accesses" in err


def test_unknown_pass_and_opt_level_are_usage_errors(capsys):
    status, _, err = run_main(capsys, WINDOW, "--disable-pass", "NoSuchPass")
    assert status == 2 and "unknown pass 'NoSuchPass'" in err
    status, _, err = run_main(capsys, WINDOW, "--print-after", "Nope", "--emit", "c")
    assert status == 2 and "--print-after: unknown pass 'Nope'" in err
    status, _, _ = run_main(capsys, WINDOW, "-O4")
    assert status == 2


# ---------------------------------------------------------------- sizes and functions


def test_symbolic_sizes_from_shape(capsys):
    status, _, err = run_main(capsys, LINEAR0, "--run")
    assert status == 2
    assert "needs a value for m, n" in err and "--shape m=64" in err
    status, out, _ = run_main(capsys, LINEAR0, "--check", "--target", "c", "--shape", "m=24,n=8")
    assert status == 0, out
    assert "check: all 4 arrays match the python reference" in out
    status, _, err = run_main(capsys, LINEAR0, "--run", "--shape", "m=2", "--shape", "q=1")
    assert status == 2 and "no size or scalar parameter q (it has: m, n)" in err
    status, _, err = run_main(capsys, LINEAR0, "--run", "--shape", "m")
    assert status == 2 and "expected NAME=INT" in err


def test_func_selection(capsys):
    mlp = SAMPLES / "mlp.tir"
    status, _, err = run_main(capsys, mlp, "--run")
    assert status == 2 and "several functions (linear0, relu0); choose one with --func" in err
    status, _, err = run_main(capsys, mlp, "--run", "--func", "nope")
    assert status == 1 and "no such function (the module has: linear0, main, relu0)" in err
    status, out, _ = run_main(capsys, mlp, "--check", "--func", "relu0", "--shape", "n=16")
    assert status == 0 and "check: all 2 arrays match" in out


def test_schedule_file_errors_are_located(capsys, tmp_path):
    crash = tmp_path / "crash.py"
    crash.write_text("def schedule(sch):\n    return sch.get_loops('Y')[7]\n")
    status, _, err = run_main(capsys, MM_RELU, "--schedule", crash, "--run")
    assert status == 1
    assert err.startswith("error: IndexError") and f"{crash}:2" in err
    wrong = tmp_path / "wrong.py"
    wrong.write_text("def schedule(sch):\n    sch.parallel(sch.get_loops('Y')[2])\n")
    status, _, err = run_main(capsys, MM_RELU, "--schedule", wrong, "--run")
    assert status == 1 and "parallel(loop k)" in err and f"{wrong}:2" in err
    status, _, err = run_main(capsys, MM_RELU, "--schedule", tmp_path / "missing.py")
    assert status == 1 and "cannot read" in err


# ---------------------------------------------------------------- inputs and comparison


def test_inputs_are_seeded_and_typed():
    func = parse_file(SAMPLES / "strided_let.tir")["strided"]
    values = bind_sizes(func, {"chunk_n": 5, "chunk_c": 7})
    first, second = make_arguments(func, values), make_arguments(func, values)
    assert first[0].dtype == np.int32 and first[0].shape == (48,)
    assert first[1:] == [5, 7]
    np.testing.assert_array_equal(first[0], second[0])
    with pytest.raises(UsageError, match="chunk_c"):
        bind_sizes(func, {"chunk_n": 5})


def test_compare_tolerances():
    func = parse_file(WINDOW)["main"]
    want = [np.linspace(-1, 1, 1027, dtype="float32"), np.ones(1024, "float32")]
    close = [want[0] * np.float32(1 + 5e-6), want[1].copy()]
    report, ok = compare(func, close, want, "python")
    assert ok, report
    far = [want[0].copy(), want[1].copy()]
    far[1][10] += 1e-3
    report, ok = compare(func, far, want, "python")
    assert not ok
    assert "B: 1 of 1024 elements differ; first at [10]: got 1.001, expected 1" in report
    ints = parse_file(SAMPLES / "strided_let.tir")["strided"]
    a = np.arange(48, dtype="int32")
    b = a.copy()
    b[3] += 1
    assert compare(ints, [a, 5, 7], [a.copy(), 5, 7], "c")[1]
    assert not compare(ints, [b, 5, 7], [a, 5, 7], "c")[1]
