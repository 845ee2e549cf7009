"""The built CUDA module: host-side launching of each function's kernels.

A call of a function (after :class:`~tilelang.backends.cuda.arrays.CudaSignature` has
checked the arguments):

1. loads the cubin on the first call (through the launcher, :mod:`.launchers`),
2. copies NumPy arguments to the device (device arrays are used in place) and
   allocates the workspaces,
3. launches the kernels in order, grid sizes evaluated from the scalar arguments,
4. waits, copies the arrays the function writes back into the NumPy arguments and
   frees what it allocated.

``time_evaluator`` keeps the arguments on the device and times with CUDA events.
"""

from __future__ import annotations

import numpy as np
from tilelang.backends.cuda.arrays import CudaSignature, DeviceArray
from tilelang.backends.cuda.launchers import get_launcher

from tilelang.errors import ArgumentError, BuildError
from tilelang.runtime.args import eval_int, written_data_vars
from tilelang.runtime.module import ProfileResult, TimeEvaluator


class CudaModule:
    """What ``build`` returns for target ``"cuda"`` (see :mod:`tilelang.runtime`)."""

    signature_class = CudaSignature

    def __init__(self, lowered_mod, source, cubin_path, compile_log: str, cached: bool):
        self.source, self.cubin_path = source, cubin_path
        self.compile_log, self.was_cached = compile_log, cached
        self._loaded: dict = {}  # launcher name -> (module handle, {kernel name: kernel})
        self.functions = {
            name: CudaFunction(self, lowered_mod[name], device, source.alignments.get(name, {}))
            for name, device in source.functions.items()
        }

    @property
    def time_evaluator_class(self):
        return CudaTimeEvaluator

    def get_source(self, fmt: str = "") -> str:
        """The CUDA source (``fmt`` ``""``/``"cu"``/``"cuda"``)."""
        if fmt in ("", "cu", "cuda"):
            return self.source.text
        raise BuildError(f"the CUDA module has the source 'cu', not {fmt!r}")

    @property
    def imported_modules(self) -> list:
        """TVM's layout of a CUDA build: a host module importing the device module,
        so ``lib.imported_modules[0].get_source()`` is the CUDA source."""
        return [CudaDeviceModule(self)]

    def kernel(self, name: str, launcher=None):
        """The kernel ``name``, loaded through ``launcher`` (default: the current one;
        the cubin is loaded on first use, once per launcher)."""
        launcher = launcher or self.launcher
        loaded = self._loaded.get(launcher.name)
        if loaded is None:
            with launcher.activate():
                loaded = self._loaded[launcher.name] = (launcher.load_module(self.cubin_path), {})
        module, kernels = loaded
        if name not in kernels:
            with launcher.activate():
                kernels[name] = launcher.get_kernel(module, name)
        return kernels[name]

    @property
    def launcher(self):
        """The launcher calls go through (see :func:`.launchers.get_launcher`)."""
        return get_launcher()


class CudaDeviceModule:
    """The device code of a CUDA build, as TVM's imported ``cuda`` module shows it."""

    type_key = "cuda"

    def __init__(self, host: CudaModule):
        self._host = host

    def get_source(self, fmt: str = "") -> str:
        """The CUDA source (``fmt`` ``""``/``"cu"``/``"cuda"``)."""
        return self._host.get_source(fmt)

    @property
    def imported_modules(self) -> list:
        return []

    def __repr__(self) -> str:
        return f"<cuda device module: {', '.join(sorted(self._host.functions))}>"


class _Staged:
    """One call's device-side arguments: kernel argument values by variable, the NumPy
    arrays to copy back, and the allocations to free."""

    def __init__(self):
        self.values: dict = {}  # id(var) -> np scalar (pointers as uint64)
        self.host_values: dict = {}  # Var -> int (for grid sizes)
        self.copy_back: list = []  # (numpy array, device pointer)
        self.owned: list = []


