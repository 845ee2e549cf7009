"""tilec's LLVM formats (``--emit llvm|asm|obj|so`` with ``--target llvm``), tuning
(``--tune N --database DIR``), and its cold start (``--emit tir`` loads only the
parser, the IR and the printer)."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang import cli
from tilelang.ir import structural_equal

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
MM_RELU = str(SAMPLES / "mm_relu.tir")

TINY_MATMUL = """
@T.prim_func
def mm(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
       C: T.Buffer((16, 16), "float32")):
    for i, j, k in T.grid(16, 16, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def tilec(*args, tmp_path):
    env = {**os.environ, "TILELANG_CACHE_DIR": str(tmp_path / "cache")}
    command = [sys.executable, "-m", "tilelang.cli", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


def run_main(capsys, *args):
    try:
        status = cli.main([str(a) for a in args])
    except SystemExit as exc:
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def mm_relu_inputs():
    rng = np.random.default_rng(3)
    a = rng.random((128, 128), dtype=np.float32)
    b = rng.random((128, 128), dtype=np.float32) - 0.5
    return a, b, np.zeros((128, 128), "float32")


def call_mm_relu(library: Path) -> None:
    """Calls ``mm_relu`` of a shared library built from tilec's output."""
    a, b, c = mm_relu_inputs()
    pointer = ctypes.POINTER(ctypes.c_float)
    lib = ctypes.CDLL(str(library))
    lib.mm_relu(*(x.ctypes.data_as(pointer) for x in (a, b, c)))
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------- LLVM formats


def test_emit_llvm_is_verified_ir_of_the_function(capsys):
    import llvmlite.binding as llvm

    status, out, _ = run_main(capsys, MM_RELU, "--emit", "llvm", "--target", "llvm")
    assert status == 0
    module = llvm.parse_assembly(out)
    module.verify()
    assert "mm_relu" in [f.name for f in module.functions if not f.is_declaration]


def test_emit_asm_holds_the_function_label(capsys):
    status, out, _ = run_main(capsys, MM_RELU, "--emit", "asm")
    assert status == 0
    assert any(line.startswith("mm_relu:") for line in out.splitlines())


def test_emit_obj_links_and_runs(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to link the object")
    obj = tmp_path / "mm_relu.o"
    result = tilec(MM_RELU, "--emit", "obj", "--target", "llvm", "-o", obj, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert obj.read_bytes()[:4] == b"\x7fELF"
    library = tmp_path / "mm_relu.so"
    subprocess.run([cc, "-shared", "-o", str(library), str(obj)], check=True)
    call_mm_relu(library)


def test_emit_so_with_llvm_runs(tmp_path):
    library = tmp_path / "mm_relu_llvm.so"
    result = tilec(MM_RELU, "--emit", "so", "--target", "llvm", "-o", library, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    call_mm_relu(library)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--emit", "obj"], "--emit obj writes a binary; give -o FILE"),
        (["--emit", "llvm", "--target", "c"], "--emit llvm needs --target llvm, not c"),
        (["--emit", "asm", "--target", "python"], "--emit asm needs --target llvm, not python"),
    ],
)
def test_llvm_formats_usage_errors(capsys, args, message):
    status, out, err = run_main(capsys, MM_RELU, *args)
    assert status == 2 and out == ""
    assert err.strip() == f"tilec: error: {message}"


# ---------------------------------------------------------------- tuning


def test_tune_writes_the_database_and_emits_a_working_schedule(tmp_path):
    program = tmp_path / "mm.tir"
    program.write_text(TINY_MATMUL)
    database = tmp_path / "db"
    result = tilec(program, "--tune", 2, "--database", database, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in (database / "database.jsonl").read_text().splitlines()]
    assert len(records) == 2
    assert "2/2 trials" in result.stderr  # progress goes to stderr, the program to stdout
    tuned = tilelang.parse(result.stdout)
    assert not structural_equal(tuned, tilelang.parse(TINY_MATMUL))
    a = np.random.default_rng(4).random((16, 16), dtype=np.float32)
    b = np.random.default_rng(5).random((16, 16), dtype=np.float32)
    c = np.zeros((16, 16), "float32")
    tilelang.build(tuned, target="python")["mm"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)
    # a second run finds its trials in the database and checks the tuned program
    again = tilec(
        program, "--tune", 2, "--database", database, "--run", "--check", tmp_path=tmp_path
    )
    assert again.returncode == 0, again.stderr
    assert "check: all 3 arrays match" in again.stdout
    assert len((database / "database.jsonl").read_text().splitlines()) == 2


def test_tune_needs_a_positive_trial_count(capsys, tmp_path):
    status, _, err = run_main(capsys, MM_RELU, "--tune", 0, "--database", tmp_path)
    assert status == 1 and "--tune needs a positive number of trials" in err


# ---------------------------------------------------------------- cold start

# NumPy is not in the list: region inference (tilelang.arith) loads it; see the report
HEAVY = ("llvmlite", "tilelang.runtime", "tilelang.transform", "tilelang.schedule",
         "tilelang.tune.tuner", "tilelang.backends")  # fmt: skip


def test_emit_tir_loads_only_the_front_end():
    code = (
        "import sys\n"
        "from tilelang.cli import main\n"
        f"assert main([{MM_RELU!r}, '--emit', 'tir', '-o', '/dev/null']) == 0\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    loaded = set(result.stdout.split())
    assert "tilelang.parser" in loaded and "tilelang.ir.printer" in loaded
    assert sorted(m for m in loaded if m.startswith(HEAVY)) == []


# ---------------------------------------------------------------- README


def readme_commands() -> list[str]:
    """The ``tilec`` lines of the README's tilec section (comments removed)."""
    text = (SAMPLES.parent / "README.md").read_text()
    section = text.split("## tilec", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh", 1)[1].split("```", 1)[0]
    return [line.split("#")[0].strip() for line in block.splitlines() if line.startswith("tilec")]


def test_readme_tilec_commands_run(tmp_path):
    commands = readme_commands()
    assert len(commands) >= 3
    for command in commands:
        args = [a.replace("samples/", f"{SAMPLES}/") for a in command.split()[1:]]
        env = {**os.environ, "TILELANG_CACHE_DIR": str(tmp_path / "cache")}
        result = subprocess.run(
            [sys.executable, "-m", "tilelang.cli", *args],
            capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path,
        )  # fmt: skip
        assert result.returncode == 0, (command, result.stderr)
        if "--check" in args:
            assert "match the python reference" in result.stdout
