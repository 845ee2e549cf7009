"""The runtime: ``build``, compiled Modules, argument checking, arrays and devices.

Backend contract
----------------
A backend is a build function registered for a target kind
(:func:`register_backend`, or the entry-point group ``tilelang.backends``)::

    def build(lowered_mod: IRModule, target: Target, **build_options) -> backend_module

``lowered_mod`` obeys docs/lowered_ir.md. The *backend module* it returns has

- ``functions``: a dict from each function's name in ``lowered_mod`` to a callable
  ``fn(*checked_args)``. The checked arguments (made by
  :meth:`tilelang.runtime.args.Signature.check`, never by the backend) are: one
  NumPy array per buffer parameter (dtype, shape, strides already checked; element 0
  of the array is element 0 of the buffer, so a backend adds a constant
  ``elem_offset`` itself), one Python ``int``/``float``/``bool`` per scalar parameter,
  then one ``int`` per variable of ``attrs["tl.size_vars"]``. It writes its outputs
  into the arrays and returns None.
- ``get_source(fmt="")``: the generated code as text.
- optionally ``export_library(path: pathlib.Path)``; without it
  ``Module.export_library`` raises ``BuildError("... not supported ...")``.

Native backends reuse :func:`tilelang.runtime.ctypes_call.make_caller` (a ctypes
function + the lowered PrimFunc -> a caller of checked arguments) and
:mod:`tilelang.runtime.cache` (content-hashed, atomically written shared libraries).
Errors: code generation or compiler failures raise :class:`tilelang.BuildError`.
"""

from tilelang.runtime import ndarray as nd
from tilelang.runtime.build import build
from tilelang.runtime.module import Function, Module, ProfileResult
from tilelang.runtime.ndarray import Device, NDArray, cpu, cuda
from tilelang.runtime.registry import backend_kinds, get_backend, register_backend

__all__ = [
    "build", "Module", "Function", "ProfileResult", "nd", "Device", "NDArray", "cpu",
    "cuda", "register_backend", "get_backend", "backend_kinds",
]  # fmt: skip
