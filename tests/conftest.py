"""Shared test fixtures: golden files, GPU detection, and the samples as modules."""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

GOLDEN_DIR = Path(__file__).parent / "golden"
SAMPLES_DIR = Path(__file__).resolve().parents[1] / "samples"


def load_sample(name: str):
    """The module ``samples/<name>.py``, imported once.

    Tests use the samples' own functions rather than copies of them, so a sample and
    its test cannot drift apart. The samples folder goes on ``sys.path`` because
    samples import each other by name (``import mlp``), as they do when run as scripts.
    """
    if str(SAMPLES_DIR) not in sys.path:
        sys.path.insert(0, str(SAMPLES_DIR))
    return importlib.import_module(name)


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/<test_file>/<test_name>.txt from the current output",
    )


class Golden:
    """Compares text with ``tests/golden/<test_file>/<name>.txt``.

    With ``--update-golden`` the file is (re)written instead; review the diff like code.
    """

    def __init__(self, request):
        self.update = request.config.getoption("--update-golden")
        self.folder = GOLDEN_DIR / Path(request.node.fspath).stem
        self.default_name = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name)

    def __call__(self, text: str, name: str | None = None) -> None:
        path = self.folder / f"{name or self.default_name}.txt"
        text = text.rstrip("\n") + "\n"
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            return
        if not path.exists():
            pytest.fail(f"no golden file {path}; run pytest with --update-golden and review it")
        expected = path.read_text()
        assert text == expected, f"output differs from {path} (run with --update-golden to accept)"


def available_targets(*kinds: str) -> list[str]:
    """The backends among ``kinds`` that exist on this machine, in that order."""
    from tilelang.errors import BuildError
    from tilelang.runtime import get_backend

    found = []
    for kind in kinds:
        try:
            get_backend(kind)
        except BuildError:
            continue
        found.append(kind)
    return found


@pytest.fixture
def golden(request) -> Golden:
    return Golden(request)


def _has_gpu() -> bool:
    try:
        import cupy  # noqa: F401

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        pass
    try:
        import pycuda.driver as drv

        drv.init()
        return drv.Device.count() > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if any("gpu" in item.keywords for item in items) and not _has_gpu():
        skip = pytest.mark.skip(reason="needs an NVIDIA GPU")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)
