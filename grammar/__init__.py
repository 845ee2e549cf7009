"""The Lark grammar of the .tir language (shipped as package data)."""

from importlib import resources


def read_grammar(name: str = "tir.lark") -> str:
    """The text of a grammar file of this package."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
