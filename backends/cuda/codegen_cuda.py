"""CUDA C source for a lowered IRModule: one ``extern "C" __global__`` function per kernel.

The printer is the C printer (:class:`tilelang.backends.c.CLikePrinter`) with the CUDA
dialect in its class attributes: ``__restrict__``, ``#pragma unroll``, the thread
index names, ``__shared__`` for the ``shared`` scope, ``__syncthreads()`` for the
barrier that :mod:`tilelang.transform.thread_sync` inserts. A kernel reads::

    extern "C" __global__ void __launch_bounds__(128) main_kernel(
        const float* __restrict__ A, float* __restrict__ B) {
      int32_t i_0 = (int32_t)blockIdx.x;
      __shared__ float A_shared[256];
      ...

``float16`` is CUDA's ``half`` (``cuda_fp16.h`` is included only when used); math on
it is computed in float (``__float2half(expf(__half2float(x)))``). ``bfloat16`` is
stored as ``__nv_bfloat16`` (``cuda_bf16.h``) and computed in float32, rounded after
each operation (:func:`tilelang.transform.legalize_bf16.legalize_bf16` with
``keep_storage``): conversions print as ``__bfloat162float`` / ``__float2bfloat16_rn``.
"""

from __future__ import annotations

import attrs
from tilelang.backends.c.c_printer import CLikePrinter
from tilelang.backends.c.codegen_c import _helper
from tilelang.backends.c.literals import c_comment, c_float_literal, half_value
from tilelang.backends.c.names import ScopedNames, sanitize
from tilelang.backends.cuda import async_copy, mma
from tilelang.backends.cuda.allreduce import HELPER as ALLREDUCE_HELPER
from tilelang.backends.cuda.allreduce import print_allreduce
from tilelang.backends.cuda.split import DeviceFunction, Kernel, split_host_device
from tilelang.backends.cuda.vectorize import VectorPrinter, vector_buffers
from tilelang.backends.cuda.wmma import fragment_declaration, print_fragment_call
from tilelang.backends.cuda.wrapping import WrappingIntegers

from tilelang.analysis.fragments import (
    FRAGMENT_ARGS,
    FRAGMENT_KINDS,
    collect_fragments,
    fragment_family,
)
from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.comm_reducer import CommReducer
from tilelang.ir.function import PrimFunc
from tilelang.runtime.args import written_data_vars
from tilelang.transform.legalize_bf16 import legalize_bf16_module
from tilelang.transform.thread_sync import SYNC_OP, insert_thread_sync
from tilelang.transform.verify_lowered import verify_lowered

#: names of the CUDA language and runtime that generated identifiers must not take
CUDA_NAMES = frozenset(
    """threadIdx blockIdx blockDim gridDim warpSize half half2 __syncthreads dim3 min max
    float2 float4 int2 int4 uint2 uint4 new delete class template this namespace using
    operator private public protected virtual typename""".split()
)

#: static shared memory a kernel may declare (bytes)
MAX_STATIC_SHARED_BYTES = 48 * 1024


