"""Calling native code through ctypes: shared by the C and LLVM backends.

A lowered PrimFunc compiles to a native function whose parameters are, in order
(docs/lowered_ir.md): one data pointer per buffer parameter, one value per scalar
parameter, one value per ``tl.size_vars`` entry. :func:`make_caller` turns such a
function pointer into a Python callable taking the *checked arguments* of
:meth:`tilelang.runtime.args.Signature.check`.
"""

from __future__ import annotations

import ctypes

import attrs

from tilelang.errors import BuildError
from tilelang.ir.dtype import DataType
from tilelang.ir.expr import IntImm

_SCALAR_CTYPES = {
    "bool": ctypes.c_bool,
    "int8": ctypes.c_int8,
    "int16": ctypes.c_int16,
    "int32": ctypes.c_int32,
    "int64": ctypes.c_int64,
    "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16,
    "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float,
    "float64": ctypes.c_double,
    "handle": ctypes.c_void_p,
}


def scalar_ctype(dtype) -> type:
    """The ctypes type of a scalar parameter of ``dtype``."""
    ctype = _SCALAR_CTYPES.get(str(DataType(dtype)))
    if ctype is None:
        raise BuildError(f"a native function cannot take a scalar of type {dtype}")
    return ctype


def native_argtypes(func) -> list:
    """The ctypes argument types of a lowered PrimFunc's native function."""
    types = []
    for param in func.params:
        types.append(ctypes.c_void_p if param in func.buffer_map else scalar_ctype(param.dtype))
    types.extend(scalar_ctype(var.dtype) for var in func.attrs.get("tl.size_vars", ()))
    return types


def function_type(func) -> type:
    """The ``CFUNCTYPE`` (returning void) of a lowered PrimFunc's native function."""
    return ctypes.CFUNCTYPE(None, *native_argtypes(func))


def _interface_address(array) -> int:
    return array.__array_interface__["data"][0]


def _address_reader():
    """The fastest correct way to read an ndarray's data address.

    ``__array_interface__`` builds a dict per call (microseconds: more than a small
    kernel takes). NumPy's array object is ``PyObject_HEAD`` followed by its data
    pointer (``PyArrayObject_fields.data``), and CPython's ``id`` is the object's
    address, so reading the pointer there costs ~0.1 us. The layout is checked here
    on probe arrays (views and offsets included); where it does not hold, the
    portable reader is used."""
    import numpy as np

    ndarray = np.ndarray
    offset = object.__basicsize__  # sizeof(PyObject): the data pointer follows
    read = ctypes.c_void_p.from_address

    def fast(array) -> int:
        if type(array) is not ndarray:  # subclasses and other objects: the portable way
            return _interface_address(array)
        return read(id(array) + offset).value or 0

    try:
        base = np.arange(64, dtype=np.float32).reshape(8, 8)
        probes = (base, base[3:], base[:, 5:], base.T, np.empty(0), np.zeros((), np.int8))
        if all(fast(a) == _interface_address(a) for a in probes):
            return fast
    except (ValueError, OSError, TypeError):
        pass
    return _interface_address


_address = _address_reader()


def _pointer_of(offset_bytes: int):
    """Converter from a checked array to its data address, shifted back by the buffer's
    constant ``elem_offset`` (the lowered code adds it to every index)."""
    if offset_bytes:
        return lambda array: _address(array) - offset_bytes
    return _address


def make_caller(cfunc, func, after_call=None):
    """A callable ``caller(*checked_args)`` that runs the native function ``cfunc``.

    ``cfunc`` is a ctypes function (from a ``CDLL`` attribute or ``function_type(func)
    (address)``); its ``argtypes`` are set here. ``after_call()``, when given, runs
    after each call (e.g. to raise an error the native code recorded).
    """
    cfunc.argtypes = native_argtypes(func)
    cfunc.restype = None
    converters = []
    for param in func.params:
        buffer = func.buffer_map.get(param)
        if buffer is None:
            converters.append(None)
            continue
        offset = buffer.elem_offset
        elements = offset.value if isinstance(offset, IntImm) else 0
        converters.append(_pointer_of(elements * buffer.dtype.bits // 8))
    converters = tuple(converters)
    num_params = len(converters)

    def caller(*args):
        native = [conv(a) if conv is not None else a for conv, a in zip(converters, args)]
        native.extend(args[num_params:])
        cfunc(*native)
        if after_call is not None:
            after_call()

    # for callers that work out most native arguments once (the graph VM)
    caller.native = NativeCall(cfunc, converters, after_call or _nothing)
    return caller


def _nothing() -> None:
    pass


@attrs.frozen
class NativeCall:
    """What :func:`make_caller` wraps: the ctypes function, per parameter the converter
    from a checked array to its address (None for a scalar), and what runs after."""

    cfunc: object
    converters: tuple
    after_call: object


__all__ = ["make_caller", "NativeCall", "native_argtypes", "function_type", "scalar_ctype"]
