"""Workloads: the module being tuned, its stable key, and its text for worker processes.

The database outlives the process, so the workload key cannot be
:func:`tilelang.ir.structural_hash` (it mixes in Python's per-process string hashing).
:func:`workload_hash` walks the same field roles (``tilelang.ir.node``) and the same
alpha-equivalence rule (variables and buffers numbered by first definition), but feeds
a SHA-256, so two structurally equal modules get the same key in every process.
"""

from __future__ import annotations

import hashlib

from tilelang.errors import ArgumentError
from tilelang.ir.expr import Var
from tilelang.ir.function import IRModule, PrimFunc
from tilelang.ir.node import Node, node_fields
from tilelang.ir.structural import _is_symbol


class _StableHash:
    """Feeds a canonical token stream of a node into a SHA-256."""

    def __init__(self):
        self.digest = hashlib.sha256()
        self.numbering: dict = {}

    def token(self, *parts) -> None:
        self.digest.update(repr(parts).encode())
        self.digest.update(b"\0")

    def symbol(self, x) -> None:
        number = self.numbering.get(x)
        if number is not None:
            self.token("sym", number)
            return
        self.numbering[x] = len(self.numbering)
        self.token("def", type(x).__name__, len(self.numbering))
        if isinstance(x, Var):
            self.token("dtype", str(x.dtype))
        else:
            self.fields(x)

    def value(self, x) -> None:
        if _is_symbol(x):
            self.symbol(x)
        elif isinstance(x, Node):
            self.fields(x)
        elif isinstance(x, (tuple, list)):
            self.token("seq", len(x))
            for item in x:
                self.value(item)
        elif isinstance(x, dict):
            self.token("map", len(x))
            for key, item in x.items():
                self.value(key)
                self.value(item)
        else:
            self.token(type(x).__name__, str(x))

    def fields(self, x) -> None:
        self.token("node", type(x).__name__)
        for name, role in node_fields(type(x)):
            if role != "ignore":
                self.value(getattr(x, name))


def as_module(mod) -> IRModule:
    """``mod`` as an IRModule (a PrimFunc becomes ``{"main": func}``)."""
    if isinstance(mod, PrimFunc):
        return IRModule({"main": mod})
    if isinstance(mod, IRModule):
        return mod
    raise ArgumentError(f"tuning takes an IRModule or a PrimFunc, not {type(mod).__name__}")


def workload_hash(mod) -> str:
    """A hex key equal for structurally equal modules, stable across processes."""
    hasher = _StableHash()
    hasher.value(as_module(mod))
    return hasher.digest.hexdigest()[:32]
