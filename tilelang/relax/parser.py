"""Building ``@R.function`` graph functions from the .tir parse tree.

The .tir grammar is Python-shaped and meaning-free, so a graph function parses with
it unchanged; the file-level builder (:mod:`tilelang.parser.builder`) hands each
``@R.function`` definition to :func:`build_relax_function`. The accepted language
is what :mod:`tilelang.relax.printer` writes, plus the spellings of SEED_PROGRAMS
§5: ``R.Tensor((1, "m"), "float32")`` (dtype positional or ``dtype=``), symbolic
sizes declared as ``m = T.int64()`` or ``m, n = T.int64(), T.int64()``,
``with R.dataflow():`` ... ``R.output(...)``, ``R.call_tir(cls.f, (args,), out_sinfo)``,
``R.call_dps_packed("name", (args,), out_sinfo)``, ``R.const(values, "dtype")`` and
``return var``. Errors are located :class:`~tilelang.errors.TIRSyntaxError` s.
"""

from __future__ import annotations

import ast

from lark import Tree

from tilelang.errors import ArgumentError
from tilelang.ir import DataTypeError
from tilelang.ir import Var as SizeVar
from tilelang.ir.convert import binary
from tilelang.ir.dtype import DataType
from tilelang.parser.diagnostics import location_of
from tilelang.parser.stmt_builder import statements_of
from tilelang.relax.expr import (
    BindingBlock,
    Constant,
    DataflowBlock,
    DataflowVar,
    Function,
    SeqExpr,
    Var,
    VarBinding,
    call_dps_packed,
    call_tir,
    const,
)
from tilelang.relax.struct_info import TensorStructInfo

_OPS = {"+": "add", "-": "sub", "*": "mul", "//": "floordiv", "%": "floormod"}


def _dotted(tree) -> str | None:
    """``R.call_tir`` for a ``getattr`` chain of names, else None."""
    if isinstance(tree, Tree) and tree.data == "name":
        return str(tree.children[0])
    if isinstance(tree, Tree) and tree.data == "getattr":
        head = _dotted(tree.children[0])
        return None if head is None else f"{head}.{tree.children[1]}"
    return None


