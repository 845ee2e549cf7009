"""CUDA backend pieces that need neither a GPU nor a driver: the ThreadSync pass, the
host side of a call (through a launcher that records what it is asked to do), device
arrays in argument checks, and the emitters."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tilelang.backends.cuda import module as cuda_module
from tilelang.backends.cuda.arrays import device_array
from tilelang.backends.cuda.launchers import Launcher

import tilelang
from tilelang.errors import ArgumentError
from tilelang.ir import stmt as S
from tilelang.ir.functor import post_order_visit
from tilelang.transform.thread_sync import ThreadSync, insert_thread_sync, is_sync

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


def lowered(text: str):
    return tilelang.lower(tilelang.parse(text))["main"]


def script_of(body) -> list[str]:
    """The statements of ``body`` in order, as short labels ("sync", "store X", "for k")."""
    labels = []

    class Walk:
        def visit(self, stmt):
            if is_sync(stmt):
                labels.append("sync")
            elif isinstance(stmt, S.BufferStore):
                labels.append(f"store {stmt.buffer.name}")
            elif isinstance(stmt, S.SeqStmt):
                for child in stmt.seq:
                    self.visit(child)
            elif isinstance(stmt, S.For):
                if stmt.kind is not S.ForKind.THREAD_BINDING:
                    labels.append(f"for {stmt.loop_var.name}")
                self.visit(stmt.body)
                if stmt.kind is not S.ForKind.THREAD_BINDING:
                    labels.append(f"end {stmt.loop_var.name}")
            elif isinstance(stmt, S.IfThenElse):
                labels.append("if")
                self.visit(stmt.then_case)
                labels.append("end if")
            elif hasattr(stmt, "body"):
                self.visit(stmt.body)

    Walk().visit(body)
    return labels


# ------------------------------------------------------------------ ThreadSync

WINDOW = (SAMPLES / "window_sum_gpu.tir").read_text()

K_LOOP = """
@T.prim_func
def main(A: T.Buffer((64, 32), "float32"), B: T.Buffer((32,), "float32")):
    S = T.alloc_buffer((32,), "float32", scope="shared")
    for t in T.thread_binding(32, thread="threadIdx.x"):
        for k in range(64):
            with T.block("fill"):
                vt, vk = T.axis.remap("SS", [t, k])
                S[vt] = A[vk, vt]
            with T.block("use"):
                vt, vk = T.axis.remap("SS", [t, k])
                B[vt] = B[vt] + S[31 - vt]
"""

THREAD_BRANCH = """
@T.prim_func
def main(A: T.Buffer((32,), "float32"), B: T.Buffer((32,), "float32")):
    S = T.alloc_buffer((32,), "float32", scope="shared")
    for t in T.thread_binding(32, thread="threadIdx.x"):
        S[t] = A[t]
        if t < 16:
            B[t] = S[31 - t]
            S[t] = T.float32(0)
        B[t] = B[t] + S[31 - t]
