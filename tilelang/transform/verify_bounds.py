"""VerifyBufferBounds: an access that provably leaves its buffer is a located error.

Runs before lowering (phase 0, after VerifyWellFormed) on the program as written or
scheduled; see :mod:`tilelang.bounds.static` for what "provably" means. With
``PassContext(config={"tl.warn_bounds": True})`` (``tilec --warn-bounds``) the accesses
that cannot be shown inside their buffers (symbolic sizes, guards of unknown effect)
are reported as :class:`BoundsWarning` warnings.
"""

from __future__ import annotations

import warnings

from tilelang.bounds import find_out_of_bounds
from tilelang.errors import OutOfBoundsError
from tilelang.transform.pass_infra import prim_func_pass

WARN_CONFIG = "tl.warn_bounds"


class BoundsWarning(UserWarning):
    """An access that may leave its buffer (reported with ``tl.warn_bounds``);
    ``str()`` is the located diagnostic headed ``warning:``."""

    def __init__(self, located: OutOfBoundsError):
        super().__init__(located.render("warning"))
        self.located = located


def verify_buffer_bounds(func, name: str = "main", warn: bool = False) -> None:
    """Raise :class:`OutOfBoundsError` for the first access of ``func`` that provably
    leaves its buffer; with ``warn``, warn about those that possibly do."""
    issues = find_out_of_bounds(func, name, possible=warn)
    for issue in issues:
        if issue.provable:
            raise OutOfBoundsError.at(issue.message(), issue.span)
    for issue in issues:
        warnings.warn(BoundsWarning(OutOfBoundsError.at(issue.message(), issue.span)), stacklevel=2)


def _verify(func, mod, ctx):
    name = func.attrs.get("global_symbol") or next(
        (n for n, f in mod.functions.items() if f is func), "main"
    )
    verify_buffer_bounds(func, name, warn=bool(ctx.config.get(WARN_CONFIG, False)))
    return func


def VerifyBufferBounds():  # noqa: N802 - named as a TVM pass
    """The pass that checks every function with :func:`verify_buffer_bounds` and
    returns it unchanged."""
    return prim_func_pass(_verify, opt_level=0, name="tl.VerifyBufferBounds")
