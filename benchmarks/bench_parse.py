"""Parser speed: warm parse of mm_relu, generated files of 1k/10k/100k lines, nests of
blocks 250/500/1000 deep, 1 MB and 10 MB files (time and peak memory, in a fresh process,
side by side: the fast front end vs Lark alone, and the parse tree vs building the IR),
and the cold ``tilec samples/mm_relu.tir --emit tir`` process.

    python benchmarks/bench_parse.py            # all figures
    python benchmarks/bench_parse.py --quick    # skip the 100k-line and 10 MB files
    python benchmarks/bench_parse.py --big 10   # the 10 MB row, fast front end only

Bars: mm_relu warm <= 15 ms, 10k lines <= 2 s, linear growth (in lines and in nesting
depth: depth 1000 well under a second), cold tilec <= 0.4 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import tilelang

ROOT = Path(__file__).resolve().parent.parent
MM_RELU = ROOT / "samples" / "mm_relu.tir"

_HEADER = """from tvm.script import tir as T


@T.prim_func
def generated(A: T.Buffer((128, 128), "float32"), B: T.Buffer((128, 128), "float32"),
              C: T.Buffer((128, 128), "float32")):
    T.func_attr({"global_symbol": "generated", "tir.noalias": True})
"""

# mm_relu's body, 22 lines per unit, with fresh buffer and block names.
_UNIT = """    Y{n} = T.alloc_buffer((128, 128), "float32")
    for i, j, k in T.grid(128, 128, 128):
        with T.block("Y{n}"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vk], B[vk, vj])
            T.writes(Y{n}[vi, vj])
            with T.init():
                Y{n}[vi, vj] = T.float32(0)
            Y{n}[vi, vj] = Y{n}[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(128, 128):
        with T.block("C{n}"):
            vi = T.axis.spatial(128, i)
            vj = T.axis.spatial(128, j)
            T.reads(Y{n}[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = T.max(Y{n}[vi, vj], T.float32(0))
    for i in range(128):
        with T.block("D{n}"):
            vi = T.axis.spatial(128, i)
            x: T.float32 = C[vi, vi] * T.float32(2)
            if vi < 64:
                C[vi, vi] = x + T.float32(1)
"""
_UNIT_LINES = _UNIT.count("\n")


def generated_program(lines: int) -> str:
    """A prim_func of about ``lines`` lines of loop nests and blocks."""
    units = max(1, (lines - 5) // _UNIT_LINES)
    return _HEADER + "".join(_UNIT.format(n=n) for n in range(units))


def nested_blocks(depth: int) -> str:
    """A prim_func whose body is ``depth`` blocks, each nested in the previous one."""
    lines = ["@T.prim_func", 'def nested(A: T.Buffer((1,), "float32")):']
    for level in range(depth):
        lines.append("    " * (level + 1) + f'with T.block("b{level}"):')
    lines.append("    " * (depth + 1) + "A[0] = T.float32(1)")
    return "\n".join(lines) + "\n"


_BIG_FILE = """
import gc, resource, sys, time
sys.path.insert(0, {folder!r})
from bench_parse import generated_program
import tilelang
from tilelang.parser import fast_parse
from tilelang.parser.fast_lexer import Bail
from tilelang.parser.grammar_loader import get_parser
if {lark_only!r}:
    def _decline(text):
        raise Bail
    fast_parse.parse_tree = _decline  # every parse goes to Lark, as before the fast path
tilelang.parse(generated_program(100))
text = generated_program({lines})
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
gc.disable()  # as parse() does
start, cpu = time.perf_counter(), time.process_time()
try:
    tree = fast_parse.parse_tree(text)
except Bail:
    tree = get_parser().parse(text)
tree_seconds = time.perf_counter() - start
tree_cpu = time.process_time() - cpu
del tree
gc.enable()
start, cpu = time.perf_counter(), time.process_time()
module = tilelang.parse(text)
# floats only until the collection below (no container allocated), so no automatic
# collection runs untimed in between: what the parse leaves to the collector (garbage,
# objects to promote) is timed by the first full collection
end = time.perf_counter()
end_cpu = time.process_time()
gc.collect()
gc_seconds = time.perf_counter() - end
seconds, parse_cpu = end - start, end_cpu - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(len(text), text.count(chr(10)), seconds, tree_seconds, (peak - before) * 1024,
      parse_cpu, tree_cpu, gc_seconds)
"""


def big_file(megabytes: float, lark_only: bool = False) -> tuple:
    """``(bytes, lines, seconds, tree seconds, peak memory growth in bytes, CPU seconds,
    tree CPU seconds, seconds of a full GC after)`` of parsing a generated file of about
    ``megabytes`` MB (the module kept), in a
    fresh process (so the peak is this parse's); ``lark_only`` parses with Lark alone
    (the front end before the fast one). CPU time is the figure to compare on a shared
    machine, where wall time also counts the other processes' turns."""
    lines = int(megabytes * 1e6 / (len(_UNIT) / _UNIT_LINES))
    code = _BIG_FILE.format(folder=str(Path(__file__).parent), lines=lines, lark_only=lark_only)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    size, count, seconds, tree_seconds, memory, cpu, tree_cpu, gc_seconds = out.stdout.split()
    return (int(size), int(count), float(seconds), float(tree_seconds), int(memory),
            float(cpu), float(tree_cpu), float(gc_seconds))  # fmt: skip


def _big_row(name: str, row: tuple) -> str:
    size, count, seconds, tree_s, memory, cpu, tree_cpu, gc_s = row
    return (f"{size / 1e6:.1f} MB file ({count:,} lines), {name:>4} front end: "
            f"{seconds:.2f} s (tree {tree_s:.2f} s), CPU {cpu:.2f} s (tree "
            f"{tree_cpu:.2f} s), peak memory +{memory / 1e6:,.0f} MB "
            f"({memory / size:.0f} B/source byte), first full GC after {gc_s:.2f} s "
            f"(parse + GC {seconds + gc_s:.2f} s)")  # fmt: skip


def timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cold_tilec(repeat: int = 5) -> float:
    """Median wall time of a fresh ``tilec`` process (the installed console script)."""
    exe = shutil.which("tilec")
    pyenv_real = Path(sys.executable).with_name("tilec")
    if pyenv_real.exists():
        exe = str(pyenv_real)  # skip shell shims that add their own startup time
    command = [exe] if exe else [sys.executable, "-m", "tilelang.cli"]
    command += [str(MM_RELU), "--emit", "tir"]
    subprocess.run(command, check=True, capture_output=True)  # fills the grammar cache
    return timed(lambda: subprocess.run(command, check=True, capture_output=True), repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 100k-line file")
    parser.add_argument(
        "--big", type=float, metavar="MB", help="only the fast front end's row of an MB-sized file"
    )
    args = parser.parse_args()
    if args.big:
        print(_big_row("fast", big_file(args.big)))
        return

    text = MM_RELU.read_text()
    tilelang.parse(text)
    warm = timed(lambda: tilelang.parse(text), 101)
    print(f"mm_relu warm parse: {warm * 1e3:.2f} ms (median of 101; bar 15 ms)")

    sizes = (1_000, 10_000) if args.quick else (1_000, 10_000, 100_000)
    for size in sizes:
        program = generated_program(size)
        count = program.count("\n")
        seconds = timed(lambda p=program: tilelang.parse(p), 3 if size <= 10_000 else 1)
        print(f"{count:>7} lines: {seconds:.3f} s, {count / seconds:,.0f} lines/s")

    for depth in (250, 500, 1000):
        program = nested_blocks(depth)
        seconds = timed(lambda p=program: tilelang.parse(p), 3)
        print(f"blocks nested {depth:>4} deep: {seconds:.3f} s, {depth / seconds:,.0f} levels/s")

    for megabytes in (1,) if args.quick else (1, 10):
        rows = {name: big_file(megabytes, name == "lark") for name in ("fast", "lark")}
        for name, row in rows.items():
            print(_big_row(name, row))
        fast, lark = rows["fast"], rows["lark"]
        print(f"  {megabytes} MB fast/lark CPU: parse {fast[5] / lark[5]:.2f}x, "
              f"tree {fast[6] / lark[6]:.2f}x")  # fmt: skip

    cold = cold_tilec()
    print(f"cold `tilec samples/mm_relu.tir --emit tir`: {cold:.3f} s (median of 5; bar 0.4 s)")
    print(f"(python {sys.version.split()[0]}, {os.cpu_count()} cpus)")


if __name__ == "__main__":
    main()
