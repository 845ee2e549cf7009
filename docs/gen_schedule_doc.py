"""Generates ``docs/schedule.md`` from the docstrings of ``tilelang.Schedule``.

    python docs/gen_schedule_doc.py           # rewrite docs/schedule.md
    python docs/gen_schedule_doc.py --check   # exit 1 when docs/schedule.md is stale

Every schedule primitive's docstring has one fixed, numpy-style form (TVM's): a
description, then the sections ``Parameters``, ``Returns``, ``Raises`` and
``Example``, each underlined with dashes. The example has three literal blocks,
introduced by ``Before::``, ``Schedule::`` and ``After::``:

- Before: a function exactly as ``tilelang`` prints it;
- Schedule: Python run with ``before`` bound to the parsed Before (an IRModule);
- After: what ``sch.mod["main"].script()`` prints afterwards.

This module is the one parser of that form: the generator below renders it, and
``tests/test_schedule_docstrings.py`` runs every example and compares the After
text (and checks that this page is what the generator writes).
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from tilelang.schedule import Schedule

PAGE = Path(__file__).with_name("schedule.md")

#: Public methods of ``Schedule`` that read or manage state and handles rather than
#: transform the program; every other public method is a primitive and must
#: carry an example (so a new primitive without one fails the tests).
NOT_PRIMITIVES = frozenset(
    {
        "show",
        "copy",
        "seed",
        "fork_seed",
        "get",
        "remove_rv",
        "get_block",
        "get_sblock",
        "get_loops",
        "get_child_blocks",
        "get_producers",
        "get_consumers",
        "get_output_blocks",
        "get_sref",
        "work_on",
        "enter_postproc",
        "can_decompose_padding",
    }
)

SECTIONS = ("Parameters", "Returns", "Raises", "Example")
EXAMPLE_PARTS = ("Before", "Schedule", "After")


class DocstringError(ValueError):
    """A primitive's docstring does not follow the fixed form."""


@dataclass(frozen=True)
class Example:
    """The three literal blocks of a docstring's Example section (dedented)."""

    before: str
    schedule: str
    after: str


@dataclass(frozen=True)
class Entry:
    """One item of a Parameters, Returns or Raises section: ``head`` is the line
    ``name : type`` (or just the type), ``text`` the indented description."""

    head: str
    text: str

    @property
    def name(self) -> str:
        return self.head.split(" : ", 1)[0].strip()

    @property
    def type(self) -> str:
        return self.head.split(" : ", 1)[1].strip() if " : " in self.head else ""


@dataclass(frozen=True)
class PrimitiveDoc:
    """A parsed primitive docstring."""

    name: str
    signature: str
    description: str
    parameters: tuple[Entry, ...]
    returns: tuple[Entry, ...]
    raises: tuple[Entry, ...]
    example: Example


def public_methods() -> list[str]:
    """The public methods of ``Schedule``, its own and those of its primitive mixins:
    class by class in method resolution order (the core, then one family after
    another), each class's methods in source order."""
    names: list[str] = []
    for cls in Schedule.__mro__:
        names += [
            name
            for name, member in vars(cls).items()
            if inspect.isfunction(member) and not name.startswith("_") and name not in names
        ]
    return names


def primitives() -> list[str]:
    """The public methods of ``Schedule`` that transform the program, in the order of
    :func:`public_methods`."""
    return [name for name in public_methods() if name not in NOT_PRIMITIVES]


def parameter_names(name: str) -> list[str]:
    """The parameters of ``Schedule.<name>`` as documented: ``*args`` with its star,
    without ``self``."""
    params = list(inspect.signature(getattr(Schedule, name)).parameters.values())[1:]
    star = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    return [star.get(p.kind, "") + p.name for p in params]


def signature(name: str) -> str:
    """``name(arg, ...)`` as documented: no ``self``, no annotations."""
    sig = inspect.signature(getattr(Schedule, name))
    params = [
        p.replace(annotation=inspect.Parameter.empty) for p in list(sig.parameters.values())[1:]
    ]
    return name + str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


def parse_primitive(name: str) -> PrimitiveDoc:
    """The docstring of ``Schedule.<name>``, parsed; raises DocstringError naming the
    primitive and what is missing."""
    doc = getattr(Schedule, name).__doc__
    if not doc:
        raise DocstringError(f"Schedule.{name} has no docstring")
    return parse_docstring(doc, name)


def parse_docstring(doc: str, name: str = "?") -> PrimitiveDoc:
    """Parses a docstring of the fixed form (see the module docstring)."""
    lines = inspect.cleandoc(doc).splitlines()
    starts = [
        i
        for i in range(len(lines) - 1)
        if lines[i] in SECTIONS and set(lines[i + 1]) == {"-"} and len(lines[i + 1]) >= 3
    ]
    found = tuple(lines[i] for i in starts)
    if found != SECTIONS:
        raise DocstringError(
            f"Schedule.{name}: expected the sections {', '.join(SECTIONS)} in this order, "
            f"found {', '.join(found) or 'none'}"
        )
    description = "\n".join(lines[: starts[0]]).strip()
    if not description:
        raise DocstringError(f"Schedule.{name}: the docstring has no description")
    bodies = [
        "\n".join(lines[start + 2 : end]) for start, end in zip(starts, [*starts[1:], len(lines)])
    ]
    parameters, returns, raises = (
        _entries(body, name, section) for body, section in zip(bodies[:3], SECTIONS)
    )
    return PrimitiveDoc(
        name,
        signature(name) if hasattr(Schedule, name) else name,
        description,
        parameters,
        returns,
        raises,
        parse_example(bodies[3], name),
    )


