"""Extern code attached to the program: the ``pragma_import_c`` and
``pragma_import_llvm`` annotations (TVM's spelling).

A loop (``sch.annotate(loop, "pragma_import_c", c_source)``) or a block (a tensor
intrinsic's implementation puts the annotation on its root block, which
``tensorize`` carries over) can hold C source text or LLVM IR text, typically the
micro-kernel a ``T.call_extern`` calls. The C and LLVM backends compile it into the
module they build: C source is compiled with the extern sources, LLVM IR is linked
into the LLVM module (llvm backend) or compiled to an object file (c backend).

``LowerOpaqueBlock`` keeps a block's import annotations as ``AttrStmt``s, so they
survive lowering; :func:`collect_imports` finds both forms in a lowered module.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.function import PrimFunc
from tilelang.ir.functor import post_order_visit

IMPORT_C = "pragma_import_c"
IMPORT_LLVM = "pragma_import_llvm"
IMPORT_KEYS = (IMPORT_C, IMPORT_LLVM)


@attrs.frozen
class ExternImports:
    """The C sources and LLVM IR modules a lowered module asks for (deduplicated, in
    program order)."""

    c_sources: tuple = ()
    llvm_modules: tuple = ()


def _text(value, key: str) -> str:
    if isinstance(value, E.StringImm):
        value = value.value
    if not isinstance(value, str):
        raise BuildError(f"{key} expects source text (a string), not {type(value).__name__}")
    return value


def collect_imports(mod) -> ExternImports:
    """Every ``pragma_import_*`` of ``mod``'s PrimFuncs: on loops, and as AttrStmts."""
    found = {IMPORT_C: [], IMPORT_LLVM: []}

    def add(key, value):
        text = _text(value, key)
        if text not in found[key]:
            found[key].append(text)

    def visit(node):
        if isinstance(node, S.For):
            for key in IMPORT_KEYS:
                if key in node.annotations:
                    add(key, node.annotations[key])
        elif isinstance(node, S.AttrStmt) and node.attr_key in IMPORT_KEYS:
            add(node.attr_key, node.value)
        elif isinstance(node, S.Block):
            for key in IMPORT_KEYS:
                if key in node.annotations:
                    add(key, node.annotations[key])

    for func in mod.functions.values():
        if isinstance(func, PrimFunc):
            post_order_visit(func.body, visit)
    return ExternImports(tuple(found[IMPORT_C]), tuple(found[IMPORT_LLVM]))


def block_import_attrs(block: S.Block, body: S.Stmt) -> S.Stmt:
    """``body`` wrapped in one AttrStmt per import annotation of ``block`` (used when a
    block is lowered away)."""
    for key in IMPORT_KEYS:
        if key in block.annotations:
            body = S.AttrStmt(
                E.IntImm("int32", 0), key, E.StringImm(_text(block.annotations[key], key)), body
            )
    return body


def llvm_ir_objects(modules, work: Path) -> list[str]:
    """Each LLVM IR text compiled (for the host CPU, position-independent) into an
    object file in ``work``; returns their paths (for the C compiler's link line)."""
    if not modules:
        return []
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    features = llvm.get_host_cpu_features().flatten()
    machine = llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=features, opt=3, reloc="pic", codemodel="default"
    )
    paths = []
    for index, text in enumerate(modules):
        module = parse_llvm_import(text)
        module.triple = machine.triple
        path = work / f"import_llvm_{index}.o"
        path.write_bytes(machine.emit_object(module))
        paths.append(str(path))
    return paths


def parse_llvm_import(text: str):
    """The llvmlite module of an imported LLVM IR text, verified (BuildError if not)."""
    import llvmlite.binding as llvm

    try:
        module = llvm.parse_assembly(text)
        module.verify()
    except RuntimeError as error:
        raise BuildError(f"{IMPORT_LLVM}: the LLVM IR does not parse: {error}") from None
    return module


def link_llvm_imports(ir_text: str, modules) -> str:
    """``ir_text`` with every imported LLVM IR module linked in (``ir_text`` itself
    when there are none)."""
    if not modules:
        return ir_text
    main = parse_llvm_import(ir_text)
    for text in modules:
        extra = parse_llvm_import(text)
        extra.triple, extra.data_layout = main.triple, main.data_layout
        try:
            main.link_in(extra)
        except RuntimeError as error:
            raise BuildError(f"{IMPORT_LLVM}: the LLVM IR does not link: {error}") from None
    return str(main)
