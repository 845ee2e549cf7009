"""TVMScript-style decorators: ``from tilelang.script import tir as T, ir as I, relax as R``.

``tilelang.script.ir_module`` and ``tilelang.script.tir.prim_func`` are TVM's
spellings (``@tvm.script.ir_module`` with ``import tilelang as tvm``).
"""

from tilelang.script import ir, relax, tir
from tilelang.script.ir import ir_module

__all__ = ["ir", "relax", "tir", "ir_module"]
