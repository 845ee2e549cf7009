"""How a failed run-time bounds check travels from generated code to the user.

InstrumentBoundCheckers makes each check's assertion message the call
``tl.bounds_error(site, indices..., extents...)``. ``site`` (:func:`site_payload`) is a
constant string describing the access; a backend that meets the call records the
string and the values, and its runtime turns them into the located
:class:`~tilelang.errors.OutOfBoundsError` with :func:`out_of_bounds_error`.
"""

from __future__ import annotations

import json

from tilelang.errors import OutOfBoundsError
from tilelang.ir.node import Span

#: the op of an assertion message that reports an out-of-bounds access
BOUNDS_ERROR = "tl.bounds_error"
#: the marker that starts a bounds failure's message in compiled code
MARKER = "tl.bounds:"


def site_payload(func_name: str, access, node) -> str:
    """The text compiled code reports for a failed check of ``access``."""
    span = getattr(node, "span", None)
    where = None
    if span is not None:
        where = [span.source, span.line, span.column, span.end_line, span.end_column]
    site = {
        "function": func_name,
        "buffer": access.buffer.name,
        "access": f"{access.buffer.name}[{', '.join(map(str, access.indices))}]",
        "ndim": len(access.indices),
        "span": where,
    }
    return MARKER + json.dumps(site)


def is_bounds_payload(message: str) -> bool:
    """Whether a recorded assertion message is a bounds check's site."""
    return message.startswith(MARKER)


def out_of_bounds_error(payload: str, values) -> OutOfBoundsError:
    """The located error for a failed check: ``payload`` from :func:`site_payload`
    and the recorded values (the indices, then the buffer's extents)."""
    site = json.loads(payload[len(MARKER) :])
    ndim = site["ndim"]
    values = [int(v) for v in values[: 2 * ndim]]
    indices, extents = values[:ndim], values[ndim:]
    shape = "(" + ", ".join(map(str, extents)) + ("," if len(extents) == 1 else "") + ")"
    text = ", ".join(map(str, indices))
    message = (
        f"out-of-bounds access in function {site['function']!r}: {site['access']} "
        f"reached {site['buffer']}[{text}], but {site['buffer']} has shape {shape}"
    )
    where = site["span"]
    return OutOfBoundsError.at(message, Span(*where) if where else None)
