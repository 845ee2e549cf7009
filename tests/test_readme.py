"""The README's Python example runs as written (it asserts its own result)."""

import re
import runpy
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "README.md has no ```python example"
    for number, block in enumerate(blocks):
        # A file, as a user would save it: @T.prim_func reads its source with inspect.
        script = tmp_path / f"readme_example_{number}.py"
        script.write_text(block)
        runpy.run_path(str(script), run_name="__main__")
    printed = capsys.readouterr().out
    assert "def apply_trace(sch: tir.Schedule) -> None:" in printed
    assert "sch.reverse_compute_at(block=b6, loop=l4" in printed
