"""Helpers under TVM's ``tvm.contrib`` names, for programs written against TVM:
``clang.create_llvm`` (C to LLVM IR, for ``pragma_import_llvm``), ``utils.tempdir``
and ``nvcc.compile_cuda``."""

from tilelang.contrib import clang, nvcc, utils

__all__ = ["clang", "nvcc", "utils"]
