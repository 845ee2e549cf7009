"""Screening thousands of candidates a round without building them.

Drawing a candidate runs the space's schedule primitives and reading its features
lowers it: about 20 ms here, so a round could score only a few hundred candidates.
MetaSchedule's evolutionary search scores a population of thousands with its cost
model and measures the best few. This module makes that affordable by working on
*decisions*, not on IR:

* a candidate is the list of its trace's sampling decisions; a stored trace gives
  each decision's instruction (tile count and innermost bound, categorical
  candidates), so a **mutation** redraws one decision from the same choices the
  space offered (another perfect tiling of the same extent, another categorical
  candidate) without running the space -- microseconds;
* its **decision features** (:func:`decision_features`) are read off the decisions:
  each tiling's factors and the extents of its inner tiles (``log2``), each
  categorical's chosen value; a second :class:`~tilelang.tune.cost_model.CostModel`
  trained on the measured traces' decisions ranks the population;
* the evolutionary loop (:meth:`Screen.propose`) mutates the parents (best measured
  traces and this round's fresh draws) for a few generations, keeping the
  best-scored, and returns the top of everything it scored.

The tuner then builds only those (running the space with the decisions forced, so a
decision that changed the space's structure is reconciled by the space itself) and
ranks them again by their lowered IR's features before measuring. Compute-location
decisions are kept as the parent has them: their choices depend on the IR.
"""

from __future__ import annotations

import functools
import json
import math

import numpy as np

from tilelang.schedule.sampling import perfect_tilings

#: length of the decision feature vector (longer traces are cut, shorter padded)
WIDTH = 64
#: what a missing position holds
PAD = -1.0
#: generations of the evolutionary screen per round
GENERATIONS = 4
#: parents kept from one generation to the next
SURVIVORS = 64
#: how many decisions a mutant redraws (one most often; more reach further)
CHANGES = (1, 1, 1, 2, 2, 3)


def sampling_steps(trace_data) -> list[dict]:
    """The sampling instructions of a stored trace (JSON, see
    :mod:`tilelang.tune.trace_json`), in order: ``kind``, its arguments, ``decision``."""
    return [
        {"kind": item["kind"], "args": dict(item["args"]), "decision": item["decision"]}
        for item in trace_data
        if item.get("decision") is not None
    ]


def decision_features(steps, decisions=None) -> np.ndarray:
    """The fixed-length vector (:data:`WIDTH`) describing ``decisions`` (default: the
    steps' own) taken at ``steps``: per tiling, ``log2`` of each factor and of the
    product of the innermost 2, 3, ... factors (the tiles' extents); per categorical
    draw, the chosen candidate when it is a number (else its index); per compute
    location, its index."""
    out: list[float] = []
    for step, decision in zip(steps, decisions or [s["decision"] for s in steps]):
        if step["kind"] == "sample_perfect_tile" and isinstance(decision, list):
            logs = [math.log2(max(_number(f), 1.0)) for f in decision]
            out += logs
            inner = 0.0
            for value in reversed(logs[1:]):
                inner += value
                out.append(inner)
        elif step["kind"] == "sample_categorical":
            candidates = step["args"].get("candidates")
            known = isinstance(candidates, list) and _is_index(decision, len(candidates))
            chosen = candidates[decision] if known else None
            numeric = isinstance(chosen, (int, float)) and not isinstance(chosen, bool)
            out.append(float(chosen) if numeric else _number(decision))
        else:
            out.append(_number(decision))
    out = out[:WIDTH]
    return np.array(out + [PAD] * (WIDTH - len(out)), dtype=np.float64)


