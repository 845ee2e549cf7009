"""Former home of the IR analyses, kept so existing imports work.

Variable usage now lives in :mod:`tilelang.ir.var_usage`; block regions, which need
:mod:`tilelang.arith`, in :mod:`tilelang.analysis` (above arith, which breaks the
``ir -> arith -> ir`` import circle). The region functions are resolved on first
use, so importing this module never imports ``tilelang.arith``.
"""

from __future__ import annotations

from tilelang.ir.var_usage import collect_vars, undefined_vars, uses_any_var, uses_var

_REGIONS = ("get_block_access_region", "get_block_read_write_region", "infer_block_regions")

__all__ = [*_REGIONS, "collect_vars", "uses_var", "uses_any_var", "undefined_vars"]


def __getattr__(name):
    if name in _REGIONS:
        from tilelang import analysis

        return getattr(analysis, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
