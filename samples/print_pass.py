"""User passes in the lowering pipeline (SEED_PROGRAMS §10).

1. ``print_tir``: a printing pass inserted with ``tir.add_lower_pass`` at phase 3,
   exactly as the notes write it; it prints each function as the pipeline sees it.
2. ``DoubleConstants``: a user-written mutator (an ``StmtExprMutator`` subclass)
   wrapped into a pass; it turns ``B[i] = A[i] + 1.0`` into ``B[i] = A[i] + 2.0``,
   and the compiled C shows and computes the change.

Run: ``python samples/print_pass.py``
"""

import numpy as np

import tilelang
from tilelang.ir import FloatImm, StmtExprMutator
from tilelang.transform import PassContext, prim_func_pass

SOURCE = """
@T.prim_func
def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "add_one", "tir.noalias": True})
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + T.float32(1)
"""


@prim_func_pass(opt_level=0)
def print_tir(f, mod, ctx):
    print(f)
    return f


class DoubleConstants(StmtExprMutator):
    """Doubles every float constant; everything else is returned unchanged (shared)."""

    def visit_float_imm(self, op):
        return FloatImm(op.dtype, op.value * 2)


@prim_func_pass(opt_level=0, name="double_constants")
def double_constants(f, mod, ctx):
    return f.with_body(DoubleConstants().visit(f.body))


def main():
    mod = tilelang.parse(SOURCE)
    config = {"tir.add_lower_pass": [(1, double_constants), (3, print_tir)]}
    with PassContext(opt_level=3, config=config):
        lib = tilelang.build(mod, target="c")
    print(lib.get_source())
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, dtype="float32")
    lib["add_one"](a, b)
    np.testing.assert_array_equal(b, a + 2)
    print("B =", b)


if __name__ == "__main__":
    main()