def _is_index(value, count: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < count


def _number(value) -> float:
    """A decision as a number (a stored trace is data: anything else counts as PAD)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return float(value) if ok else PAD


@functools.lru_cache(maxsize=256)
def _tilings(extent: int, n: int, max_innermost: int) -> tuple:
    return tuple(perfect_tilings(extent, n, max_innermost))


def _redraw(step, decision, rng):
    """Another choice for one decision, from the choices its instruction offered; None
    when there is no other (or the kind's choices are not known from the trace)."""
    args = step["args"]
    if step["kind"] == "sample_perfect_tile":
        if not isinstance(decision, list) or not all(_is_index(f, 2**31) for f in decision):
            return None
        extent = math.prod(decision)
        choices = _tilings(extent, len(decision), int(args.get("max_innermost_factor", 16)))
        if len(choices) < 2:
            return None
        for _ in range(4):
            choice = list(rng.choice(choices))
            if choice != list(decision):
                return choice
        return None
    if step["kind"] == "sample_categorical":
        candidates = args.get("candidates")
        count = len(candidates) if isinstance(candidates, list) else 0
        others = [i for i in range(count) if i != decision]
        if not others:
            return None
        probs = args.get("probs")
        if not isinstance(probs, list) or len(probs) != count:
            probs = [1.0] * count
        weights = [max(_number(probs[i]), 1e-3) for i in others]
        return rng.choices(others, weights=weights)[0]
    return None  # compute locations: their choices depend on the IR


def mutate_decisions(steps, decisions, rng, changes: int = 1):
    """``decisions`` with ``changes`` of them (at random mutable positions) redrawn;
    None when none can change."""
    mutable = [i for i, s in enumerate(steps) if s["kind"] != "sample_compute_location"]
    if not mutable:
        return None
    out = list(decisions)
    changed = False
    for index in rng.sample(mutable, min(changes, len(mutable))):
        other = _redraw(steps[index], out[index], rng)
        if other is not None:
            out[index], changed = other, True
    return out if changed else None


def decision_key(decisions) -> str:
    """A hashable identity of a decision list."""
    return json.dumps(decisions, separators=(",", ":"))


class Screen:
    """Scores decision lists with a cost model trained on the measured traces'
    decisions, and proposes the best-scored unseen mutants of a set of parents."""

    def __init__(self, model):
        self.model = model  # a CostModel over decision_features

    @property
    def trained(self) -> bool:
        return self.model.trained

    def update(self, traces, latencies) -> None:
        """Learn from measured candidates: their stored traces and latencies."""
        features = [decision_features(sampling_steps(t)) for t in traces]
        self.model.update(features, latencies)

    def propose(self, parents, count: int, population: int, seen, rng) -> tuple[list, int]:
        """``(steps, decisions)`` of up to ``count`` unseen candidates, best-scored
        first, chosen among about ``population`` mutants of ``parents`` (stored
        traces) scored over :data:`GENERATIONS` generations; also returns how many
        were scored. ``seen`` holds :func:`decision_key` of candidates to leave out."""
        sources = []
        for trace in parents:
            steps = sampling_steps(trace)
            if steps:
                sources.append((steps, [s["decision"] for s in steps]))
        if not sources or count <= 0 or population <= 0:
            return [], 0
        originals = list(sources)
        scored: dict = {}  # key -> (score, steps, decisions)
        per_generation = max(1, population // GENERATIONS)
        for _ in range(GENERATIONS):
            fresh = []
            for _ in range(per_generation * 8):
                if len(fresh) == per_generation:
                    break
                steps, decisions = rng.choice(sources)
                child = mutate_decisions(steps, decisions, rng, changes=rng.choice(CHANGES))
                if child is None:
                    continue
                key = decision_key(child)
                if key in seen or key in scored:
                    continue
                scored[key] = None
                fresh.append((key, steps, child))
            if not fresh:
                break
            scores = self.model.predict([decision_features(s, d) for _, s, d in fresh])
            for (key, steps, child), score in zip(fresh, scores):
                scored[key] = (float(score), steps, child)
            best = sorted(scored.values(), key=lambda item: -item[0])[:SURVIVORS]
            sources = [(steps, child) for _, steps, child in best] + originals
        ranked = sorted(scored.values(), key=lambda item: -item[0])
        return [(steps, child) for _, steps, child in ranked[:count]], len(scored)
