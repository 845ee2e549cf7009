"""``create_llvm``: C or C++ source compiled to LLVM IR text by clang (TVM's
``tvm.contrib.clang.create_llvm``), for ``pragma_import_llvm``::

    ll_code = clang.create_llvm(c_source, output=temp.relpath("temp.ll"))
    sch.annotate(loop, "pragma_import_llvm", ll_code)

clang is looked up as ``$TILELANG_CLANG``, ``clang``, then ``clang-N`` for recent N;
without one, :func:`create_llvm` raises a BuildError saying so (``pragma_import_c``
takes the C source itself and needs no clang).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tilelang.contrib.utils import tempdir
from tilelang.errors import BuildError


def find_clang(required: bool = True) -> str | None:
    """The clang executable to use (None, or a BuildError when ``required``)."""
    candidates = [os.environ.get("TILELANG_CLANG"), "clang"]
    candidates += [f"clang-{n}" for n in range(22, 9, -1)]
    for name in candidates:
        if name and shutil.which(name):
            return shutil.which(name)
    if required:
        raise BuildError(
            "create_llvm needs clang, which was not found (set TILELANG_CLANG, install "
            "clang, or attach the C source with pragma_import_c instead)"
        )
    return None


def create_llvm(inputs, output: str | None = None, options=None, cc: str | None = None) -> str:
    """The LLVM IR text of ``inputs`` (C source text, a path, or a list of them)
    compiled with ``clang -S -emit-llvm -O2`` plus ``options``; also written to
    ``output`` when given."""
    cc = cc or find_clang()
    inputs = [inputs] if isinstance(inputs, (str, Path)) else list(inputs)
    work = tempdir()
    paths = []
    for index, item in enumerate(inputs):
        text = str(item)
        if "\n" not in text and Path(text).is_file():
            paths.append(text)
        else:
            path = work.relpath(f"input{index}.cc")
            Path(path).write_text(text)
            paths.append(path)
    target = output or work.relpath("output.ll")
    command = [cc, "-S", "-emit-llvm", "-O2", *(options or []), "-o", target, *paths]
    if len(paths) > 1:
        raise BuildError("create_llvm compiles one input at a time into one .ll file")
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise BuildError(f"clang failed ({' '.join(command)}):\n{result.stderr}")
    return Path(target).read_text()