def _entries(body: str, name: str, section: str) -> tuple[Entry, ...]:
    """Items of a section: an unindented head line, then its indented description."""
    entries: list[Entry] = []
    for line in body.strip("\n").splitlines():
        if line and not line[0].isspace():
            entries.append(Entry(line.strip(), ""))
        elif not entries:
            raise DocstringError(f"Schedule.{name}: {section} starts with an indented line")
        elif line.strip():
            last = entries[-1]
            entries[-1] = Entry(last.head, f"{last.text} {line.strip()}".strip())
    if not entries:
        raise DocstringError(f"Schedule.{name}: the {section} section is empty")
    return tuple(entries)


def parse_example(body: str, name: str = "?") -> Example:
    """The ``Before::``, ``Schedule::`` and ``After::`` blocks of an Example section."""
    lines = body.splitlines()
    markers = [i for i, line in enumerate(lines) if line.strip().endswith("::")]
    found = tuple(lines[i].strip()[:-2] for i in markers)
    if found != EXAMPLE_PARTS:
        raise DocstringError(
            f"Schedule.{name}: the Example needs the blocks "
            f"{', '.join(p + '::' for p in EXAMPLE_PARTS)} in this order, "
            f"found {', '.join(p + '::' for p in found) or 'none'}"
        )
    blocks = []
    for part, start, end in zip(EXAMPLE_PARTS, markers, [*markers[1:], len(lines)]):
        code = lines[start + 1 : end]
        if any(line.strip() and not line[:1].isspace() for line in code):
            raise DocstringError(f"Schedule.{name}: the {part}:: block must be indented")
        text = textwrap.dedent("\n".join(code)).strip("\n")
        if not text:
            raise DocstringError(f"Schedule.{name}: the {part}:: block is empty")
        blocks.append(text)
    return Example(*blocks)


# ------------------------------------------------------------------ rendering

_ROLE = re.compile(r":(?:func|meth|class|mod|attr):`~?([^`]+)`")


def _markdown(text: str) -> str:
    """reST inline markup as Markdown: ``code`` and :role:`target` become `code`."""
    return _ROLE.sub(r"`\1`", text).replace("``", "`")


def render_primitive(doc: PrimitiveDoc) -> str:
    """The Markdown section of one primitive."""
    out = [f"## {doc.name}", "", f"```python\nSchedule.{doc.signature}\n```", ""]
    out += [_markdown(doc.description), "", "**Parameters**", ""]
    out += [f"- `{p.name}` (*{p.type}*): {_markdown(p.text)}" for p in doc.parameters]
    out += ["", "**Returns**", ""]
    out += [f"- *{r.head}*" + (f": {_markdown(r.text)}" if r.text else "") for r in doc.returns]
    out += ["", "**Raises**", ""]
    out += [f"- `{r.head}`: {_markdown(r.text)}" for r in doc.raises]
    out += ["", "**Example**", ""]
    ex = doc.example
    for title, code in (("Before", ex.before), ("Schedule", ex.schedule), ("After", ex.after)):
        out += [f"{title}:", "", "```python", code, "```", ""]
    return "\n".join(out)


HEADER = """\
<!-- Generated by docs/gen_schedule_doc.py from the docstrings of tilelang.Schedule;
     edit the docstrings and rerun the script (a test checks this page is current). -->

# Schedule primitives

`tilelang.Schedule` (also `tilelang.tir.Schedule`) transforms a TensorIR program
with TVM's primitives. Each section below is one primitive's docstring. Its example
is run by `tests/test_schedule_docstrings.py`:

- **Before** is a function exactly as tilelang prints it;
- **Schedule** is Python run with `before` bound to `tilelang.parse(<Before>)`;
- **After** is what `sch.mod["main"].script()` prints afterwards.

A failing primitive raises `tilelang.ScheduleError` naming the primitive, the block
or loop and the reason, and leaves the schedule unchanged. Handles (`BlockRV`,
`LoopRV`, `ExprRV`) come from `get_block`, `get_loops`, `get_child_blocks`,
`get_producers`, `get_consumers` and the primitives themselves.
"""


def render_markdown() -> str:
    """The whole reference page."""
    docs = [parse_primitive(name) for name in primitives()]
    index = [f"- [`{d.name}`](#{d.name})" for d in docs]
    parts = [HEADER, "\n".join(index), ""] + [render_primitive(d) for d in docs]
    return "\n".join(parts).rstrip("\n") + "\n"


def main(argv=None) -> int:
    """Writes (or with ``--check`` compares) ``docs/schedule.md``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    args = parser.parse_args(argv)
    try:
        text = render_markdown()
    except DocstringError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args.check:
        current = PAGE.read_text() if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE} is out of date; run python docs/gen_schedule_doc.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
