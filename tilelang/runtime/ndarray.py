"""Devices and arrays in TVM's spelling (``tilelang.nd.array``, ``tilelang.cpu()``).

tilelang keeps tensors in host memory as NumPy arrays; :class:`NDArray` is a thin
wrapper so that MLC-course code (``tvm.nd.array(x)``, ``.numpy()``,
``tvm.nd.empty(shape, dtype)``) runs with its imports changed. Compiled functions take
plain NumPy arrays, ``NDArray`` s and any object exposing ``__dlpack__`` or
``__array_interface__`` (see :func:`as_array`).
"""

from __future__ import annotations

import attrs
import numpy as np

from tilelang.errors import ArgumentError

_DEVICE_CODES = {"cpu": 1, "cuda": 2}
_DLPACK_CPU = 1


@attrs.frozen
class Device:
    """A device: ``Device("cpu", 0)``; made by :func:`cpu` and :func:`cuda`."""

    device_type: str
    device_id: int = 0

    @property
    def exist(self) -> bool:
        """Whether the device is usable here (the CPU always is)."""
        if self.device_type == "cpu":
            return True
        try:
            import pycuda.driver as drv

            drv.init()
            return drv.Device.count() > self.device_id
        except Exception:
            return False

    def sync(self) -> None:
        """Wait for the device's queued work (CPU calls are synchronous)."""

    def __str__(self) -> str:
        return f"{self.device_type}({self.device_id})"


def cpu(device_id: int = 0) -> Device:
    """The host CPU."""
    return Device("cpu", device_id)


def cuda(device_id: int = 0) -> Device:
    """The CUDA GPU ``device_id``."""
    return Device("cuda", device_id)


class NDArray:
    """An array on a device (host memory, held as a NumPy array)."""

    __slots__ = ("_array", "device")

    def __init__(self, array: np.ndarray, device: Device | None = None):
        self._array = array
        self.device = device or cpu()

    @property
    def shape(self) -> tuple:
        return self._array.shape

    @property
    def dtype(self) -> str:
        return str(self._array.dtype)

    def numpy(self) -> np.ndarray:
        """A NumPy copy of the contents."""
        return self._array.copy()

    asnumpy = numpy

    def copyfrom(self, source) -> NDArray:
        """Copy ``source`` (same shape) into this array; returns self."""
        np.copyto(
            self._array, np.asarray(source.numpy() if isinstance(source, NDArray) else source)
        )
        return self

    def __array__(self, dtype=None, copy=None):
        return self._array if dtype is None else self._array.astype(dtype)

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()

    def __repr__(self) -> str:
        return f"<tilelang.nd.NDArray shape={self.shape} dtype={self.dtype} device={self.device}>"


def array(data, device: Device | None = None) -> NDArray:
    """A new NDArray holding a copy of ``data`` (a NumPy array or array-like)."""
    return NDArray(np.array(np.asarray(data), order="C", copy=True), device)


def empty(shape, dtype="float32", device: Device | None = None) -> NDArray:
    """A new, uninitialised NDArray. ``"bfloat16"`` is ``ml_dtypes.bfloat16`` when
    ml_dtypes is installed, else ``uint16`` (the bits), as compiled functions take it."""
    if str(dtype) == "bfloat16":
        from tilelang.ir import bfloat16

        dtype = bfloat16.ml_dtype() or np.dtype(np.uint16)
    return NDArray(np.empty(tuple(shape), dtype=dtype), device)


def as_array(value) -> np.ndarray | None:
    """The NumPy view of a tensor argument (no copy), or None if ``value`` is not one.

    Accepted: NumPy arrays, :class:`NDArray`, objects with ``__array_interface__``
    and objects with ``__dlpack__`` that live on the CPU. Lists are refused on
    purpose: a function writing into a converted copy would lose its output.
    """
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, NDArray):
        return value._array
    if hasattr(value, "__array_interface__"):
        return np.asarray(value)
    if hasattr(value, "__dlpack__"):
        if hasattr(value, "__dlpack_device__"):
            device_type, device_id = value.__dlpack_device__()
            if int(device_type) != _DLPACK_CPU:
                raise ArgumentError(
                    f"the array lives on DLPack device {int(device_type)}:{device_id}; "
                    "tilelang CPU functions need host memory"
                )
        return np.from_dlpack(value)
    return None


__all__ = ["Device", "NDArray", "cpu", "cuda", "array", "empty", "as_array"]
