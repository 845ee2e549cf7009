"""``tempdir()``: a temporary directory that removes itself (TVM's
``tvm.contrib.utils.tempdir``)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path


class TempDirectory:
    """A temporary directory, removed when closed, garbage-collected or left as a
    context manager (unless ``keep_for_debug``)."""

    def __init__(self, custom_path: str | None = None, keep_for_debug: bool = False):
        if custom_path is not None:
            Path(custom_path).mkdir(parents=True, exist_ok=True)
            self.temp_dir = str(Path(custom_path).resolve())
        else:
            self.temp_dir = tempfile.mkdtemp(prefix="tilelang-")
        self._owned = custom_path is None and not keep_for_debug

    def relpath(self, name: str) -> str:
        """The absolute path of ``name`` inside the directory."""
        return str(Path(self.temp_dir) / name)

    def listdir(self) -> list[str]:
        """The names of the entries in the directory."""
        return sorted(p.name for p in Path(self.temp_dir).iterdir())

    def remove(self) -> None:
        """Deletes the directory now (when this object created it)."""
        if self._owned and self.temp_dir:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self._owned = False

    def __enter__(self) -> TempDirectory:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def __del__(self):
        self.remove()

    def __repr__(self) -> str:
        return f"TempDirectory({self.temp_dir!r})"


def tempdir(custom_path: str | None = None, keep_for_debug: bool = False) -> TempDirectory:
    """A new :class:`TempDirectory` (or ``custom_path``, created and kept)."""
    return TempDirectory(custom_path, keep_for_debug)
