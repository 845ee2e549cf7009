"""verify_lowered: the contract of docs/lowered_ir.md, checked once before any backend.

``tilelang.build`` calls :func:`verify_lowered` on the lowered module before handing
it to the backend of the target (python, c, llvm, cuda or one registered from
outside), so that IR which is not in the flat form (a lowering pass disabled with
``tilec --disable-pass FlattenBuffer``, a user pass that left a block behind, a
hand-built function) is a :class:`~tilelang.errors.BuildError` naming the function
and the first offending node, and never a crash inside a code generator.

Checked, in this order, per ``PrimFunc``:

* the attributes the runtime and the backends read: ``tl.lowered``,
  ``global_symbol`` (a string) and ``tl.size_vars``;
* every buffer parameter has its (original) buffer in ``buffer_map``;
* no ``Block`` / ``BlockRealize`` is left in the body;
* every ``BufferLoad`` / ``BufferStore`` has exactly one index into a flat buffer
  (shape ``(n,)``, no strides, ``elem_offset`` 0);
* every ``Allocate`` declares its flat buffer over its own storage
  (``Allocate(v, ..., DeclBuffer(buffer with data v, ...))``).
"""

from __future__ import annotations

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Buffer
from tilelang.ir.function import IRModule, PrimFunc
from tilelang.ir.functor import StmtExprVisitor
from tilelang.ir.printer import script
from tilelang.transform.verify_calls import check_module_calls

# The pass of the pipeline that establishes each rule: the hint for a user who
# disabled it.
_MADE_BY = {
    "attrs": "BindArguments",
    "block": "LowerOpaqueBlock",
    "access": "FlattenBuffer",
    "allocate": "LowerOpaqueBlock",
}


class _Violation(Exception):
    def __init__(self, rule: str, reason: str, node=None):
        super().__init__(reason)
        self.rule, self.reason, self.node = rule, reason, node


def verify_lowered(mod: IRModule | PrimFunc, target_kind: str | None = None) -> None:
    """Raise :class:`BuildError` unless every PrimFunc of ``mod`` has the lowered form
    of docs/lowered_ir.md; the message names the function, the rule broken, the first
    offending node (printed) and the lowering pass that establishes the rule.

    Example::

        verify_lowered(tilelang.lower(mod))         # passes
        verify_lowered(mod)                         # BuildError: function 'mm' is not
                                                    # lowered: ... (blocks are left)
    """
    funcs = [("main", mod)] if isinstance(mod, PrimFunc) else list(mod)
    for name, func in funcs:
        if not isinstance(func, PrimFunc):
            continue
        symbol = func.attrs.get("global_symbol", name)
        try:
            _check_function(func)
        except _Violation as violation:
            raise BuildError(_message(symbol, violation, target_kind)) from None
    if isinstance(mod, IRModule):
        check_module_calls(mod.functions)


def _message(symbol: str, violation: _Violation, target_kind: str | None) -> str:
    backend = f"the {target_kind} backend" if target_kind else "a backend"
    text = (
        f"function {symbol!r} is not lowered: {violation.reason}. {backend.capitalize()} "
        f"needs the lowered IR of docs/lowered_ir.md: lower with tilelang.lower and keep "
        f"the pass {_MADE_BY[violation.rule]} enabled"
    )
    if violation.node is not None:
        text += "\n  at: " + _first_line(violation.node)
    return text


def _first_line(node) -> str:
    lines = script(node).splitlines() or [""]
    head = lines[0].strip()
    return head + (" ..." if len(lines) > 1 else "")


def _check_function(func: PrimFunc) -> None:
    if not func.attrs.get("tl.lowered"):
        raise _Violation("attrs", 'it has no attribute "tl.lowered" = True')
    if not isinstance(func.attrs.get("global_symbol"), str):
        raise _Violation("attrs", 'it has no string attribute "global_symbol"')
    if "tl.size_vars" not in func.attrs:
        raise _Violation("attrs", 'it has no attribute "tl.size_vars"')
    for param in func.params:
        if param.dtype.is_handle() and func.buffer_map.get(param) is None:
            raise _Violation("attrs", f"the handle parameter {param.name} has no buffer")
    _ContractChecker().visit(func.body)


class _ContractChecker(StmtExprVisitor):
    """Stops at the first node that breaks the contract (see the module docstring)."""

    def visit_block_realize(self, op: S.BlockRealize):
        raise _Violation("block", f"block {op.block.name_hint!r} is left in the body", op)

    def visit_block(self, op: S.Block):
        raise _Violation("block", f"block {op.name_hint!r} is left in the body", op)

    def visit_buffer_load(self, op: E.BufferLoad):
        _check_access(op, op.buffer, op.indices)
        self.generic_visit(op)

    def visit_buffer_store(self, op: S.BufferStore):
        _check_access(op, op.buffer, op.indices)
        self.generic_visit(op)

    def visit_allocate(self, op: S.Allocate):
        body = op.body
        if not (isinstance(body, S.DeclBuffer) and body.buffer.data is op.buffer_var):
            raise _Violation(
                "allocate",
                f"the allocation of {op.buffer_var.name} does not declare its flat buffer "
                "right inside it",
                op,
            )
        self.generic_visit(op)


def _check_access(node, buffer: Buffer, indices) -> None:
    if len(indices) != 1:
        raise _Violation(
            "access",
            f"an access to buffer {buffer.name} has {len(indices)} indices (lowered IR "
            "has flat, one-index accesses)",
            node,
        )
    offset = buffer.elem_offset
    flat_offset = isinstance(offset, E.IntImm) and offset.value == 0
    if len(buffer.shape) != 1 or buffer.strides or not flat_offset:
        raise _Violation(
            "access",
            f"buffer {buffer.name} is accessed but is not flat (shape "
            f"{tuple(script(x) for x in buffer.shape)}, {len(buffer.strides)} strides, "
            f"elem_offset {script(offset)})",
            node,
        )


__all__ = ["verify_lowered"]