"""


def test_window_sum_barrier_between_the_fill_and_the_readers():
    func = lowered(WINDOW)
    labels = script_of(insert_thread_sync(func.body))
    assert labels == ["for ax0_0", "if", "store A_shared", "end if", "end ax0_0", "sync",
                      "store B"]  # fmt: skip


def test_loop_carried_barrier_at_the_top_of_the_loop():
    func = lowered(K_LOOP)
    labels = script_of(insert_thread_sync(func.body))
    # the fill waits for the previous iteration's readers; the readers wait for the fill
    assert labels == ["for k", "sync", "store S", "sync", "store B", "end k"]


def test_barrier_never_inside_a_thread_dependent_branch():
    func = lowered(THREAD_BRANCH)
    labels = script_of(insert_thread_sync(func.body))
    assert labels == ["store S", "sync", "if", "store B", "store S", "end if", "sync", "store B"]


def test_no_shared_memory_no_change():
    func = lowered((SAMPLES / "blocked_matmul_gpu.tir").read_text())
    assert insert_thread_sync(func.body) is func.body


def test_thread_sync_is_a_pass():
    mod = tilelang.lower(tilelang.parse(WINDOW))
    after = ThreadSync()(mod)
    syncs = []
    post_order_visit(after["main"].body, lambda n: syncs.append(n) if is_sync(n) else None)
    assert len(syncs) == 1
    with pytest.raises(ValueError, match="supports the 'shared' scope"):
        ThreadSync("global")


# ------------------------------------------------------- host side of a call


class RecordingLauncher(Launcher):
    """Device memory as bytearrays; launches are recorded, not run."""

    name = "recording"

    def __init__(self):
        self.memory: dict[int, bytearray] = {}
        self.launches: list = []
        self.next = 0x1000

    def load_module(self, cubin_path):
        assert Path(cubin_path).read_bytes()[:4] == b"\x7fELF"
        return "module"

    def get_kernel(self, module, name):
        return name

    def launch(self, kernel, grid, block, args):
        self.launches.append((kernel, tuple(grid), tuple(block), list(args)))

    def alloc(self, nbytes):
        pointer, self.next = self.next, self.next + nbytes + 256
        self.memory[pointer] = bytearray(nbytes)
        return pointer, pointer

    def free(self, owner):
        del self.memory[owner]

    def copy_to_device(self, pointer, array):
        self.memory[pointer][:] = array.tobytes()

    def copy_to_host(self, array, pointer):
        array[...] = np.frombuffer(bytes(self.memory[pointer]), array.dtype).reshape(array.shape)

    def synchronize(self):
        pass


class FakeDeviceArray:
    """What CuPy or PyTorch expose for a device array."""

    def __init__(self, shape, typestr="<f4", pointer=0x7000_0000):
        self.__cuda_array_interface__ = {
            "shape": shape, "typestr": typestr, "data": (pointer, False), "strides": None,
            "version": 3,
        }  # fmt: skip


SYMBOLIC = """
@T.prim_func
def main(a: T.handle, b: T.handle, n: T.int32):
    m = T.int32()
    A = T.match_buffer(a, (m,), "float32")
    B = T.match_buffer(b, (m,), "float32")
    for i0 in T.thread_binding((m + 63) // 64, thread="blockIdx.x"):
        for i1 in T.thread_binding(64, thread="threadIdx.x"):
            if i0 * 64 + i1 < m:
                B[i0 * 64 + i1] = A[i0 * 64 + i1] * T.Cast("float32", n)
"""


@pytest.fixture
def recording(monkeypatch):
    launcher = RecordingLauncher()
    monkeypatch.setattr(cuda_module, "get_launcher", lambda: launcher)
    return launcher


@needs_nvcc
def test_numpy_arguments_are_copied_over_and_outputs_back(recording):
    lib = tilelang.build(tilelang.parse(SYMBOLIC), target="cuda")
    a = np.arange(200, dtype="float32")
    b = np.full(200, 7, dtype="float32")
    lib["main"](a, b, 3)
    ((kernel, grid, block, args),) = recording.launches
    assert kernel == "main_kernel" and grid == (4, 1, 1) and block == (64, 1, 1)
    # A, B as device pointers, then n (int32) and the size m (int32)
    assert [type(x) for x in args] == [np.uint64, np.uint64, np.int32, np.int32]
    assert [int(x) for x in args[2:]] == [3, 200]
    assert recording.memory == {}  # everything freed
    np.testing.assert_array_equal(b, 7)  # nothing ran, and B came back as it was
    np.testing.assert_array_equal(a, np.arange(200))


@needs_nvcc
def test_device_arrays_are_used_in_place(recording):
    lib = tilelang.build(tilelang.parse(SYMBOLIC), target="cuda")
    a, b = FakeDeviceArray((100,), pointer=0x10000), FakeDeviceArray((100,), pointer=0x20000)
    lib["main"](a, b, 2)
    ((_, grid, _, args),) = recording.launches
    assert grid == (2, 1, 1)
    assert [int(x) for x in args] == [0x10000, 0x20000, 2, 100]
    assert recording.memory == {}


@needs_nvcc
def test_device_arrays_are_checked_before_launching(recording):
    lib = tilelang.build(tilelang.parse(SYMBOLIC), target="cuda")
    a = FakeDeviceArray((100,))
    with pytest.raises(ArgumentError, match="expected dtype float32, got float64"):
        lib["main"](a, FakeDeviceArray((100,), "<f8"), 2)
    with pytest.raises(ArgumentError, match="dimension 0 is m = 100"):
        lib["main"](a, FakeDeviceArray((99,), pointer=0x9000_0000), 2)
    assert recording.launches == []


@needs_nvcc
def test_overlapping_device_arrays_are_refused_under_noalias(recording):
    lib = tilelang.build(tilelang.parse((SAMPLES / "blocked_matmul_gpu.tir").read_text()),
                         target="cuda")  # fmt: skip
    a = FakeDeviceArray((1024, 1024), pointer=0x1000_0000)
    overlapping = FakeDeviceArray((1024, 1024), pointer=0x1000_0000 + 4096)
    with pytest.raises(ArgumentError, match="overlap in device memory"):
        lib["main"](a, FakeDeviceArray((1024, 1024), pointer=0x2000_0000), overlapping)


@needs_nvcc
def test_workspace_is_allocated_for_the_call(recording):
    two_kernels = """
@T.prim_func
def main(A: T.Buffer((256,), "float32"), C: T.Buffer((256,), "float32")):
    B = T.alloc_buffer((256,), "float32")
    for i0 in T.thread_binding(2, thread="blockIdx.x"):
        for i1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(256, i0 * 128 + i1)
                B[vi] = A[vi] * T.float32(2)
    for i0 in T.thread_binding(256, thread="blockIdx.x"):
        with T.block("C"):
            vi = T.axis.spatial(256, i0)
            C[vi] = B[vi]
"""
    lib = tilelang.build(tilelang.parse(two_kernels), target="cuda")
    lib["main"](np.zeros(256, "float32"), np.zeros(256, "float32"))
    (k0, g0, b0, args0), (k1, g1, b1, args1) = recording.launches
    assert (k0, g0, b0) == ("main_kernel0", (2, 1, 1), (128, 1, 1))
    assert (k1, g1, b1) == ("main_kernel1", (256, 1, 1), (1, 1, 1))
    assert int(args0[1]) == int(args1[1])  # the same workspace for both kernels


def test_device_array_views():
    view = device_array(FakeDeviceArray((4, 8), pointer=4096))
    assert view.shape == (4, 8) and view.strides == (32, 4) and view.flags.c_contiguous
    assert view.span == (4096, 4096 + 128)
    assert device_array(np.zeros(3)) is None


# ------------------------------------------------------------------ emitters


@needs_nvcc
def test_emitters_cuda_ptx_cubin(tmp_path):
    from tilelang.backends.cuda.emit import emit_cubin, emit_cuda, emit_ptx

    class Args:
        target = "cuda -arch=sm_90"
        output = str(tmp_path / "out.cubin")

    mod = tilelang.parse(WINDOW)
    assert "__syncthreads();" in emit_cuda(mod, Args())
    ptx = emit_ptx(mod, Args())
    assert ".entry main_kernel" in ptx and "bar.sync" in ptx
    assert emit_cubin(mod, Args())[:4] == b"\x7fELF"


@needs_nvcc
def test_tilec_emits_cuda(tmp_path):
    from tilelang import cli

    if "cubin" not in cli.EMITTERS:
        pytest.skip("tilec has no CUDA emitters")
    sample = str(SAMPLES / "window_sum_gpu.tir")
    run = [sys.executable, "-m", "tilelang.cli", sample, "--emit"]
    source = subprocess.run([*run, "cuda"], capture_output=True, text=True, timeout=120)
    assert source.returncode == 0 and "__shared__ float A_shared[256];" in source.stdout
    out = tmp_path / "w.cubin"
    cubin = subprocess.run([*run, "cubin", "-o", str(out)], capture_output=True, timeout=120)
    assert cubin.returncode == 0 and out.read_bytes()[:4] == b"\x7fELF"
