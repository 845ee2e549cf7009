"""Loading cubins and launching kernels: one interface, three drivers.

- ``pycuda`` (``pip install ".[cuda]"``, what the design asks for),
- ``cuda-python`` (``cuda.bindings.driver``, or ``cuda.cuda`` in older releases),
- ``cupy`` (``cupy.RawModule`` loads the cubin).

:func:`get_launcher` picks the first importable one in that order;
``$TILELANG_CUDA_LAUNCHER`` (``pycuda``, ``cuda-python`` or ``cupy``) forces one. All
of them work in the device's *primary* context (the one CuPy and PyTorch use), so
device arrays from those libraries are valid pointers for every launcher.

Kernel arguments are NumPy scalars: pointers as ``np.uint64``, scalars in their C type.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os

import numpy as np

from tilelang.errors import BuildError


class Launcher:
    """What the CUDA module needs from a driver binding (see the module docstring)."""

    name = "abstract"

    def activate(self):
        """A context manager making the primary context current (for one call)."""
        return contextlib.nullcontext()

    def load_module(self, cubin_path):
        raise NotImplementedError

    def get_kernel(self, module, name: str):
        raise NotImplementedError

    def launch(self, kernel, grid: tuple, block: tuple, args: list) -> None:
        raise NotImplementedError

    def alloc(self, nbytes: int):
        """Device memory: returns ``(pointer, owner)``; freed by :meth:`free`."""
        raise NotImplementedError

    def free(self, owner) -> None:
        raise NotImplementedError

    def copy_to_device(self, pointer: int, array: np.ndarray) -> None:
        raise NotImplementedError

    def copy_to_host(self, array: np.ndarray, pointer: int) -> None:
        raise NotImplementedError

    def synchronize(self) -> None:
        raise NotImplementedError

    def event(self):
        """A new event: ``record()``, then :meth:`elapsed_ms` between two."""
        raise NotImplementedError

    def elapsed_ms(self, start, end) -> float:
        raise NotImplementedError


# ------------------------------------------------------------------- pycuda


class PyCudaLauncher(Launcher):
    name = "pycuda"

    def __init__(self):
        import pycuda.driver as drv

        drv.init()
        if drv.Device.count() < 1:
            raise RuntimeError("pycuda found no CUDA device")
        self.drv = drv
        self.context = drv.Device(0).retain_primary_context()

    @contextlib.contextmanager
    def activate(self):
        self.context.push()
        try:
            yield
        finally:
            self.drv.Context.pop()

    def load_module(self, cubin_path):
        return self.drv.module_from_buffer(open(cubin_path, "rb").read())

    def get_kernel(self, module, name):
        return module.get_function(name)

    def launch(self, kernel, grid, block, args):
        kernel(*args, grid=tuple(grid), block=tuple(block))

    def alloc(self, nbytes):
        allocation = self.drv.mem_alloc(max(nbytes, 1))
        return int(allocation), allocation

    def free(self, owner):
        owner.free()

    def copy_to_device(self, pointer, array):
        self.drv.memcpy_htod(pointer, array)

    def copy_to_host(self, array, pointer):
        self.drv.memcpy_dtoh(array, pointer)

    def synchronize(self):
        self.drv.Context.synchronize()

    def event(self):
        return _RecordingEvent(self.drv.Event(), lambda e: e.record())

    def elapsed_ms(self, start, end):
        end.event.synchronize()
        return end.event.time_since(start.event)


# -------------------------------------------------------------- cuda-python


def _cuda_driver():
    try:
        from cuda.bindings import driver
    except ImportError:
        from cuda import cuda as driver  # cuda-python before 12.6
    return driver


class CudaPythonLauncher(Launcher):
    name = "cuda-python"

    def __init__(self):
        self.cu = _cuda_driver()
        self.check(self.cu.cuInit(0))
        (count,) = self.check(self.cu.cuDeviceGetCount())
        if count < 1:
            raise RuntimeError("cuda-python found no CUDA device")
        (self.device,) = self.check(self.cu.cuDeviceGet(0))
        (self.context,) = self.check(self.cu.cuDevicePrimaryCtxRetain(self.device))

    def check(self, result):
        """Unpack ``(CUresult, values...)``, raising on an error."""
        err, *values = result if isinstance(result, tuple) else (result,)
        # CUresult is an IntEnum in some releases and a plain Enum in others
        if err != self.cu.CUresult.CUDA_SUCCESS:
            _, text = self.cu.cuGetErrorString(err)
            message = text.decode() if isinstance(text, bytes) else str(text)
            raise RuntimeError(f"CUDA driver error {getattr(err, 'name', err)}: {message}")
        return values

    @contextlib.contextmanager
    def activate(self):
        self.check(self.cu.cuCtxSetCurrent(self.context))
        yield

    def load_module(self, cubin_path):
        image = np.frombuffer(open(cubin_path, "rb").read() + b"\0", dtype=np.uint8)
        (module,) = self.check(self.cu.cuModuleLoadData(image.ctypes.data))
        return module

    def get_kernel(self, module, name):
        (function,) = self.check(self.cu.cuModuleGetFunction(module, name.encode()))
        return function

    def launch(self, kernel, grid, block, args):
        holders = [np.array([a]) for a in args]  # each argument's bytes, kept alive
        pointers = (ctypes.c_void_p * max(len(args), 1))(*[h.ctypes.data for h in holders])
        self.check(
            self.cu.cuLaunchKernel(
                kernel, *map(int, grid), *map(int, block), 0, 0, ctypes.addressof(pointers), 0
            )
        )

    def alloc(self, nbytes):
        (pointer,) = self.check(self.cu.cuMemAlloc(max(nbytes, 1)))
        return int(pointer), pointer

    def free(self, owner):
        self.check(self.cu.cuMemFree(owner))

    def copy_to_device(self, pointer, array):
        if array.nbytes:
            self.check(self.cu.cuMemcpyHtoD(pointer, array.ctypes.data, array.nbytes))

    def copy_to_host(self, array, pointer):
        if array.nbytes:
            self.check(self.cu.cuMemcpyDtoH(array.ctypes.data, pointer, array.nbytes))

    def synchronize(self):
        self.check(self.cu.cuCtxSynchronize())

    def event(self):
        (event,) = self.check(self.cu.cuEventCreate(0))
        return _RecordingEvent(event, lambda e: self.check(self.cu.cuEventRecord(e, 0)))

    def elapsed_ms(self, start, end):
        self.check(self.cu.cuEventSynchronize(end.event))
        (ms,) = self.check(self.cu.cuEventElapsedTime(start.event, end.event))
        return float(ms)


# --------------------------------------------------------------------- CuPy


class CupyLauncher(Launcher):
    name = "cupy"

    def __init__(self):
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("CuPy found no CUDA device")
        self.cupy = cupy

    def load_module(self, cubin_path):
        return self.cupy.RawModule(path=str(cubin_path))

    def get_kernel(self, module, name):
        return module.get_function(name)

    def launch(self, kernel, grid, block, args):
        kernel(tuple(map(int, grid)), tuple(map(int, block)), tuple(args))

    def alloc(self, nbytes):
        memory = self.cupy.cuda.alloc(max(nbytes, 1))
        return int(memory.ptr), memory

    def free(self, owner):
        pass  # CuPy's memory pool takes it back when the MemoryPointer goes away

    def copy_to_device(self, pointer, array):
        if array.nbytes:
            self.cupy.cuda.runtime.memcpy(
                pointer, array.ctypes.data, array.nbytes, self.cupy.cuda.runtime.memcpyHostToDevice
            )

    def copy_to_host(self, array, pointer):
        if array.nbytes:
            self.cupy.cuda.runtime.memcpy(
                array.ctypes.data, pointer, array.nbytes, self.cupy.cuda.runtime.memcpyDeviceToHost
            )

    def synchronize(self):
        self.cupy.cuda.runtime.deviceSynchronize()

    def event(self):
        return _RecordingEvent(self.cupy.cuda.Event(), lambda e: e.record())

    def elapsed_ms(self, start, end):
        end.event.synchronize()
        return float(self.cupy.cuda.get_elapsed_time(start.event, end.event))


class _RecordingEvent:
    def __init__(self, event, record):
        self.event, self._record = event, record

    def record(self) -> None:
        self._record(self.event)


# --------------------------------------------------------------- selection

LAUNCHERS = {"pycuda": PyCudaLauncher, "cuda-python": CudaPythonLauncher, "cupy": CupyLauncher}


def get_launcher(name: str | None = None) -> Launcher:
    """The launcher ``name``, ``$TILELANG_CUDA_LAUNCHER``, or the first one that works."""
    name = name or os.environ.get("TILELANG_CUDA_LAUNCHER") or None
    if name is not None and name not in LAUNCHERS:
        raise BuildError(f"unknown CUDA launcher {name!r}; choose from {', '.join(LAUNCHERS)}")
    failures = []
    for candidate in [name] if name else list(LAUNCHERS):
        try:
            return _make_launcher(candidate)
        except Exception as exc:  # not installed, or no device: try the next one
            failures.append(f"{candidate}: {type(exc).__name__}: {exc}")
    raise BuildError(
        "cannot run CUDA kernels here (" + "; ".join(failures) + "). Install pycuda "
        "(pip install '.[cuda]'), cuda-python or CuPy, on a machine with an NVIDIA GPU"
    )


@functools.cache
def _make_launcher(name: str) -> Launcher:
    return LAUNCHERS[name]()


def available_launchers() -> list[str]:
    """The launchers that work on this machine (for tests)."""
    names = []
    for name in LAUNCHERS:
        try:
            get_launcher(name)
            names.append(name)
        except BuildError:
            continue
    return names


__all__ = ["Launcher", "get_launcher", "available_launchers", "LAUNCHERS"]
