"""The IR, arithmetic and analysis layers import strictly downwards at import time:
``tilelang.ir`` needs neither ``tilelang.arith`` nor ``tilelang.analysis``, and
``tilelang.arith`` does not need ``tilelang.analysis`` (region analysis sits above
arith; it once lived in ``tilelang.ir``, an ``ir -> arith -> ir`` circle)."""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "tilelang"
FORBIDDEN = {
    "ir": ("tilelang.arith", "tilelang.analysis", "tilelang.schedule"),
    "arith": ("tilelang.analysis", "tilelang.schedule"),
    "analysis": ("tilelang.schedule",),
}


def top_level_imports(path: pathlib.Path) -> list[str]:
    """Modules imported when ``path`` is imported (not those imported in functions)."""
    tree = ast.parse(path.read_text())
    names = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return names


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_only_downwards(layer):
    offenders = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        for name in top_level_imports(path):
            if name.startswith(FORBIDDEN[layer]):
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert not offenders, offenders


def test_old_analysis_module_still_answers():
    from tilelang import analysis
    from tilelang.ir import analysis as old

    assert old.get_block_access_region is analysis.get_block_access_region
    assert old.collect_vars.__module__ == "tilelang.ir.var_usage"
