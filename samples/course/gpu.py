"""The MLC course's GPU-acceleration lesson as the course writes it (SEED_PROGRAMS §6),
with only ``tvm`` replaced by ``tilelang``.

Vector add and the window sum bound to CUDA threads (``cache_read`` into shared memory,
cooperative fetching), built for a tagged device, with the CUDA source printed from
``rt_mod.imported_modules[0].get_source()``. Every schedule is also run on the CPU (the
C backend executes thread-bound loops serially) and checked against NumPy; on a machine
with a GPU the CUDA build runs too. Building for CUDA needs ``nvcc``; without it the
sample stops after the CPU checks.

    python samples/course/gpu.py
"""

# The course's own spelling is kept on purpose (%-formatting, super(Class, self)).
# ruff: noqa: UP008, UP031, E501

import shutil

import numpy as np

import tilelang as tvm
from tilelang.script import tir as T


@tvm.script.ir_module
class MyModuleVecAdd:
    @T.prim_func
    def main(
        A: T.Buffer((1024,), "float32"),
        B: T.Buffer((1024,), "float32"),
        C: T.Buffer((1024,), "float32"),
    ) -> None:
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in T.grid(1024):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                C[vi] = A[vi] + B[vi]


sch = tvm.tir.Schedule(MyModuleVecAdd)
block_C = sch.get_block("C")
(i,) = sch.get_loops(block=block_C)
i0, i1 = sch.split(i, [None, 128])
sch.mod.show()
sch.bind(i0, "blockIdx.x")
sch.bind(i1, "threadIdx.x")
sch.mod.show()
vec_add = sch.mod

A_np = np.random.uniform(size=(1024,)).astype("float32")
B_np = np.random.uniform(size=(1024,)).astype("float32")
C_np = np.zeros((1024,), "float32")
tvm.build(vec_add, target="c")["main"](A_np, B_np, C_np)
np.testing.assert_allclose(C_np, A_np + B_np)


@tvm.script.ir_module
class MyModuleWindowSum:
    @T.prim_func
    def main(A: T.Buffer((1027,), "float32"), B: T.Buffer((1024,), "float32")) -> None:
        T.func_attr({"global_symbol": "main", "tir.noalias": True})
        for i in T.grid(1024):
            with T.block("C"):
                vi = T.axis.remap("S", [i])
                B[vi] = A[vi] + A[vi + 1] + A[vi + 2]


sch = tvm.tir.Schedule(MyModuleWindowSum)
nthread = 128
block_C = sch.get_block("C")
(i,) = sch.get_loops(block=block_C)
i0, i1 = sch.split(i, [None, nthread])
sch.bind(i0, "blockIdx.x")
sch.bind(i1, "threadIdx.x")
A_shared = sch.cache_read(block_C, read_buffer_index=0, storage_scope="shared")
sch.compute_at(A_shared, i1)
ax = sch.get_loops(A_shared)[-1]
ax0, ax1 = sch.split(ax, [None, nthread])
sch.bind(ax1, "threadIdx.x")
sch.mod.show()
window_sum = sch.mod

W_np = np.random.uniform(size=(1027,)).astype("float32")
S_np = np.zeros((1024,), "float32")
tvm.build(window_sum, target="c")["main"](W_np, S_np)
np.testing.assert_allclose(S_np, W_np[:1024] + W_np[1:1025] + W_np[2:1026], rtol=1e-6)

# --- build for a GPU: a tag brings the device's architecture and limits
target = tvm.target.Target("nvidia/nvidia-a100")
print(target.arch, target.max_num_threads, target.max_shared_memory_per_block)
if shutil.which("nvcc") is None:
    print("nvcc is not installed: the CUDA builds are skipped")
    raise SystemExit(0)

rt_mod = tvm.build(vec_add, target="cuda")
print(rt_mod.imported_modules[0].get_source())
rt_mod_window = tvm.build(window_sum, target=target)
print(rt_mod_window.imported_modules[0].get_source())

if tvm.cuda(0).exist:
    A_nd = tvm.nd.array(A_np, tvm.cuda(0))
    B_nd = tvm.nd.array(B_np, tvm.cuda(0))
    C_nd = tvm.nd.array(np.zeros((1024,), dtype="float32"), tvm.cuda(0))
    rt_mod["main"](A_nd, B_nd, C_nd)
    np.testing.assert_allclose(C_nd.numpy(), A_np + B_np)
    W_nd = tvm.nd.array(W_np, tvm.cuda(0))
    S_nd = tvm.nd.array(np.zeros((1024,), dtype="float32"), tvm.cuda(0))
    rt_mod_window["main"](W_nd, S_nd)
    np.testing.assert_allclose(S_nd.numpy(), S_np, rtol=1e-6)
    print("checked on the GPU")
print("ok")