class CUDAPrinter(VectorPrinter, WrappingIntegers, CLikePrinter):
    """The CUDA C++ dialect of the C-like printer (see the module docstring); vectorised
    loops print through vector types where they can (:mod:`.vectorize`); signed integer
    arithmetic wraps explicitly (nvcc has no ``-fwrapv``, :mod:`.wrapping`)."""

    type_names = {**CLikePrinter.type_names, "float16": "half", "bfloat16": "__nv_bfloat16"}
    popcount_builtin = "__popcll"
    restrict_keyword = "__restrict__"
    parallel_pragma = None  # a parallel loop inside a kernel runs serially per thread
    simd_pragma = "#pragma unroll"  # vector lanes: unrolled by nvcc
    unroll_pragma = "#pragma unroll"
    thread_index_names = {
        axis: axis
        for axis in ("threadIdx.x", "threadIdx.y", "threadIdx.z",
                     "blockIdx.x", "blockIdx.y", "blockIdx.z")
    }  # fmt: skip
    barrier = "__syncthreads()"
    scope_qualifiers = {"shared": "__shared__", "local": ""}
    max_stack_bytes = 1 << 62  # kernel arrays are never on the heap
    _min_max_names = {(E.Max, 32): "fmaxf", (E.Max, 64): "fmax",
                      (E.Min, 32): "fminf", (E.Min, 64): "fmin"}  # fmt: skip

    def __init__(self, names: ScopedNames):
        super().__init__(names)
        self.uses_half = False
        self.uses_bf16 = False
        self.uses_wmma = False
        self.shared_bytes = 0
        self.fragments: dict = {}  # id(data var) -> wmma.Fragment (set per kernel)
        self.fragment_kinds: dict = {}  # id(data var) -> "matrix_a" / ... (allocated)
        self.fragment_dtypes: dict = {}  # id(data var) -> dtype (allocated fragments)
        self.mma_fragments: set = set()  # ids of m16n8k16.* register arrays
        self.mma_helpers: set = set()  # the mma.sync helpers the kernel's calls use
        self.allocation_scopes: dict = {}  # id(data var) -> scope (kernel allocations)
        self.init_vectors()
        self.vector_buffers: set = set()  # ids of data vars accessed as vectors (per kernel)
        self.async_copy = False  # the arch has cp.async (set by generate_cuda)
        self.async_groups = False  # a pipeline's explicit cp.async groups (per kernel)
        self.thread_loops: dict = {}  # id(loop var) -> (thread axis, extent or None)
        self.reducer = None  # the CommReducer of the enclosing "reduce_scope"
        self.uses_allreduce = False
        self.kernel_block = (1, 1, 1)  # the kernel's thread counts (set by print_kernel)

    def type_name(self, dtype) -> str:
        name = super().type_name(dtype)
        self.uses_half |= name == "half"
        self.uses_bf16 |= name == "__nv_bfloat16"
        return name

    # ------------------------------------------------------------- statements

    def visit_for(self, op: S.For) -> None:
        if op.kind is S.ForKind.VECTORIZED and self.print_vector_loop(op):
            return
        super().visit_for(op)

    def visit_evaluate(self, op: S.Evaluate) -> None:
        if isinstance(op.value, E.Call) and op.value.op == "tvm_thread_allreduce":
            self.emit(print_allreduce(self, op.value, self.reducer, self.kernel_block))
            return
        if isinstance(op.value, E.Call) and op.value.op == SYNC_OP:
            if self.async_groups and self.lines and self.lines[-1].strip() == f"{self.barrier};":
                return  # a pipeline's wait just ended with this barrier
            if self.async_kernel and not self.async_groups:
                self.emit(async_copy.WAIT)  # this thread's cp.async copies have landed
        super().visit_evaluate(op)

    def visit_attr_stmt(self, op: S.AttrStmt) -> None:
        if op.attr_key == "reduce_scope" and isinstance(op.node, CommReducer):
            outer, self.reducer = self.reducer, op.node
            self.visit(op.body)
            self.reducer = outer
            return
        if not async_copy.print_async_attr(self, op):
            super().visit_attr_stmt(op)

    def visit_buffer_load(self, op: E.BufferLoad) -> str:
        lane = self.lane_load(op)
        return lane if lane is not None else super().visit_buffer_load(op)

    def print_thread_binding(self, op: S.For) -> None:
        var = self.names.define(op.loop_var)
        extent = op.extent.value if isinstance(op.extent, E.IntImm) else None
        self.thread_loops[id(op.loop_var)] = (op.thread_binding, extent)
        kind = self.type_name(op.loop_var.dtype)
        index = f"({kind}){self.thread_index_names[op.thread_binding]}"
        if not (isinstance(op.min, E.IntImm) and op.min.value == 0):
            index = f"{index} + {self.expr(op.min)}"
        self.emit(f"{kind} {var} = {index};")
        self.visit(op.body)

    def visit_allocate(self, op: S.Allocate) -> None:
        count = self._product(op.extents)
        self.allocation_scopes[id(op.buffer_var)] = op.scope
        if op.scope in FRAGMENT_KINDS:
            self._allocate_fragments(op, count)
            return
        if op.scope not in self.scope_qualifiers:
            raise BuildError(
                f"buffer {op.buffer_var.name} in scope {op.scope!r} is allocated inside a "
                "kernel; kernels allocate only 'shared' and 'local' buffers"
            )
        if not isinstance(count, int):
            raise BuildError(
                f"{op.scope} buffer {op.buffer_var.name} has a size that is not a constant; "
                "kernel arrays need constant sizes"
            )
        if op.scope == "shared":
            self.shared_bytes += count * op.dtype.bits // 8
            if id(op.buffer_var) in self.vector_buffers:  # vector accesses need alignment
                self.emit(f"__shared__ __align__(16) {self.type_name(op.dtype)} "
                          f"{self.names.define(op.buffer_var)}[{count}];")  # fmt: skip
                self.pointer_types[id(op.buffer_var)] = op.dtype.element_of()
                self.visit(op.body)
                return
        super().visit_allocate(op)

    def _allocate_fragments(self, op: S.Allocate, count) -> None:
        """A ``wmma.*`` buffer: an array of fragments, one per tile (:mod:`.wmma`)."""
        fragment = self.fragments.get(id(op.buffer_var))
        self.fragment_dtypes[id(op.buffer_var)] = op.dtype
        if fragment_family(op.scope) == "mma":  # per-lane registers (:mod:`.mma`)
            declaration = mma.declaration(self, op, fragment, count)
            self.mma_fragments.add(id(op.buffer_var))
            self.fragment_kinds[id(op.buffer_var)] = FRAGMENT_KINDS[op.scope]
            self.emit(declaration.format(name=self.names.define(op.buffer_var)) + ";")
            self.visit(op.body)
            return
        kind = fragment_declaration(self, op, fragment, count)
        kind_name = FRAGMENT_KINDS[op.scope]
        self.uses_wmma = True
        name = self.names.define(op.buffer_var)
        self.fragment_kinds[id(op.buffer_var)] = kind_name
        self.emit(f"{kind} {name}[{count // fragment.tile_elements(op.scope)}];")
        self.visit(op.body)

    def fragment_kind(self, var) -> str | None:
        return self.fragment_kinds.get(id(var))

    def visit_assert_stmt(self, op: S.AssertStmt) -> None:
        raise BuildError("assertions inside CUDA kernels are not supported")

    # ----------------------------------------------------------- expressions

    def visit_call(self, op: E.Call) -> str:
        if op.op == SYNC_OP:
            return self.barrier
        if op.op == "call_extern":
            name = op.args[0].value if isinstance(op.args[0], E.StringImm) else op.args[0]
            raise BuildError(
                f"call_extern({name!r}) inside a CUDA kernel: the CUDA backend links no "
                "device libraries"
            )
        if op.op in FRAGMENT_ARGS:
            for position in FRAGMENT_ARGS[op.op]:
                var = op.args[position]
                if self.fragment_kind(var) is None:
                    raise BuildError(
                        f"T.{op.op}: {getattr(var, 'name', var)} is not a buffer in a "
                        "fragment scope allocated in this kernel"
                    )
            families = {id(op.args[p]) in self.mma_fragments for p in FRAGMENT_ARGS[op.op]}
            if families == {True}:
                return mma.print_call(self, op, self.allocation_scopes)
            if len(families) > 1:
                raise BuildError(f"T.{op.op} mixes wmma fragments and mma.sync registers")
            return print_fragment_call(self, op)
        if op.op == "isnan" and op.args[0].dtype.element_of().bits == 16:
            return f"__hisnan({self.expr(op.args[0])})"
        return super().visit_call(op)

    def visit_cast(self, op: E.Cast) -> str:
        source, target = op.value.dtype.element_of(), op.dtype.element_of()
        if source.is_bfloat16() or target.is_bfloat16():
            self.uses_bf16 = True
            value = self.expr(op.value)
            if source.is_bfloat16() and target.is_bfloat16():
                return value
            if source.is_bfloat16():  # exact; then on to the target type as C converts
                value = f"__bfloat162float({value})"
                return value if str(target) == "float32" else f"(({self.type_name(target)}){value})"
            if str(source) != "float32":  # the legaliser casts to float32 first
                value = f"((float){value})"
            return f"__float2bfloat16_rn({value})"  # to nearest, ties to even
        return super().visit_cast(op)

    def visit_float_imm(self, op: E.FloatImm) -> str:
        if op.dtype.bits == 16:
            self.uses_half = True
            # rounded to float16 first (exact in float): no double rounding through float
            return f"__float2half({c_float_literal(half_value(op.value), 32)})"
        return super().visit_float_imm(op)

    def visit_max(self, op: E.Max) -> str:
        return self._min_max(op)

    def visit_min(self, op: E.Min) -> str:
        return self._min_max(op)

    def _min_max(self, op) -> str:
        name = self._min_max_names.get((type(op), op.dtype.bits)) if op.dtype.is_float() else None
        if name is None:  # integers: as C prints them
            visit = CLikePrinter.visit_max if isinstance(op, E.Max) else CLikePrinter.visit_min
            return visit(self, op)
        return f"{name}({self.expr(op.a)}, {self.expr(op.b)})"

    def _math(self, name: str, dtype, args) -> str:
        if dtype.element_of().bits != 16:
            return super()._math(name, dtype, args)
        # half math: computed in float, rounded back
        self.uses_half = True
        operands = ", ".join(f"__half2float({self.expr(a)})" for a in args)
        return f"__float2half({name}f({operands}))"


