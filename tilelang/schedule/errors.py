"""Schedule errors: every failed precondition names the primitive, what it was
applied to, and why, and shows the part of the IR concerned.

Primitives raise through :func:`schedule_error`; the :class:`~tilelang.schedule.Schedule`
only replaces its state after a primitive fully succeeds, so an error leaves the
schedule exactly as it was.
"""

from __future__ import annotations

from tilelang.errors import ScheduleError

#: printed IR longer than this many lines is cut, so messages stay readable
MAX_IR_LINES = 24


def show_ir(node) -> str:
    """``node`` printed as TVMScript, cut to :data:`MAX_IR_LINES` lines."""
    try:
        text = node.script()
    except Exception:  # the printer must never hide the real error
        return f"<{type(node).__name__}>"
    lines = text.splitlines()
    if len(lines) > MAX_IR_LINES:
        lines = lines[:MAX_IR_LINES] + [f"... ({len(lines) - MAX_IR_LINES} more lines)"]
    return "\n".join(lines)


def schedule_error(
    primitive: str, subject: str, reason: str, node=None, fast: str | None = None
) -> ScheduleError:
    """A :class:`ScheduleError` reading ``primitive(subject): reason`` plus the IR.

    ``fast`` is the short form of ``reason`` without the particulars (TVM's
    ``FastErrorString``), shown by schedules made with ``error_render_level="fast"``.
    """
    message = f"{primitive}({subject}): {reason}"
    if node is not None:
        body = "\n".join("    " + line for line in show_ir(node).splitlines())
        message += f"\n  in:\n{body}"
    error = ScheduleError(message)
    error.primitive, error.subject, error.reason = primitive, subject, reason
    error.fast_reason = fast if fast is not None else reason
    return error


#: TVM's ``error_render_level`` values: the whole message with the IR, the short
#: reason only, or nothing but the fact
RENDER_LEVELS = ("detail", "fast", "none")


def rendered(error: ScheduleError, level: str) -> ScheduleError:
    """``error`` as a schedule made with ``error_render_level=level`` reports it: the
    same exception for "detail"; for "fast" ``ScheduleError: primitive: short reason``;
    for "none" ``ScheduleError: (not rendered)``. The attributes are kept."""
    if level == "detail" or getattr(error, "render_level", None) is not None:
        return error
    if level == "fast":
        primitive = getattr(error, "primitive", None)
        reason = getattr(error, "fast_reason", None) or getattr(error, "reason", None)
        text = f"ScheduleError: {primitive}: {reason}" if primitive else str(error)
    else:
        text = "ScheduleError: (not rendered)"
    out = type(error).__new__(type(error))
    out.__dict__.update(error.__dict__)
    out.args = (text,)
    out.render_level = level
    return out


class UnknownHandleError(ScheduleError, IndexError):
    """A handle this schedule does not know (removed, or another schedule's). It is an
    IndexError as well, the type TVM raises for it."""


class UnknownFunctionError(ScheduleError, ValueError):
    """No function was named and the module has several (none called ``main``). It is a
    ValueError as well, the type TVM raises for it."""


def unknown_handle(primitive: str, rv) -> UnknownHandleError:
    """The error for a handle that is not (or no longer) one of this schedule's."""
    reason = "not a handle of this schedule (removed, or from another schedule)"
    error = UnknownHandleError(f"{primitive}({rv!r}): {reason}")
    error.primitive, error.subject, error.reason = primitive, repr(rv), reason
    return error


def unknown_function(names) -> UnknownFunctionError:
    """The error for a lookup that names no function in a module of several."""
    reason = (
        f"the module has several functions ({', '.join(sorted(names))}) and none is "
        "called 'main': the schedule does not know which function to be working on; "
        "pass func_name= or call work_on()"
    )
    error = UnknownFunctionError(f"get_block: {reason}")
    error.primitive, error.subject, error.reason = "get_block", "func_name", reason
    return error


def check_bounds_after(primitive: str, func_name: str, before, after) -> None:
    """Debug mode: raise if ``after`` (a primitive's result) accesses a buffer provably
    out of bounds where ``before`` did not."""
    from tilelang.bounds import find_out_of_bounds

    issues = [i for i in find_out_of_bounds(after, func_name) if i.provable]
    if issues and len(issues) > sum(i.provable for i in find_out_of_bounds(before, func_name)):
        raise schedule_error(
            primitive, func_name, "the result would access a buffer out of bounds: "
            + issues[0].message(), after,
        )  # fmt: skip
