"""A hand-written front end that builds the parse tree Lark's LALR parser builds.

Lark parses at about 2 µs per token in pure Python, which made a 10 MB program take
half a minute. This recursive-descent parser over :mod:`tilelang.parser.fast_lexer`'s
tokens produces the *same* tree — the same rule names, children, ``None``
placeholders and Lark ``Token`` objects with the same positions — for every program it
accepts, several times faster. It accepts only what it is sure of: anything unexpected
raises :class:`~tilelang.parser.fast_lexer.Bail` and the caller parses with Lark,
whose tree or located error is the reference. So diagnostics are Lark's, unchanged.

The parser mirrors ``grammar/tir.lark`` rule by rule; :data:`GRAMMAR_SHA256` is the
grammar it was written for, and :func:`parse_tree` declines any other grammar (a test
fails so that the two are updated together).
"""

from __future__ import annotations

import hashlib
from functools import cache

from lark import Token, Tree

from tilelang.parser.fast_lexer import Bail, tokens

#: sha256 of grammar/tir.lark as this parser mirrors it
GRAMMAR_SHA256 = "27156b68a41a50f11f30383ff96de32c4f769b4c893ed6c297538b78c2cbc273"

_BINOPS = frozenset(
    "** // << >> >= <= == != < > | ^ & + - * / %".split() + ["and", "or"]
)  # fmt: skip
_PREFIXES = frozenset(["-", "+", "~", "not"])
_AUGOPS = frozenset(["//=", "+=", "-=", "*=", "/=", "%="])
# tokens that can start a `test`
_TEST_START_KINDS = frozenset(["NAME", "DEC_NUMBER", "HEX_NUMBER", "FLOAT_NUMBER", "STRING"])
_TEST_START_VALUES = frozenset(["(", "[", "{", "-", "+", "~", "not", "True", "False", "None"])
_LITERALS = {"True": "true", "False": "false", "None": "none"}
_new_str = str.__new__


@cache
def grammar_matches() -> bool:
    """Whether grammar/tir.lark is the grammar this parser mirrors."""
    from tilelang.grammar import read_grammar

    text = read_grammar("tir.lark")
    return hashlib.sha256(text.encode()).hexdigest() == GRAMMAR_SHA256


def parse_tree(text: str) -> Tree:
    """Lark's tree of ``text`` (ending with a newline), or :class:`Bail`."""
    if not grammar_matches():
        raise Bail
    try:
        return _Parser(text, tokens(text)).file()
    except (IndexError, RecursionError):
        raise Bail from None


def _token(kind: str, tok: tuple) -> Token:
    """A Lark Token of ``kind`` for the token tuple ``tok``, positioned as Lark's."""
    value, start, line, column = tok[1], tok[2], tok[3], tok[4]
    inst = _new_str(Token, value)
    inst.type = kind
    inst.value = value
    inst.start_pos = start
    inst.line = line
    length = len(value)
    inst.end_pos = start + length
    newlines = value.count("\n") if kind == "STRING" else 0
    if newlines:
        inst.end_line = line + newlines
        inst.end_column = length - value.rindex("\n")
    else:
        inst.end_line = line
        inst.end_column = column + length
    inst.column = column
    return inst


