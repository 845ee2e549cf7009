"""Type annotations of variables (TVM's ``Var.type_annotation`` / ``Var.ty``).

A variable's ``dtype`` is what tilelang computes with; a handle may also say what it
points to, as TVM's ``T.handle("float32", "shared")`` does: a :class:`PointerType`
of an element type (``None``: void) in a storage scope (``""``: unstated). An untyped
``T.handle`` is the void pointer, so ``T.handle("void")`` and ``T.handle`` are one type.
"""

from __future__ import annotations

import attrs

from tilelang.ir.dtype import DataType


@attrs.frozen
class PrimType:
    """The type of a scalar or vector value of ``dtype``."""

    dtype: DataType


@attrs.frozen
class PointerType:
    """A pointer to ``element_type`` (a :class:`PrimType`, ``None`` for void) in
    ``storage_scope``."""

    element_type: PrimType | None = None
    storage_scope: str = ""

    def script(self) -> str:
        """The annotation as TVM prints it: ``T.handle``, ``T.handle("float32")``,
        ``T.handle("float32", "shared")``, ``T.handle(storage_scope="shared")``."""
        if self.element_type is None:
            return (
                f'T.handle(storage_scope="{self.storage_scope}")'
                if self.storage_scope
                else ("T.handle")
            )
        if self.storage_scope:
            return f'T.handle("{self.element_type.dtype}", "{self.storage_scope}")'
        return f'T.handle("{self.element_type.dtype}")'


VOID_POINTER = PointerType()


def pointer_type(element: str, storage_scope: str = "") -> PointerType:
    """``T.handle(element, storage_scope)``; ``element`` ``"void"`` is the void pointer."""
    return PointerType(None if element == "void" else PrimType(DataType(element)), storage_scope)


__all__ = ["PrimType", "PointerType", "VOID_POINTER", "pointer_type"]