@attrs.frozen
class CudaSource:
    """Generated CUDA: the text and, per PrimFunc name, its kernels and workspaces."""

    text: str
    functions: dict  # name in the IRModule -> DeviceFunction
    # name in the IRModule -> {id(data var): bytes}: the alignment vector accesses need
    alignments: dict = attrs.field(factory=dict)


def generate_cuda(mod, target) -> CudaSource:
    """The CUDA source of every PrimFunc of the lowered ``mod`` (barriers inserted)."""
    funcs = [(name, f) for name, f in mod if isinstance(f, PrimFunc)]
    if not funcs:
        raise BuildError("the module has no PrimFunc to compile")
    verify_lowered(mod, "cuda")
    mod = legalize_bf16_module(mod, keep_storage=True)
    funcs = [(name, f) for name, f in mod if isinstance(f, PrimFunc)]
    device_functions, bodies, helpers, uses_half, uses_wmma = {}, [], set(), False, False
    uses_bf16 = uses_allreduce = False
    mma_helpers: set = set()
    has_async = async_copy.arch_has_async_copy(target)
    async_sizes: set = set()
    used_symbols: set = set()
    alignments: dict = {}
    for name, func in funcs:
        func = func.with_body(insert_thread_sync(func.body))
        # kernels are named <symbol>_kernel: "main" is a fine prefix (no C main here)
        symbol = sanitize(str(func.attrs.get("global_symbol", name)) + "_kernel")[:-7]
        while symbol in used_symbols:
            symbol += "_"
        used_symbols.add(symbol)
        device = split_host_device(func, symbol)
        device_functions[name] = device
        for kernel in device.kernels:
            printer = CUDAPrinter(ScopedNames(CUDA_NAMES | {k.name for k in device.kernels}))
            printer.async_copy = has_async
            bodies.append(print_kernel(printer, func, kernel, device.workspaces))
            helpers |= printer.helpers
            uses_half |= printer.uses_half
            uses_bf16 |= printer.uses_bf16
            uses_allreduce |= printer.uses_allreduce
            needed = alignments.setdefault(name, {})
            for key, size in printer.aligned.items():
                needed[key] = max(needed.get(key, 1), size)
            uses_wmma |= printer.uses_wmma
            mma_helpers |= printer.mma_helpers
            async_sizes |= printer.async_sizes
    parts = [
        c_comment(f"Generated by tilelang for target: {target}"),
        _includes(uses_half, uses_wmma, uses_bf16),
    ]
    helper_text = [_device_helper(h) for h in sorted(helpers)]
    helper_text += [async_copy.helper(size) for size in sorted(async_sizes)]
    helper_text += mma.helpers(mma_helpers)
    helper_text += [ALLREDUCE_HELPER] if uses_allreduce else []
    uses_half |= bool(mma_helpers)
    if helper_text:
        parts.append("\n\n".join(helper_text))
    parts.extend(bodies)
    return CudaSource("\n\n".join(parts) + "\n", device_functions, alignments)


