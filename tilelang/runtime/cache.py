"""The cache of compiled libraries, keyed by a hash of everything that went into them.

Entries live under ``$TILELANG_CACHE_DIR`` (default ``$XDG_CACHE_HOME/tilelang`` or
``~/.cache/tilelang``), one folder per kind of artifact. A new entry is written to a
temporary file in the same folder and moved into place with ``os.replace``, so a
reader never sees half a library even with several processes building at once. An
entry whose bytes do not match its recorded hash, or that does not load, is rebuilt,
not trusted.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from tilelang.errors import BuildError


def cache_dir() -> Path:
    """The root folder of the cache (created on demand)."""
    root = os.environ.get("TILELANG_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "tilelang")
    return Path(root)


def content_key(*parts: str | bytes) -> str:
    """A hex digest of ``parts`` (each part is length-prefixed, so they cannot run together)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()[:32]


def _try_load(path: Path, symbols: Iterable[str]) -> ctypes.CDLL | None:
    try:
        lib = ctypes.CDLL(str(path))
        for symbol in symbols:
            getattr(lib, symbol)
        return lib
    except (OSError, AttributeError):
        return None


def atomic_write(path: Path, produce: Callable[[Path], None]) -> None:
    """Run ``produce(tmp)`` to write a temporary file next to ``path``, then move it
    into place atomically. The temporary file is removed if ``produce`` fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        produce(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_or_build(
    kind: str, key: str, produce: Callable[[Path], None], symbols: Iterable[str] = ()
) -> tuple[ctypes.CDLL, Path, bool]:
    """The shared library cached as ``<cache>/<kind>/<key>.so``, built by
    ``produce(path)`` when missing, corrupt or unloadable. Returns
    ``(lib, path, was_cached)``.

    Next to each library lies the SHA-256 of its bytes (``.so.sha256``); a library
    whose bytes no longer match is never handed to the dynamic loader (a damaged
    library can crash the process instead of failing to load).
    """
    symbols = tuple(symbols)
    path = cache_dir() / kind / f"{key}.so"
    digest_path = path.with_name(path.name + ".sha256")
    if path.exists() and digest_path.exists():
        if digest_path.read_text().strip() == _digest(path):
            lib = _try_load(path, symbols)
            if lib is not None:
                return lib, path, True
    atomic_write(path, produce)
    atomic_write(digest_path, lambda tmp: tmp.write_text(_digest(path)))
    lib = _try_load(path, symbols)
    if lib is None:
        try:
            ctypes.CDLL(str(path))
            reason = f"it lacks one of the symbols {', '.join(symbols)}"
        except OSError as exc:
            reason = str(exc)
        raise BuildError(f"the freshly built library {path} does not load: {reason}")
    return lib, path, False


__all__ = ["cache_dir", "content_key", "atomic_write", "load_or_build"]
