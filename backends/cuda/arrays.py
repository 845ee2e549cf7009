"""Device arrays as arguments: anything exposing ``__cuda_array_interface__`` (CuPy,
pycuda's GPUArray, PyTorch CUDA tensors, Numba) or ``__dlpack__`` on a CUDA device is
used in place; NumPy arrays (and other host arrays) are copied to the device and back.

:class:`CudaSignature` is the runtime's argument check (:mod:`tilelang.runtime.args`)
extended to device arrays: shape, dtype and strides are checked the same way, before
any kernel runs.
"""

from __future__ import annotations

import attrs
import numpy as np

from tilelang.errors import ArgumentError
from tilelang.runtime.args import Signature

_DLPACK_CUDA = (2, 3, 13)  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged


@attrs.frozen
class _Flags:
    c_contiguous: bool
    writeable: bool


@attrs.frozen
class DeviceArray:
    """A view of a device array: its pointer and layout (``strides`` in bytes), and the
    object that owns the memory (kept alive while the view lives)."""

    ptr: int
    shape: tuple
    dtype: np.dtype
    strides: tuple
    flags: _Flags
    owner: object = attrs.field(eq=False, repr=False)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    @property
    def span(self) -> tuple[int, int]:
        """``[first, last)`` byte addresses the array may touch."""
        if self.nbytes == 0:
            return self.ptr, self.ptr
        low = high = self.ptr
        for extent, stride in zip(self.shape, self.strides):
            if stride >= 0:
                high += (extent - 1) * stride
            else:
                low += (extent - 1) * stride
        return low, high + self.dtype.itemsize


def _contiguous_strides(shape, itemsize) -> tuple:
    strides, step = [], itemsize
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def device_array(value) -> DeviceArray | None:
    """The device view of ``value``, or None when it is not a device array."""
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is None and hasattr(value, "__dlpack__") and _on_cuda_dlpack(value):
        interface = _interface_via_cupy(value)
    if interface is None:
        return None
    shape = tuple(int(x) for x in interface["shape"])
    dtype = np.dtype(interface["typestr"])
    ptr, readonly = interface["data"]
    strides = interface.get("strides")
    strides = _contiguous_strides(shape, dtype.itemsize) if strides is None else tuple(strides)
    contiguous = strides == _contiguous_strides(shape, dtype.itemsize) or 0 in shape
    return DeviceArray(int(ptr or 0), shape, dtype, strides, _Flags(contiguous, not readonly),
                       value)  # fmt: skip


def _on_cuda_dlpack(value) -> bool:
    try:
        device_type, _ = value.__dlpack_device__()
    except Exception:
        return False
    return int(device_type) in _DLPACK_CUDA


def _interface_via_cupy(value):
    try:
        import cupy
    except ImportError as exc:
        raise ArgumentError(
            "a DLPack array on a CUDA device without __cuda_array_interface__ needs CuPy "
            "to be read in place"
        ) from exc
    return cupy.from_dlpack(value).__cuda_array_interface__


class CudaSignature(Signature):
    """The argument check of CUDA functions: device arrays are accepted as they are."""

    def check_array(self, label: str, buffer, arg):
        array = device_array(arg)
        if array is None:
            return super().check_array(label, buffer, arg)
        expected = np.dtype(buffer.dtype.numpy_name())
        if array.dtype != expected:
            raise ArgumentError(f"{label}: expected dtype {buffer.dtype}, got {array.dtype}")
        return array

    def _check_no_overlap(self, checked) -> None:
        super()._check_no_overlap(checked)
        arrays = [(p, a) for p, a in zip(self.params, checked) if isinstance(a, DeviceArray)]
        for i, (p, a) in enumerate(arrays):
            for q, b in arrays[i + 1 :]:
                (a0, a1), (b0, b1) = a.span, b.span
                writes = self.writes.get(id(p)) or self.writes.get(id(q))
                if writes and a0 < b1 and b0 < a1:
                    raise ArgumentError(
                        f"arguments '{p.name}' and '{q.name}' overlap in device memory, but "
                        f"{self.name} is declared tir.noalias and writes one of them"
                    )


__all__ = ["DeviceArray", "device_array", "CudaSignature"]