def _includes(uses_half: bool, uses_wmma: bool = False, uses_bf16: bool = False) -> str:
    headers = ["cuda_fp16.h"] if uses_half else []
    headers += ["cuda_bf16.h"] if uses_bf16 else []
    headers += ["mma.h"] if uses_wmma else []
    headers += ["math.h", "stdint.h"]
    return "\n".join(f"#include <{h}>" for h in headers)


def _device_helper(name: str) -> str:
    return _helper(name).replace("static inline", "static __device__ __forceinline__", 1)


def kernel_params(printer: CUDAPrinter, func: PrimFunc, kernel: Kernel, workspaces=()) -> list[str]:
    """The kernel's parameter declarations (buffers named after the buffers)."""
    buffers = {id(b.data): b for b in func.buffer_map.values()}
    workspace_dtypes = {id(w.var): w.dtype for w in workspaces}
    written = written_data_vars(func.with_body(kernel.body))
    restrict = f" {printer.restrict_keyword}" if func.attrs.get("tir.noalias") else ""
    params = []
    for var in kernel.params:
        if not var.dtype.is_handle():
            params.append(f"{printer.type_name(var.dtype)} {printer.names.define(var)}")
            continue
        buffer = buffers.get(id(var))
        name = printer.names.define(var, buffer.name if buffer is not None else None)
        dtype = buffer.dtype if buffer is not None else workspace_dtypes[id(var)]
        printer.pointer_types[id(var)] = dtype.element_of()
        const = "" if id(var) in written else "const "
        params.append(f"{const}{printer.type_name(dtype)}*{restrict} {name}")
    for param in func.params:  # a buffer parameter may also be referred to by its handle
        buffer = func.buffer_map.get(param)
        if buffer is not None and printer.names.lookup(buffer.data) is not None:
            printer.names.alias(param, printer.names.lookup(buffer.data))
    return params


