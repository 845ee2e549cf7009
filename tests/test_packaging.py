"""Every package folder must be listed in pyproject's explicit `packages` list."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _package_dirs() -> dict[str, Path]:
    """Dotted package name -> folder, for every folder with an __init__.py."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    mapping = config["tool"]["setuptools"]["package-dir"]
    found = {}
    for prefix, folder in mapping.items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base).parts
            found[".".join((prefix, *rel))] = init.parent
    return found


def test_every_package_is_listed():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    listed = set(config["tool"]["setuptools"]["packages"])
    missing = sorted(set(_package_dirs()) - listed)
    assert not missing, f"add these to [tool.setuptools] packages in pyproject.toml: {missing}"


def test_listed_packages_exist():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    stale = sorted(set(config["tool"]["setuptools"]["packages"]) - set(_package_dirs()))
    assert not stale, f"pyproject.toml lists packages with no folder: {stale}"


def test_grammar_ships_as_package_data():
    from tilelang.grammar import read_grammar

    assert "start" in read_grammar()