class _Parser:
    """One pass over a token list; each method is one grammar rule and leaves
    ``self.pos`` after what it consumed."""

    def __init__(self, text: str, toks: list):
        self.text = text
        self.toks = toks
        self.pos = 0

    # ----------------------------------------------------------- token helpers

    def peek(self) -> tuple:
        return self.toks[self.pos]

    def take(self) -> tuple:
        tok = self.toks[self.pos]
        self.pos += 1
        return tok

    def expect(self, kind: str, value: str | None = None) -> tuple:
        tok = self.toks[self.pos]
        if tok[0] != kind or (value is not None and tok[1] != value):
            raise Bail
        self.pos += 1
        return tok

    def at(self, kind: str, value: str) -> bool:
        tok = self.toks[self.pos]
        return tok[0] == kind and tok[1] == value

    def at_op(self, value: str) -> bool:
        tok = self.toks[self.pos]
        return tok[1] == value and tok[0] == "OP"

    def name(self) -> Token:
        return _token("NAME", self.expect("NAME"))

    def starts_test(self) -> bool:
        kind, value = self.toks[self.pos][:2]
        if kind in _TEST_START_KINDS:
            return True
        return (kind == "OP" or kind == "KW") and value in _TEST_START_VALUES

    # ------------------------------------------------------------- statements

    def file(self) -> Tree:
        stmts = []
        while True:
            kind = self.toks[self.pos][0]
            if kind == "NL":
                self.pos += 1
            elif kind == "EOF":
                return Tree("start", stmts)
            else:
                stmts.append(self.stmt())

    def stmt(self) -> Tree:
        kind, value = self.toks[self.pos][:2]
        if kind == "KW":
            method = _COMPOUND.get(value)
            if method is not None:
                return method(self)
        elif kind == "OP" and value == "@":
            return self.decorated()
        return self.simple_stmt()

    def simple_stmt(self) -> Tree:
        smalls = [self.small_stmt()]
        while self.at_op(";"):
            self.pos += 1
            if self.toks[self.pos][0] == "NL":
                break
            smalls.append(self.small_stmt())
        self.expect("NL")
        return Tree("simple_stmt", smalls)

    def small_stmt(self) -> Tree:
        kind, value = self.toks[self.pos][:2]
        if kind == "KW":
            if value == "pass":
                self.pos += 1
                return Tree("pass_stmt", [])
            if value == "assert":
                self.pos += 1
                test = self.test()
                message = None
                if self.at_op(","):
                    self.pos += 1
                    message = self.test()
                return Tree("assert_stmt", [test, message])
            if value == "return":
                self.pos += 1
                return Tree("return_stmt", [self.testlist() if self.starts_test() else None])
            if value == "import":
                return self.import_name()
            if value == "from":
                return self.import_from()
        first = self.test()
        kind, value = self.toks[self.pos][:2]
        if kind == "OP":
            if value == ":":
                self.pos += 1
                annotation = self.test()
                assigned = None
                if self.at_op("="):
                    self.pos += 1
                    assigned = self.testlist()
                return Tree("annassign", [first, annotation, assigned])
            if value in _AUGOPS:
                self.pos += 1
                operator = _token("AUGOP", self.toks[self.pos - 1])
                return Tree("augassign", [first, operator, self.test()])
        targets = self.testlist(first)
        if self.at_op("="):
            self.pos += 1
            return Tree("assign", [targets, self.testlist()])
        return Tree("expr_stmt", [targets])

    def import_name(self) -> Tree:
        self.pos += 1
        names = [self.dotted_as_name()]
        while self.at_op(","):
            self.pos += 1
            names.append(self.dotted_as_name())
        return Tree("import_name", names)

    def dotted_as_name(self) -> Tree:
        dotted = self.dotted_name()
        alias = None
        if self.at("KW", "as"):
            self.pos += 1
            alias = self.name()
        return Tree("dotted_as_name", [dotted, alias])

    def import_from(self) -> Tree:
        self.pos += 1
        dotted = self.dotted_name()
        self.expect("KW", "import")
        if self.at_op("*"):
            self.pos += 1
            return Tree("import_from", [dotted])
        if self.at_op("("):
            self.pos += 1
            names = self.import_as_names()
            self.expect("OP", ")")
        else:
            names = self.import_as_names()
        return Tree("import_from", [dotted, names])

    def import_as_names(self) -> Tree:
        names = [self.import_as_name()]
        while self.at_op(","):
            self.pos += 1
            if self.toks[self.pos][0] != "NAME":
                break
            names.append(self.import_as_name())
        return Tree("import_as_names", names)

    def import_as_name(self) -> Tree:
        name = self.name()
        alias = None
        if self.at("KW", "as"):
            self.pos += 1
            alias = self.name()
        return Tree("import_as_name", [name, alias])

    def dotted_name(self) -> Tree:
        parts = [self.name()]
        while self.at_op("."):
            self.pos += 1
            parts.append(self.name())
        return Tree("dotted_name", parts)

    def suite(self) -> Tree:
        if self.toks[self.pos][0] != "NL":
            return Tree("suite", [self.simple_stmt()])
        self.pos += 1
        self.expect("INDENT")
        stmts = [self.stmt()]
        toks = self.toks
        while toks[self.pos][0] != "DEDENT":
            stmts.append(self.stmt())
        self.pos += 1
        return Tree("suite", stmts)

    def if_stmt(self) -> Tree:
        self.pos += 1
        children = [self.test()]
        self.expect("OP", ":")
        children.append(self.suite())
        while self.at("KW", "elif"):
            self.pos += 1
            test = self.test()
            self.expect("OP", ":")
            children.append(Tree("elif_clause", [test, self.suite()]))
        orelse = None
        if self.at("KW", "else"):
            self.pos += 1
            self.expect("OP", ":")
            orelse = Tree("else_clause", [self.suite()])
        children.append(orelse)
        return Tree("if_stmt", children)

    def while_stmt(self) -> Tree:
        self.pos += 1
        test = self.test()
        self.expect("OP", ":")
        return Tree("while_stmt", [test, self.suite()])

    def for_stmt(self) -> Tree:
        self.pos += 1
        targets = [self.atom_expr()]
        while self.at_op(","):
            self.pos += 1
            if self.at("KW", "in"):
                break
            targets.append(self.atom_expr())
        self.expect("KW", "in")
        iterable = self.test()
        self.expect("OP", ":")
        return Tree("for_stmt", [Tree("exprlist", targets), iterable, self.suite()])

    def with_stmt(self) -> Tree:
        self.pos += 1
        context = self.test()
        target = None
        if self.at("KW", "as"):
            self.pos += 1
            target = self.atom_expr()
        self.expect("OP", ":")
        return Tree("with_stmt", [context, target, self.suite()])

    def decorated(self) -> Tree:
        decorators = []
        while self.at_op("@"):
            self.pos += 1
            dotted = self.dotted_name()
            arguments = None
            if self.at_op("("):
                self.pos += 1
                arguments = self.arguments_until(")")
            self.expect("NL")
            decorators.append(Tree("decorator", [dotted, arguments]))
        if self.at("KW", "def"):
            decorators.append(self.funcdef())
        elif self.at("KW", "class"):
            decorators.append(self.classdef())
        else:
            raise Bail
        return Tree("decorated", decorators)

    def funcdef(self) -> Tree:
        self.pos += 1
        name = self.name()
        self.expect("OP", "(")
        parameters = None
        if not self.at_op(")"):
            params = [self.param()]
            while self.at_op(","):
                self.pos += 1
                if self.at_op(")"):
                    break
                params.append(self.param())
            parameters = Tree("parameters", params)
        self.expect("OP", ")")
        returns = None
        if self.at_op("->"):
            self.pos += 1
            returns = self.test()
        self.expect("OP", ":")
        return Tree("funcdef", [name, parameters, returns, self.suite()])

    def param(self) -> Tree:
        name = self.name()
        annotation = default = None
        if self.at_op(":"):
            self.pos += 1
            annotation = self.test()
        if self.at_op("="):
            self.pos += 1
            default = self.test()
        return Tree("param", [name, annotation, default])

    def classdef(self) -> Tree:
        self.pos += 1
        name = self.name()
        arguments = None
        if self.at_op("("):
            self.pos += 1
            arguments = self.arguments_until(")")
        self.expect("OP", ":")
        return Tree("classdef", [name, arguments, self.suite()])

    # ------------------------------------------------------------ expressions

    def testlist(self, first: Tree | None = None) -> Tree:
        items = [self.test() if first is None else first]
        while self.at_op(","):
            self.pos += 1
            if not self.starts_test():
                break
            items.append(self.test())
        return Tree("testlist", items)

    def test(self):
        first = self.operand()
        tok = self.toks[self.pos]
        if tok[1] not in _BINOPS or tok[0] not in ("OP", "KW"):
            return first
        items = [first]
        toks = self.toks
        while tok[1] in _BINOPS and tok[0] in ("OP", "KW"):
            self.pos += 1
            items.append(_token("BINOP", tok))
            items.append(self.operand())
            tok = toks[self.pos]
        return Tree("binexpr", items)

    def operand(self):
        tok = self.toks[self.pos]
        if tok[1] in _PREFIXES and tok[0] in ("OP", "KW"):
            self.pos += 1
            return Tree("prefix", [_token("PREFIX", tok), self.operand()])
        return self.atom_expr()

    def atom_expr(self):
        node = self.atom()
        toks = self.toks
        while True:
            kind, value = toks[self.pos][:2]
            if kind != "OP":
                return node
            if value == "(":
                self.pos += 1
                node = Tree("call", [node, self.arguments_until(")")])
            elif value == "[":
                self.pos += 1
                node = Tree("getitem", [node, self.subscripts()])
            elif value == ".":
                self.pos += 1
                node = Tree("getattr", [node, self.name()])
            else:
                return node

    def atom(self):
        tok = self.take()
        kind, value = tok[0], tok[1]
        if kind == "NAME":
            return Tree("name", [_token("NAME", tok)])
        if kind == "DEC_NUMBER" or kind == "HEX_NUMBER":
            return Tree("int_lit", [_token(kind, tok)])
        if kind == "FLOAT_NUMBER":
            return Tree("float_lit", [_token(kind, tok)])
        if kind == "STRING":
            parts = [_token("STRING", tok)]
            while self.toks[self.pos][0] == "STRING":
                parts.append(_token("STRING", self.take()))
            return Tree("string", parts)
        if kind == "KW" and value in _LITERALS:
            return Tree(_LITERALS[value], [])
        if kind != "OP":
            raise Bail
        if value == "(":
            if self.at_op(")"):
                self.pos += 1
                return Tree("tuple", [])
            first = self.test()
            if self.at_op(")"):
                self.pos += 1
                return first
            self.expect("OP", ",")
            items = [first]
            while not self.at_op(")"):
                items.append(self.test())
                if not self.at_op(","):
                    break
                self.pos += 1
            self.expect("OP", ")")
            return Tree("tuple", items)
        if value == "[":
            return Tree("list", self.items_until("]", self.test))
        if value == "{":
            return Tree("dict", self.items_until("}", self.dict_item))
        raise Bail

    def items_until(self, close: str, item) -> list:
        """``[item ("," item)* [","]]`` then ``close``: the items, or ``[None]``."""
        if self.at_op(close):
            self.pos += 1
            return [None]
        items = [item()]
        while self.at_op(","):
            self.pos += 1
            if self.at_op(close):
                break
            items.append(item())
        self.expect("OP", close)
        return items

    def dict_item(self) -> Tree:
        key = self.test()
        self.expect("OP", ":")
        return Tree("dict_item", [key, self.test()])

    def arguments_until(self, close: str) -> Tree | None:
        """``[arguments]`` then ``close``: the arguments tree or None."""
        if self.at_op(close):
            self.pos += 1
            return None
        return Tree("arguments", self.items_until(close, self.argument))

    def argument(self):
        kind, value = self.toks[self.pos][:2]
        after = self.toks[self.pos + 1]
        if kind == "NAME" and after[1] == "=" and after[0] == "OP":
            name = self.name()
            self.pos += 1
            return Tree("kwarg", [name, self.test()])
        if kind == "KW" and value == "lambda":
            keyword = _token("LAMBDA", self.take())
            params = None
            if not self.at_op(":"):
                names = [self.name()]
                while self.at_op(","):
                    self.pos += 1
                    names.append(self.name())
                params = Tree("lambda_params", names)
            self.expect("OP", ":")
            return Tree("lambda_arg", [keyword, params, self.test()])
        return self.test()

    def subscripts(self) -> Tree:
        items = [self.subscript()]
        while self.at_op(","):
            self.pos += 1
            if self.at_op("]"):
                break
            items.append(self.subscript())
        self.expect("OP", "]")
        return Tree("subscripts", items)

    def subscript(self):
        lower = None
        if not self.at_op(":"):
            lower = self.test()
            if not self.at_op(":"):
                return lower
        self.pos += 1
        upper = self.test() if self.starts_test() else None
        step = None
        if self.at_op(":"):
            self.pos += 1
            step = self.test() if self.starts_test() else None
        return Tree("slice", [lower, upper, step])


_COMPOUND = {
    "if": _Parser.if_stmt,
    "while": _Parser.while_stmt,
    "for": _Parser.for_stmt,
    "with": _Parser.with_stmt,
    "def": lambda self: self.funcdef(),
    "class": lambda self: self.classdef(),
}
