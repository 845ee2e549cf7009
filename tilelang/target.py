"""Targets: which backend compiles a module, and with which options.

A :class:`Target` is written the way TVM writes one::

    Target("llvm -mcpu=native -num-cores=2")   # options {"mcpu": "native", "num-cores": 2}
    Target("c")
    Target("cuda -arch=sm_90")
    Target({"kind": "c", "num-cores": 4})
    Target("llvm --num-cores=1")               # one or two dashes, as the MLC course writes it
    Target("nvidia/tesla-p100")                # a tag: cuda -arch=sm_60 and the device's limits
    Target("cuda", host="llvm")                # TVM's host argument

An option written as ``-key=value`` keeps its value (integers become ``int``); a bare
``-flag`` means ``True``. The kind must name a registered backend (see
:func:`tilelang.runtime.register_backend`), so a misspelled target fails where it is
written.
"""

from __future__ import annotations

import re

import attrs

from tilelang.errors import BuildError

_OPTION_RE = re.compile(r"^--?([A-Za-z_][A-Za-z0-9_.-]*)(?:=(.*))?$")


def _option_value(text: str | None):
    if text is None:
        return True
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text


def _frozen_options(options) -> dict:
    return dict(options or {})


@attrs.frozen(init=False, repr=False)
class Target:
    """A backend kind (``"c"``, ``"llvm"``, ``"python"``, ``"cuda"``...) and its options.

    ``Target(spec)`` accepts a string, a dict with a ``"kind"`` key, or another Target.
    """

    kind: str
    options: dict = attrs.field(converter=_frozen_options)
    host: Target | None = None

    def __init__(self, spec: str | dict | Target, host: str | dict | Target | None = None,
                 **options):  # fmt: skip
        if isinstance(spec, Target):
            kind, parsed = spec.kind, dict(spec.options)
            host = spec.host if host is None else host
        elif isinstance(spec, dict):
            parsed = dict(spec)
            if "tag" in parsed and "kind" not in parsed:
                parsed = {**_tag(parsed.pop("tag")), **parsed}
            host = parsed.pop("host", host)
            kind = parsed.pop("kind", None)
            if not isinstance(kind, str):
                raise BuildError(f"a target dict needs a 'kind' string, got {spec!r}")
        elif isinstance(spec, str):
            kind, parsed = _parse(spec)
        else:
            raise BuildError(
                f"a target is a string like 'llvm -mcpu=native', a dict or a Target, "
                f"not {type(spec).__name__}"
            )
        parsed.update(options)
        # "cuda -host=llvm" (the printed form) and Target("cuda", host="llvm") are one target
        spelled_host = parsed.pop("host", None)
        host = spelled_host if host is None else host
        _check_kind(kind)
        self.__attrs_init__(kind, parsed, None if host is None else as_target(host))

    def get(self, key: str, default=None):
        """The option ``key`` (dashes and underscores are interchangeable)."""
        for name in (key, key.replace("_", "-"), key.replace("-", "_")):
            if name in self.options:
                return self.options[name]
        return default

    @property
    def attrs(self) -> dict:
        """The options under TVM's attribute names (``target.attrs["arch"]``), with the
        kind's defaults (a CUDA device's thread and shared-memory limits) filled in."""
        from tilelang.target_tags import CUDA_DEFAULTS

        defaults = CUDA_DEFAULTS if self.kind == "cuda" else {}
        return {**defaults, **{k.replace("-", "_"): v for k, v in self.options.items()}}

    @property
    def arch(self) -> str | None:
        """The CUDA compute capability (``sm_80``), or None when not given."""
        return self.attrs.get("arch")

    @property
    def max_num_threads(self) -> int | None:
        """Threads per block (CUDA) or None for kinds without the notion."""
        return self.attrs.get("max_num_threads")

    @property
    def thread_warp_size(self) -> int | None:
        return self.attrs.get("thread_warp_size")

    @property
    def max_shared_memory_per_block(self) -> int | None:
        return self.attrs.get("max_shared_memory_per_block")

    @property
    def mcpu(self) -> str | None:
        return self.attrs.get("mcpu")

    @property
    def keys(self) -> tuple:
        """The target's keys (``("cuda", "gpu")``, ``("cpu",)``), as TVM's schedule rules
        dispatch on them."""
        given = self.get("keys")
        if isinstance(given, str):
            return tuple(given.split(","))
        return ("cuda", "gpu") if self.kind == "cuda" else ("cpu",)

    @property
    def num_cores(self) -> int | None:
        """``-num-cores=N``: the number of threads parallel loops may use (None: all)."""
        value = self.get("num-cores")
        return None if value is None else int(value)

    def __str__(self) -> str:
        parts = [self.kind]
        for key, value in self.options.items():
            parts.append(f"-{key}" if value is True else f"-{key}={value}")
        if self.host is not None:
            parts.append(f"-host={self.host}")
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Target({str(self)!r})"


def _tag(name: str) -> dict:
    from tilelang.target_tags import list_tags, tag_config

    config = tag_config(name)
    if config is None:
        raise BuildError(f"unknown target tag {name!r}; known tags: {', '.join(list_tags())}")
    return config


def _parse(text: str) -> tuple[str, dict]:
    words = text.split()
    if not words:
        raise BuildError("empty target string; expected e.g. 'c', 'llvm' or 'cuda -arch=sm_90'")
    kind, options = words[0], {}
    if "/" in kind:  # a tag, possibly followed by options that override its own
        options = _tag(kind)
        kind = options.pop("kind")
    for word in words[1:]:
        match = _OPTION_RE.match(word)
        if match is None:
            raise BuildError(
                f"target option {word!r} in {text!r} is not of the form -key=value or -flag"
            )
        options[match.group(1)] = _option_value(match.group(2))
    return kind, options


def _check_kind(kind: str) -> None:
    from tilelang.runtime.registry import backend_kinds

    kinds = backend_kinds()
    if kind not in kinds:
        raise BuildError(f"unknown target kind {kind!r}; known kinds: {', '.join(sorted(kinds))}")


def as_target(value) -> Target:
    """``value`` as a Target (strings and dicts are parsed)."""
    return value if isinstance(value, Target) else Target(value)


__all__ = ["Target", "as_target"]