class _Builder:
    def __init__(self, source, aliases, module_name=None):
        self.source, self.aliases = source, aliases
        self.sizes: dict[str, Var] = {}
        self.vars: dict[str, Var] = {}
        # names of the enclosing module: ``cls`` and the class's own name (TVM's printer
        # writes ``cls = Module`` and then ``cls.f``)
        self.module_names = {"cls"} | ({module_name} if module_name else set())
        self.where = self.definition = None  # the parameter or statement being built

    def error(self, where, message: str):
        for fallback in (self.where, self.definition):  # a node without tokens ([], return)
            if location_of(where)[0] is None:
                where = fallback  # the parameter or statement, or else the function
        return self.source.error_at(where, message)

    def number_text(self, tree) -> str:
        """A numeric literal's text, refused before conversion when no type holds it
        (converting thousands of digits is slow or refused)."""
        text = str(tree.children[0])
        if len(text) > 80:
            raise self.error(tree, f"the numeric literal has {len(text)} digits; no type holds it")
        return text

    def canonical(self, dotted: str | None) -> str | None:
        """``R.x`` / ``T.x`` with the file's aliases resolved."""
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        return f"{self.aliases.names.get(head, head)}.{rest}" if rest else dotted

    # ------------------------------------------------------------ calls

    def call_parts(self, tree):
        """(canonical callee, positional trees, keyword trees) of a call."""
        callee = self.canonical(_dotted(tree.children[0]))
        positional, keywords = [], {}
        arguments = tree.children[1]
        for arg in arguments.children if arguments is not None else ():
            if isinstance(arg, Tree) and arg.data == "kwarg":
                keywords[str(arg.children[0])] = arg.children[1]
            elif arg is not None:
                positional.append(arg)
        return callee, positional, keywords

    def string(self, tree) -> str:
        if not (isinstance(tree, Tree) and tree.data == "string"):
            raise self.error(tree, "expected a string")
        return "".join(ast.literal_eval(str(t)) for t in tree.children)

    # ------------------------------------------------------------ sizes and struct info

    def size_var(self, name: str, dtype="int64") -> Var:
        var = self.sizes.get(name)
        if var is None:
            var = self.sizes[name] = SizeVar(name, dtype)
        return var

    def dim(self, tree):
        if isinstance(tree, Tree):
            if tree.data == "int_lit":
                return int(self.number_text(tree), 0)
            if tree.data == "string":
                return self.size_var(self.string(tree))
            if tree.data == "name":
                name = str(tree.children[0])
                if name not in self.sizes:
                    raise self.error(
                        tree, f"undefined size {name}; declare it as {name} = T.int64()"
                    )
                return self.sizes[name]
            if tree.data == "arith":
                value = self.dim(tree.children[0])
                for op, operand in zip(tree.children[1::2], tree.children[2::2]):
                    if str(op) not in _OPS:
                        raise self.error(tree, f"the operator {op} is not allowed in a shape")
                    value = binary(_OPS[str(op)], value, self.dim(operand))
                return value
        raise self.error(tree, "a dimension is an int, a size name or an expression of them")

    def struct_info(self, tree) -> TensorStructInfo:
        if not (isinstance(tree, Tree) and tree.data == "call"):
            raise self.error(tree, 'expected R.Tensor((...), "dtype")')
        callee, positional, keywords = self.call_parts(tree)
        if callee != "R.Tensor":
            raise self.error(tree, f'expected R.Tensor((...), "dtype"), not {callee}(...)')
        shape_tree = positional[0] if positional else keywords.get("shape")
        dtype_tree = positional[1] if len(positional) > 1 else keywords.get("dtype")
        dtype = "float32" if dtype_tree is None else self.string(dtype_tree)
        try:
            dtype = DataType(dtype)
        except DataTypeError as exc:
            raise self.error(dtype_tree, str(exc)) from None
        if shape_tree is None:
            ndim = keywords.get("ndim")
            return TensorStructInfo(None, dtype, ndim=-1 if ndim is None else int(self.dim(ndim)))
        if not (isinstance(shape_tree, Tree) and shape_tree.data in ("tuple", "list")):
            raise self.error(shape_tree, "a tensor shape is a tuple: (1, m)")
        dims = tuple(self.dim(d) for d in shape_tree.children if d is not None)
        return TensorStructInfo(dims, dtype)

    # ------------------------------------------------------------ values

    def value(self, tree):
        if isinstance(tree, Tree) and tree.data == "testlist" and len(tree.children) == 1:
            tree = tree.children[0]
        if isinstance(tree, Tree) and tree.data == "name":
            name = str(tree.children[0])
            if name not in self.vars:
                raise self.error(tree, f"undefined name {name}")
            return self.vars[name]
        if not (isinstance(tree, Tree) and tree.data == "call"):
            raise self.error(tree, "expected a variable or an R.call_tir / R.call_dps_packed call")
        callee, positional, keywords = self.call_parts(tree)
        if callee == "R.const":
            return self.constant(tree, positional, keywords)
        if callee not in ("R.call_tir", "R.call_dps_packed"):
            raise self.error(tree, f"{callee}(...) is not supported in @R.function")
        if len(positional) < 2:
            raise self.error(tree, f"{callee} takes (function, (args...), out_sinfo)")
        func_tree, args_tree = positional[0], positional[1]
        sinfo_tree = positional[2] if len(positional) > 2 else keywords.get("out_sinfo")
        if sinfo_tree is None:
            raise self.error(tree, f"{callee} needs out_sinfo=R.Tensor(...)")
        if isinstance(args_tree, Tree) and args_tree.data in ("tuple", "list"):
            args = tuple(self.value(a) for a in args_tree.children if a is not None)
        else:
            args = (self.value(args_tree),)
        sinfo = self.struct_info(sinfo_tree)
        if callee == "R.call_tir":
            target = _dotted(func_tree)
            head, _, name = (target or "").partition(".")
            if head not in self.module_names or not name or "." in name:
                raise self.error(func_tree, "R.call_tir calls a prim_func of the module: cls.name")
            return call_tir(name, args, sinfo)
        return call_dps_packed(self.string(func_tree), args, sinfo)

    def constant(self, tree, positional, keywords) -> Constant:
        if not positional:
            raise self.error(
                tree, 'R.const takes values and a dtype: R.const([1.0, 2.0], "float32")'
            )
        dtype_tree = positional[1] if len(positional) > 1 else keywords.get("dtype")
        values = self.literal(positional[0])
        try:
            return const(values, None if dtype_tree is None else self.string(dtype_tree))
        except (ValueError, TypeError) as exc:
            raise self.error(positional[0], f"R.const: {exc}") from None

    def literal(self, tree):
        """The Python value of a literal: numbers (``inf`` and ``nan`` too, as the
        printer writes them), booleans, signs, and nested lists and tuples. Read from
        the parse tree, so it needs no source positions."""
        kind = tree.data if isinstance(tree, Tree) else None
        if kind in ("list", "tuple"):
            return [self.literal(c) for c in tree.children if c is not None]
        if kind in ("int_lit", "float_lit"):
            return ast.literal_eval(self.number_text(tree))
        if kind in ("true", "false"):
            return kind == "true"
        if kind == "name" and str(tree.children[0]) in ("inf", "nan"):
            return float(str(tree.children[0]))
        if kind in ("unary", "prefix") and str(tree.children[0]) in ("-", "+"):
            value = self.literal(tree.children[1])
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return -value if str(tree.children[0]) == "-" else value
        raise self.error(tree, "R.const needs literal values (numbers in nested lists)")

    # ------------------------------------------------------------ statements

    def size_declaration(self, stmt) -> bool:
        """``m = T.int64()`` / ``m, n = T.int64(), T.int64()``."""
        if stmt.data != "assign":
            return False
        targets, values = stmt.children
        calls = values.children if values.data == "testlist" else [values]
        dtypes = []
        for call in calls:
            if not (isinstance(call, Tree) and call.data == "call"):
                return False
            callee, positional, keywords = self.call_parts(call)
            if not (callee or "").startswith("T.") or positional or keywords:
                return False
            dtypes.append(callee[2:])
        names = targets.children if targets.data == "testlist" else [targets]
        if len(names) != len(dtypes):
            raise self.error(stmt, "declare one size per T.int64()")
        for name_tree, dtype in zip(names, dtypes):
            name = str(name_tree.children[0])
            known = self.sizes.get(name)
            if known is not None and known.dtype != dtype:
                raise self.error(name_tree, f"{name} is a {known.dtype} size, declared {dtype}")
            self.size_var(name, dtype)
        return True

    def module_alias(self, stmt) -> bool:
        """``cls = Module``: a name for the module whose functions are called."""
        if stmt.data != "assign":
            return False
        target, value = stmt.children
        target, value = (_single(t) for t in (target, value))
        if not (_dotted(target) and "." not in _dotted(target)):
            return False
        if _dotted(value) not in self.module_names or _dotted(target) in self.vars:
            return False
        self.module_names.add(_dotted(target))
        return True

    def binding(self, stmt, outputs: set, in_dataflow: bool) -> VarBinding:
        if stmt.data == "assign":
            target, value_tree = stmt.children
            annotation = None
        elif stmt.data == "annassign":
            target, annotation, value_tree = stmt.children
        else:
            raise self.error(stmt, "expected a binding: name = R.call_tir(...)")
        if isinstance(target, Tree) and target.data == "testlist" and len(target.children) == 1:
            target = target.children[0]
        if not (isinstance(target, Tree) and target.data == "name"):
            raise self.error(target, "a binding defines one name")
        name = str(target.children[0])
        try:
            value = self.value(value_tree)
        except ArgumentError as exc:
            raise self.error(value_tree, str(exc)) from None
        sinfo = self.struct_info(annotation) if annotation is not None else value.struct_info
        local = in_dataflow and name not in outputs
        var = (DataflowVar if local else Var)(name, sinfo)
        self.vars[name] = var
        return VarBinding(var, value)

    def dataflow(self, stmt) -> DataflowBlock:
        body = statements_of(stmt.children[-1])
        outputs: set = set()
        output_stmt = None
        for item in body:
            call = item.children[0].children[0] if item.data == "expr_stmt" else None
            if isinstance(call, Tree) and call.data == "call":
                if self.call_parts(call)[0] == "R.output":
                    output_stmt = call
                    outputs |= {str(a.children[0]) for a in self.call_parts(call)[1]}
        if output_stmt is None:
            raise self.error(stmt, "a dataflow block ends with R.output(...)")
        bindings = []
        for item in body:
            if item.data == "expr_stmt":
                continue  # R.output, checked above
            bindings.append(self.binding(item, outputs, in_dataflow=True))
        for name in outputs:
            if name not in self.vars or isinstance(self.vars[name], DataflowVar):
                raise self.error(output_stmt, f"R.output({name}): {name} is not bound in the block")
        # names local to the block are not visible after it
        for binding in bindings:
            if isinstance(binding.var, DataflowVar):
                self.vars.pop(binding.var.name_hint, None)
        return DataflowBlock(tuple(bindings))

    def function(self, funcdef) -> tuple[str, Function]:
        name_token, parameters, returns, suite = funcdef.children
        self.definition = funcdef
        params = []
        for param in parameters.children if parameters is not None else ():
            if param is None:
                continue
            self.where = param
            param_name, annotation, default = param.children
            if annotation is None or default is not None:
                raise self.error(param, f'parameter {param_name} needs R.Tensor((...), "dtype")')
            var = Var(str(param_name), self.struct_info(annotation))
            self.vars[str(param_name)] = var
            params.append(var)
        ret = self.struct_info(returns) if returns is not None else None
        blocks, plain, result = [], [], None
        for stmt in statements_of(suite):
            self.where = stmt
            if result is not None:
                raise self.error(stmt, "nothing may follow the return statement")
            if stmt.data == "expr_stmt" and stmt.children[0].children[0].data == "string":
                continue  # a docstring
            if self.size_declaration(stmt) or self.module_alias(stmt):
                continue
            if stmt.data == "with_stmt":
                if self.canonical(_dotted(stmt.children[0].children[0])) != "R.dataflow":
                    raise self.error(stmt, "the only block of @R.function is with R.dataflow()")
                if plain:
                    blocks.append(BindingBlock(tuple(plain)))
                    plain = []
                blocks.append(self.dataflow(stmt))
            elif stmt.data == "return_stmt":
                if stmt.children[0] is None:
                    raise self.error(stmt, "@R.function returns a value")
                result = self.value(stmt.children[0])
            else:
                plain.append(self.binding(stmt, set(), in_dataflow=False))
        if result is None:
            raise self.error(funcdef, f"@R.function {name_token} needs a return statement")
        if plain:
            blocks.append(BindingBlock(tuple(plain)))
        if ret is None:  # as TVM: the result's struct info
            ret = result.struct_info
        func = Function(tuple(params), SeqExpr(tuple(blocks), result), ret)
        return str(name_token), func


def _single(tree):
    """The tree of a one-element ``testlist`` (``a = b`` parses its sides as lists)."""
    if isinstance(tree, Tree) and tree.data == "testlist" and len(tree.children) == 1:
        return tree.children[0]
    return tree


def build_relax_function(funcdef, source, aliases, module_name=None) -> tuple[str, Function]:
    """The name and graph :class:`Function` of an ``@R.function`` definition tree;
    ``module_name`` is the name of the ``@I.ir_module`` class around it, if any."""
    return _Builder(source, aliases, module_name).function(funcdef)
