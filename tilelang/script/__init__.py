"""TVMScript-style decorators: ``from tilelang.script import tir as T, ir as I``."""
