"""Sampling: random decisions a schedule records in its trace and replays.

Both samplers take the schedule's ``random.Random``; a given ``decision`` is
validated and used instead of drawing, which is how a trace replays.
"""

from __future__ import annotations

import numpy as np

from tilelang.schedule.errors import schedule_error


def perfect_tilings(extent: int, n: int, max_innermost_factor: int) -> list[tuple]:
    """Every ordered ``n``-tuple of positive ints multiplying to ``extent`` whose last
    element is at most ``max_innermost_factor``."""
    if n == 1:
        return [(extent,)] if extent <= max_innermost_factor or max_innermost_factor <= 0 else []
    out = []
    for first in range(1, extent + 1):
        if extent % first == 0:
            out.extend(
                (first, *rest)
                for rest in perfect_tilings(extent // first, n - 1, max_innermost_factor)
            )
    return out


def symbolic_tiling(n: int) -> list:
    """TVM's tiling of a loop of symbolic extent into ``n`` factors: ``[-1, 1, ..., 1]``,
    -1 standing for the factor ``split`` infers."""
    if not isinstance(n, int) or n < 1:
        raise schedule_error(
            "sample_perfect_tile", "a symbolic extent", f"n must be a positive int, not {n!r}"
        )
    return [-1] + [1] * (n - 1)


def sample_perfect_tile(rng, extent: int, n: int, max_innermost_factor: int, decision=None):
    """A perfect tiling of ``extent`` into ``n`` factors (uniform over all of them)."""
    subject = f"extent {extent}"
    if not isinstance(n, int) or n < 1:
        raise schedule_error("sample_perfect_tile", subject, f"n must be a positive int, not {n!r}")
    if decision is not None:
        if not isinstance(decision, (list, tuple)) or not all(_is_int(d) for d in decision):
            raise schedule_error(
                "sample_perfect_tile", subject, f"decision {decision!r} is not a list of ints"
            )
        decision = [int(d) for d in decision]
        product = 1
        for d in decision:
            product *= d
        if len(decision) != n or product != extent or min(decision) < 1:
            raise schedule_error(
                "sample_perfect_tile",
                subject,
                f"decision {decision} is not {n} positive factors of {extent}",
            )
        return decision
    choices = perfect_tilings(extent, n, max_innermost_factor)
    if not choices:
        raise schedule_error(
            "sample_perfect_tile",
            subject,
            f"no tiling into {n} factors has an innermost factor <= {max_innermost_factor}",
        )
    return list(rng.choice(choices))


def sample_categorical(rng, candidates, probs, decision=None) -> int:
    """The index of the chosen candidate."""
    subject = f"candidates {list(candidates)}"
    if len(candidates) != len(probs) or not candidates:
        raise schedule_error(
            "sample_categorical", subject, "needs as many probabilities as candidates (and some)"
        )
    if not all(isinstance(p, (int, float)) and not isinstance(p, bool) for p in probs):
        raise schedule_error("sample_categorical", subject, f"bad probabilities {list(probs)}")
    if any(p < 0 for p in probs) or sum(probs) <= 0:
        raise schedule_error("sample_categorical", subject, f"bad probabilities {list(probs)}")
    if decision is not None:
        if not _is_int(decision) or not 0 <= decision < len(candidates):
            raise schedule_error("sample_categorical", subject, f"bad decision {decision!r}")
        return decision
    return rng.choices(range(len(candidates)), weights=probs)[0]


def _is_int(value) -> bool:
    """An integer decision (a NumPy integer too), not a bool, float or string."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
