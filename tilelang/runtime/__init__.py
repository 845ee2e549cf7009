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

from tilelang.runtime.registry import backend_kinds, get_backend, register_backend

# The rest pulls in NumPy; it is imported on first use so that tools which only need
# the registry (tilec --emit tir checking a --target spelling) start fast.
_LAZY = {
    "nd": ("tilelang.runtime.ndarray", None),
    "build": ("tilelang.runtime.build", "build"),
    "Function": ("tilelang.runtime.module", "Function"),
    "Module": ("tilelang.runtime.module", "Module"),
    "ProfileResult": ("tilelang.runtime.module", "ProfileResult"),
    "Device": ("tilelang.runtime.ndarray", "Device"),
    "NDArray": ("tilelang.runtime.ndarray", "NDArray"),
    "cpu": ("tilelang.runtime.ndarray", "cpu"),
    "cuda": ("tilelang.runtime.ndarray", "cuda"),
}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module 'tilelang.runtime' has no attribute {name!r}")
    import importlib

    module_name, attribute = _LAZY[name]
    module = importlib.import_module(module_name)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


__all__ = [
    "build", "Module", "Function", "ProfileResult", "nd", "Device", "NDArray", "cpu",
    "cuda", "register_backend", "get_backend", "backend_kinds",
]  # fmt: skip