class CudaFunction:
    """The host side of one PrimFunc: launches its kernels in order."""

    def __init__(self, module: CudaModule, func, device, alignments=None):
        self.module, self.device = module, device
        self.alignments = dict(alignments or {})  # id(data var) -> bytes (vector accesses)
        self.params = tuple(func.params)
        self.buffer_map = dict(func.buffer_map)
        self.size_vars = tuple(func.attrs.get("tl.size_vars", ()))
        self.written = written_data_vars(func)

    def __call__(self, *checked) -> None:
        launcher = self.module.launcher
        with launcher.activate():
            staged = self.stage(launcher, checked)
            try:
                self.launch(launcher, staged)
                launcher.synchronize()
                for array, pointer in staged.copy_back:
                    launcher.copy_to_host(array, pointer)
            finally:
                self.release(launcher, staged)

    def stage(self, launcher, checked, copy_all_back: bool = False) -> _Staged:
        """Device pointers for ``checked`` (NumPy arrays are copied over)."""
        staged = _Staged()
        scalars = [p for p in self.params if self.buffer_map.get(p) is None]
        values = list(checked)
        for param, value in zip(self.params, values):
            buffer = self.buffer_map.get(param)
            if buffer is None:
                continue
            if isinstance(value, DeviceArray):
                pointer = value.ptr
                align = self.alignments.get(id(buffer.data), 1)
                if pointer % align:
                    raise ArgumentError(
                        f"argument {buffer.name}: the kernel reads or writes it {align} bytes "
                        f"at a time, but the device array starts at {pointer:#x}, not on a "
                        f"{align}-byte boundary (pass an aligned array or a copy)"
                    )
            else:
                pointer, owner = launcher.alloc(value.nbytes)
                staged.owned.append(owner)
                launcher.copy_to_device(pointer, np.ascontiguousarray(value))
                if copy_all_back or id(buffer.data) in self.written:
                    staged.copy_back.append((value, pointer))
            staged.values[id(buffer.data)] = np.uint64(pointer)
        scalar_values = [v for p, v in zip(self.params, values) if self.buffer_map.get(p) is None]
        size_values = values[len(self.params) :]
        for var, value in [*zip(scalars, scalar_values), *zip(self.size_vars, size_values)]:
            staged.values[id(var)] = np.array(value, dtype=var.dtype.numpy_name())[()]
            staged.host_values[var] = value
        for workspace in self.device.workspaces:
            count = 1
            for extent in workspace.extents:
                count *= self._evaluate(extent, staged, f"the size of {workspace.var.name}")
            pointer, owner = launcher.alloc(count * workspace.dtype.bits // 8)
            staged.owned.append(owner)
            staged.values[id(workspace.var)] = np.uint64(pointer)
        return staged

    def launch(self, launcher, staged: _Staged) -> None:
        """Launch every kernel (asynchronously, in order on the default stream)."""
        for kernel in self.device.kernels:
            grid = [self._evaluate(x, staged, f"the grid of {kernel.name}") for x in kernel.grid]
            if 0 in grid:
                continue  # an empty grid: nothing to run
            args = [staged.values[id(var)] for var in kernel.params]
            launcher.launch(self.module.kernel(kernel.name, launcher), grid, kernel.block, args)

    @staticmethod
    def release(launcher, staged: _Staged) -> None:
        for owner in staged.owned:
            launcher.free(owner)
        staged.owned.clear()

    @staticmethod
    def _evaluate(expr, staged: _Staged, what: str) -> int:
        value = eval_int(expr, staged.host_values)
        if value is None:
            raise BuildError(f"cannot evaluate {what} from the arguments")
        if value < 0:
            raise ArgumentError(f"{what} is {value}, which is negative")
        return value


class CudaTimeEvaluator(TimeEvaluator):
    """TVM's ``time_evaluator`` with CUDA events: NumPy arguments are copied to the
    device once, one warm-up call, then ``repeat`` measurements of ``number``
    back-to-back launches between two events (``number`` grows until a measurement
    lasts ``min_repeat_ms``). The results are copied back at the end."""

    def __call__(self, *args) -> ProfileResult:
        function = self.function.impl
        checked = self.function.signature.check(args)
        launcher = function.module.launcher
        with launcher.activate():
            staged = function.stage(launcher, checked)
            try:
                function.launch(launcher, staged)  # warm-up (and loads the kernels)
                launcher.synchronize()
                results, number = [], self.number
                for _ in range(self.repeat):
                    while True:
                        elapsed_ms = self._measure(launcher, function, staged, number)
                        if elapsed_ms >= self.min_repeat_ms:
                            break
                        scale = self.min_repeat_ms / max(elapsed_ms, 1e-3)
                        number = max(number * 2, int(number * scale * 1.2))
                    results.append(elapsed_ms / 1e3 / number)
                for array, pointer in staged.copy_back:
                    launcher.copy_to_host(array, pointer)
            finally:
                function.release(launcher, staged)
        return ProfileResult(tuple(results))

    @staticmethod
    def _measure(launcher, function, staged, number: int) -> float:
        start, end = launcher.event(), launcher.event()
        start.record()
        for _ in range(number):
            function.launch(launcher, staged)
        end.record()
        return launcher.elapsed_ms(start, end)


__all__ = ["CudaModule", "CudaFunction", "CudaTimeEvaluator"]
