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

from lark import Tree

from tilelang.parser.fast_exprs import AUGOPS, ExprRules
from tilelang.parser.fast_lexer import Bail, line_starts, tokens

#: sha256 of grammar/tir.lark as this parser mirrors it
GRAMMAR_SHA256 = "c7847ab8ec9d2f3735f0f6817a39daa010e7c3c673d8eede475c4f6d5e2c86ba"


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
        return _Parser(text, *tokens(text)).file()
    except (IndexError, RecursionError):
        raise Bail from None


class _Parser(ExprRules):
    """One pass over a token list; each method is one grammar rule and leaves
    ``self.pos`` after what it consumed."""

    def __init__(self, text: str, toks: list, starts):
        self.text = text
        self.toks = toks
        self.starts = starts
        self.line_starts = line_starts(text)
        self.pos = 0

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
        kind, value = self.toks[self.pos]
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
        kind, value = self.toks[self.pos]
        if kind == "KW":
            if value == "pass":
                self.pos += 1
                return Tree("pass_stmt", [])
            if value in ("break", "continue"):  # ``!rule``: the keyword token is kept
                self.pos += 1
                return Tree(f"{value}_stmt", [self.lark(value.upper(), self.pos - 1)])
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
        kind, value = self.toks[self.pos]
        if kind == "OP":
            if value == ":":
                self.pos += 1
                annotation = self.test()
                assigned = None
                if self.at_op("="):
                    self.pos += 1
                    assigned = self.testlist()
                return Tree("annassign", [first, annotation, assigned])
            if value in AUGOPS:
                self.pos += 1
                operator = self.lark("AUGOP", self.pos - 1)
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


_COMPOUND = {
    "if": _Parser.if_stmt,
    "while": _Parser.while_stmt,
    "for": _Parser.for_stmt,
    "with": _Parser.with_stmt,
    "def": lambda self: self.funcdef(),
    "class": lambda self: self.classdef(),
}
