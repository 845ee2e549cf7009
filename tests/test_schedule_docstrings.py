"""The examples in the docstrings of the schedule primitives are run and must print
exactly their After text; every primitive has one; docs/schedule.md is what
docs/gen_schedule_doc.py generates from them.

The docstring form and its parser live in docs/gen_schedule_doc.py (the one
mechanism shared by the page generator and these tests).
"""

from __future__ import annotations

import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

import tilelang
from tilelang.schedule import Schedule

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_schedule_doc", DOCS / "gen_schedule_doc.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


gen = _load_generator()
PRIMITIVES = gen.primitives()

#: The primitives the schedule issue names; the derived list must contain them all.
EXPECTED = {
    "split", "fuse", "reorder", "parallel", "vectorize", "unroll", "bind", "annotate",
    "unannotate", "compute_at", "reverse_compute_at", "compute_inline",
    "reverse_compute_inline", "cache_read", "cache_write", "set_scope",
    "decompose_reduction", "rfactor", "blockize", "sample_perfect_tile", "sample_categorical",
}  # fmt: skip


def run_example(example) -> str:
    """Parses the Before, runs the Schedule code and prints ``sch.mod["main"]``."""
    before = tilelang.parse(example.before)
    namespace = {"tilelang": tilelang, "before": before}
    exec(compile(example.schedule, "<docstring example>", "exec"), namespace)
    return namespace["sch"].mod["main"].script()


def test_primitives_are_derived_from_the_class():
    # inherited too: the primitives are defined by one mixin per family
    public = {
        name
        for name, member in inspect.getmembers(Schedule, inspect.isfunction)
        if not name.startswith("_")
    }
    # the exclusions name real methods, so a renamed one cannot hide a primitive
    assert gen.NOT_PRIMITIVES <= public, gen.NOT_PRIMITIVES - public
    assert set(PRIMITIVES) == public - gen.NOT_PRIMITIVES
    assert EXPECTED <= set(PRIMITIVES), EXPECTED - set(PRIMITIVES)


@pytest.mark.parametrize("name", PRIMITIVES)
def test_docstring_has_the_fixed_form(name):
    # parse_primitive raises DocstringError when a section or example block is missing
    doc = gen.parse_primitive(name)
    assert [p.name for p in doc.parameters] == gen.parameter_names(name)
    assert all(p.type and p.text for p in doc.parameters), doc.parameters
    assert [r.head for r in doc.raises] == ["ScheduleError"]
    assert f"sch.{name}(" in doc.example.schedule
    assert doc.example.schedule.startswith("sch = tilelang.Schedule(before")


@pytest.mark.parametrize("name", PRIMITIVES)
def test_example_prints_its_after_text(name):
    example = gen.parse_primitive(name).example
    # the Before is itself printed output, so the two texts differ only by the primitive
    assert tilelang.parse(example.before)["main"].script() == example.before
    assert run_example(example) == example.after


def test_a_drifted_example_is_caught():
    example = gen.parse_primitive("split").example
    drifted = gen.Example(
        example.before, example.schedule.replace("[None, 4]", "[None, 2]"), example.after
    )
    assert run_example(drifted) != drifted.after


GOOD = """Does something.

    Parameters
    ----------
    loop : LoopRV
        The loop.

    Returns
    -------
    None

    Raises
    ------
    ScheduleError
        Never.

    Example
    -------
    Before::

        x = 1

    Schedule::

        sch = 2

    After::

        y = 3
    """


def test_parser_reads_the_form():
    doc = gen.parse_docstring(GOOD, "demo")
    assert doc.description == "Does something."
    assert [(p.name, p.type, p.text) for p in doc.parameters] == [("loop", "LoopRV", "The loop.")]
    assert [r.head for r in doc.returns] == ["None"]
    assert doc.example == gen.Example("x = 1", "sch = 2", "y = 3")


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("Raises\n    ------", "Raises", "expected the sections"),
        ("    After::\n", "", "the Example needs the blocks"),
        ("Does something.", "", "has no description"),
        ("        y = 3\n", "", "the After:: block is empty"),
        ("    loop : LoopRV\n", "", "Parameters starts with an indented line"),
    ],
)
def test_parser_names_what_is_missing(old, new, message):
    assert old in GOOD
    with pytest.raises(gen.DocstringError, match=message):
        gen.parse_docstring(GOOD.replace(old, new), "demo")


def test_schedule_md_is_generated_from_the_docstrings():
    committed = (DOCS / "schedule.md").read_text()
    assert committed == gen.render_markdown(), "run: python docs/gen_schedule_doc.py"
    for name in PRIMITIVES:
        assert f"\n## {name}\n" in committed


def test_generator_check_mode_exits_zero_when_current():
    script = DOCS / "gen_schedule_doc.py"
    result = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
