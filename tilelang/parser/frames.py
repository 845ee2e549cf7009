"""What a function or block body collects besides its statements, and the wrapper of
statements that scope over the rest of their body."""

from __future__ import annotations

import attrs


@attrs.define
class FuncFrame:
    """What a function body collects besides statements."""

    params: list
    buffer_map: dict
    root_allocs: list = attrs.Factory(list)
    attrs: dict = attrs.Factory(dict)


@attrs.define
class BlockFrame:
    """What a block body collects besides statements."""

    name: str
    tree: object
    iter_vars: list = attrs.Factory(list)
    iter_values: list = attrs.Factory(list)
    predicate: object = None
    reads: tuple | None = None
    writes: tuple | None = None
    alloc_buffers: list = attrs.Factory(list)
    match_buffers: list = attrs.Factory(list)
    annotations: dict = attrs.Factory(dict)
    init: object = None


class Wrapper:
    """A statement that scopes over the rest of its body; ``make(body)`` builds it."""

    def __init__(self, make):
        self.make = make