def print_kernel(printer: CUDAPrinter, func: PrimFunc, kernel: Kernel, workspaces=()) -> str:
    """The text of one ``__global__`` function."""
    params = ", ".join(kernel_params(printer, func, kernel, workspaces)) or "void"
    header = (
        f'extern "C" __global__ void __launch_bounds__({kernel.threads}) {kernel.name}({params})'
    )
    printer.enter(header)
    printer.kernel_block = tuple(kernel.block)
    printer.fragments = collect_fragments(kernel.body)
    printer.vector_buffers = vector_buffers(kernel.body) | mma.matrix_sources(kernel.body)
    printer.async_groups = async_copy.kernel_has_async_groups(kernel.body, printer.async_copy)
    # with groups, only the pipeline's async statements copy asynchronously
    printer.async_kernel = not printer.async_groups and async_copy.kernel_has_async_copies(
        kernel.body, printer.async_copy
    )
    printer.visit(kernel.body)
    if printer.fragment_kinds and kernel.block[0] != 32:
        raise BuildError(
            f"kernel {kernel.name} uses tensor-core fragments, which are warp-wide: it needs "
            f"threadIdx.x of extent 32 (one warp per threadIdx.y, .z), not {kernel.block[0]}"
        )
    if printer.async_kernel or printer.async_groups:
        printer.emit(async_copy.WAIT)  # no copy outlives the kernel
    printer.level -= 1
    printer.emit("}")
    if printer.shared_bytes > MAX_STATIC_SHARED_BYTES:
        raise BuildError(
            f"kernel {kernel.name} declares {printer.shared_bytes} bytes of shared memory; "
            f"static shared memory is limited to {MAX_STATIC_SHARED_BYTES} bytes per block "
            "(use smaller tiles)"
        )
    return "\n".join(printer.lines)


__all__ = ["CUDAPrinter", "CudaSource", "generate_cuda", "print_kernel", "DeviceFunction"]
