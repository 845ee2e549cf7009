"""What the intrinsic modules share: parsing a description/implementation pair and
attaching its micro-kernel source to the implementation's root block."""

from __future__ import annotations

import attrs

from tilelang.ir import stmt as S
from tilelang.schedule.tensor_intrin import TensorIntrin


def with_imports(impl, c_source: str | None = None, llvm_ir: str | None = None):
    """``impl`` (a PrimFunc) with ``pragma_import_c`` / ``pragma_import_llvm`` on its
    root block; ``tensorize`` carries them to the block it rewrites, and the C and LLVM
    backends compile them into the module."""
    realize = impl.body
    if not isinstance(realize, S.BlockRealize):
        raise ValueError("the implementation's body must be its root block")
    annotations = dict(realize.block.annotations)
    if c_source is not None:
        annotations["pragma_import_c"] = c_source
    if llvm_ir is not None:
        annotations["pragma_import_llvm"] = llvm_ir
    block = attrs.evolve(realize.block, annotations=annotations)
    return impl.with_body(attrs.evolve(realize, block=block))


def register_text(name: str, desc_text: str, impl_text: str, **imports) -> str:
    """Parses ``desc_text``/``impl_text`` (one ``@T.prim_func`` each), attaches the
    imports to the implementation and registers the pair as ``name`` (once)."""
    import tilelang

    if TensorIntrin.get(name, allow_missing=True) is None:
        desc = _only(tilelang.parse(desc_text))
        impl = with_imports(_only(tilelang.parse(impl_text)), **imports)
        TensorIntrin.register(name, desc, impl)
    return name


def _only(parsed):
    if hasattr(parsed, "functions"):
        (parsed,) = parsed.functions.values()
    return parsed
