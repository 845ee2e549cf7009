"""The expression rules of :mod:`tilelang.parser.fast_parse` (``test`` and below in
``grammar/tir.lark``), and the token helpers both halves use.

Each method is one grammar rule; it builds Lark's tree for what it consumed and leaves
``self.pos`` after it, or raises :class:`~tilelang.parser.fast_lexer.Bail`.
"""

from __future__ import annotations

from bisect import bisect_right

from lark import Token, Tree

from tilelang.parser.fast_lexer import Bail

_BINOPS = frozenset(
    "** // << >> >= <= == != < > | ^ & + - * / %".split() + ["and", "or"]
)  # fmt: skip
_PREFIXES = frozenset(["-", "+", "~", "not"])
AUGOPS = frozenset(["//=", "+=", "-=", "*=", "/=", "%="])
# tokens that can start a `test`
_TEST_START_KINDS = frozenset(["NAME", "DEC_NUMBER", "HEX_NUMBER", "FLOAT_NUMBER", "STRING"])
_TEST_START_VALUES = frozenset(["(", "[", "{", "-", "+", "~", "not", "True", "False", "None"])
_LITERALS = {"True": "true", "False": "false", "None": "none"}
_new_str = str.__new__


def lark_token(kind: str, value: str, start: int, line_starts: list) -> Token:
    """A Lark Token of ``kind`` for the text ``value`` at offset ``start``, positioned
    as Lark's (``line_starts``: the offset where each line starts)."""
    line = bisect_right(line_starts, start)
    column = start - line_starts[line - 1] + 1
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


class ExprRules:
    """Token access and the expression rules, over ``self.toks`` from ``self.pos``
    (``self.starts``: where each token starts; ``self.line_starts``: where each line
    starts)."""

    def lark(self, kind: str, index: int) -> Token:
        """The Lark Token of kind ``kind`` for token ``index``."""
        return lark_token(kind, self.toks[index][1], self.starts[index], self.line_starts)

    # ----------------------------------------------------------- token helpers

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
        if self.toks[self.pos][0] != "NAME":
            raise Bail
        self.pos += 1
        return self.lark("NAME", self.pos - 1)

    def starts_test(self) -> bool:
        kind, value = self.toks[self.pos]
        if kind in _TEST_START_KINDS:
            return True
        return (kind == "OP" or kind == "KW") and value in _TEST_START_VALUES

    # ------------------------------------------------------------ expressions

    def testlist(self, first: Tree | None = None) -> Tree:
        items = [self.test() if first is None else first]
        toks = self.toks
        while toks[self.pos][1] == "," and toks[self.pos][0] == "OP":
            self.pos += 1
            if not self.starts_test():
                break
            items.append(self.test())
        return Tree("testlist", items)

    # ``test``, ``operand`` and ``atom_expr`` step into each other directly in the
    # usual cases (a name, no prefix): a program is mostly such operands, and each
    # call saved is a call per token.

    def test(self):
        toks = self.toks
        tok = toks[self.pos]
        if tok[1] in _PREFIXES and tok[0] in ("OP", "KW"):
            first = self.operand()
        else:
            first = self.atom_expr()
        tok = toks[self.pos]
        if tok[1] not in _BINOPS or tok[0] not in ("OP", "KW"):
            return first
        items = [first]
        while tok[1] in _BINOPS and tok[0] in ("OP", "KW"):
            self.pos += 1
            items.append(self.lark("BINOP", self.pos - 1))
            tok = toks[self.pos]
            if tok[1] in _PREFIXES and tok[0] in ("OP", "KW"):
                items.append(self.operand())
            else:
                items.append(self.atom_expr())
            tok = toks[self.pos]
        return Tree("binexpr", items)

    def operand(self):
        tok = self.toks[self.pos]
        if tok[1] in _PREFIXES and tok[0] in ("OP", "KW"):
            self.pos += 1
            return Tree("prefix", [self.lark("PREFIX", self.pos - 1), self.operand()])
        return self.atom_expr()

    def atom_expr(self):
        toks = self.toks
        index = self.pos
        kind, value = toks[index]
        if kind == "NAME":  # atom's most common case, inline
            self.pos = index + 1
            node = Tree("name", [lark_token("NAME", value, self.starts[index], self.line_starts)])
        else:
            node = self.atom()
        while True:
            kind, value = toks[self.pos]
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
        index = self.pos
        kind, value = self.toks[index]
        self.pos = index + 1
        if kind == "NAME":
            return Tree("name", [lark_token("NAME", value, self.starts[index], self.line_starts)])
        if kind == "DEC_NUMBER" or kind == "HEX_NUMBER":
            return Tree("int_lit", [self.lark(kind, index)])
        if kind == "FLOAT_NUMBER":
            return Tree("float_lit", [self.lark(kind, index)])
        if kind == "STRING":
            parts = [self.lark("STRING", index)]
            while self.toks[self.pos][0] == "STRING":
                self.pos += 1
                parts.append(self.lark("STRING", self.pos - 1))
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
        toks = self.toks
        while toks[self.pos][1] == "," and toks[self.pos][0] == "OP":
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
        kind, value = self.toks[self.pos]
        after = self.toks[self.pos + 1]
        if kind == "NAME" and after[1] == "=" and after[0] == "OP":
            name = self.name()
            self.pos += 1
            return Tree("kwarg", [name, self.test()])
        if kind == "KW" and value == "lambda":
            self.pos += 1
            keyword = self.lark("LAMBDA", self.pos - 1)
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
        toks = self.toks
        while toks[self.pos][1] == "," and toks[self.pos][0] == "OP":
            self.pos += 1
            if self.at_op("]"):
                break
            items.append(self.subscript())
        self.expect("OP", "]")
        return Tree("subscripts", items)

    def subscript(self):
        lower = None
        toks = self.toks
        if not (toks[self.pos][1] == ":" and toks[self.pos][0] == "OP"):
            lower = self.test()
            if not (toks[self.pos][1] == ":" and toks[self.pos][0] == "OP"):
                return lower
        self.pos += 1
        upper = self.test() if self.starts_test() else None
        step = None
        if self.at_op(":"):
            self.pos += 1
            step = self.test() if self.starts_test() else None
        return Tree("slice", [lower, upper, step])
