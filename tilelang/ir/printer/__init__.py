"""The TVMScript printer: ``script(node)`` is the canonical text of any IR node.

The output follows docs/language.md (and TVM's own printed form), and the parser reads
it back: ``tilelang.parse(script(mod))`` is structurally equal to ``mod``. ``Node.script()``,
``str(node)`` and ``repr(node)`` all print through here.

- :mod:`~tilelang.ir.printer.names`: unique, valid printed names
- :mod:`~tilelang.ir.printer.expr`: expressions, Python precedence
- :mod:`~tilelang.ir.printer.stmt`: statements, loops, blocks
- :mod:`~tilelang.ir.printer.func`: buffers, functions, modules
"""

from __future__ import annotations

from tilelang.ir.node import deep_recursion
from tilelang.ir.printer.func import ScriptPrinter, implicit_root
from tilelang.ir.printer.names import sanitize


def script(node, show_meta: bool = False) -> str:
    """The canonical TVMScript text of ``node`` (a module, function, statement,
    expression, buffer or region). Deep trees print without hitting the recursion limit.

    ``show_meta`` is TVM's keyword: TVM prints large constants as references into a
    ``metadata`` section that it appends only with ``show_meta=True``. This printer
    writes every value inline, so the text is complete (and parses back) either way.
    """
    if not isinstance(show_meta, bool):
        raise TypeError(f"show_meta must be True or False, not {show_meta!r}")
    printer = ScriptPrinter()
    with deep_recursion():
        printer.print_node(node)
    return "\n".join(printer.lines)


__all__ = ["script", "ScriptPrinter", "implicit_root", "sanitize"]
