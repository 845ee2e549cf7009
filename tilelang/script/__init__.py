"""TVMScript-style decorators: ``from tilelang.script import tir as T, ir as I``.

``tilelang.script.ir_module`` and ``tilelang.script.tir.prim_func`` are TVM's
spellings (``@tvm.script.ir_module`` with ``import tilelang as tvm``).
"""

from tilelang.script import ir, tir
from tilelang.script.ir import ir_module

__all__ = ["ir", "tir", "ir_module"]
