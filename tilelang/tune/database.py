"""The tuning database: one JSON-lines file per work directory.

Each line is one measured candidate::

    {"workload": "<workload_hash>", "target": "llvm", "trace": [...],
     "run_secs": [0.0012, ...], "valid": true, "error": null, "args_info": {...}}

``trace`` is :func:`tilelang.tune.trace_json.trace_to_json`'s form. A line with
``"remeasured": true`` is a finalist timed again side by side with the others at the
end of a run (``tune_tir(confirm=N)``), not a trial. A record is
appended with a single ``write`` of the whole line followed by ``fsync``, so a crash
leaves at most one torn last line; a line that does not parse is skipped with a
warning, never an error. Records are keyed by the workload's stable structural hash
and the target string, so a second tuning of the same workload finds them.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import warnings
from pathlib import Path

import attrs

from tilelang.tune.trace_json import trace_from_json, trace_to_json
from tilelang.tune.workload import workload_hash

DATABASE_FILE = "database.jsonl"


@attrs.frozen
class TuningRecord:
    """One measured candidate: its trace (JSON form), timings and whether it was valid.

    ``run_secs`` are the measured seconds per call (empty when the candidate failed to
    build or computed something else; ``error`` then says why)."""

    workload: str
    target: str
    trace: list
    run_secs: tuple = ()
    valid: bool = True
    error: str | None = None
    flop: float = 0.0
    remeasured: bool = False  # a finalist timed again side by side (not a trial)

    @property
    def mean_sec(self) -> float:
        """Mean seconds per call; infinity for an invalid candidate."""
        if not self.valid or not self.run_secs:
            return math.inf
        return sum(self.run_secs) / len(self.run_secs)

    @property
    def latency(self) -> float:
        """Median seconds per call, the figure candidates are ranked by (on a shared
        machine one preempted repeat would dominate the mean); infinity when invalid."""
        if not self.valid or not self.run_secs:
            return math.inf
        return statistics.median(self.run_secs)

    def as_trace(self):
        """The :class:`tilelang.schedule.Trace` of this record."""
        return trace_from_json(self.trace)

    def to_json(self) -> dict:
        return {
            "workload": self.workload,
            "target": self.target,
            "trace": self.trace,
            "run_secs": list(self.run_secs),
            "valid": self.valid,
            "error": self.error,
            "flop": self.flop,
            **({"remeasured": True} if self.remeasured else {}),
        }

    @classmethod
    def from_json(cls, data: dict) -> TuningRecord:
        return cls(
            workload=str(data["workload"]),
            target=str(data["target"]),
            trace=list(data["trace"]),
            run_secs=tuple(float(x) for x in data.get("run_secs", ())),
            valid=bool(data.get("valid", True)),
            error=data.get("error"),
            flop=float(data.get("flop", 0.0)),
            remeasured=bool(data.get("remeasured", False)),
        )


class JSONDatabase:
    """Tuning records in ``<work_dir>/database.jsonl`` (TVM MetaSchedule's JSONDatabase).

    Example::

        db = JSONDatabase("tune_logs")
        best = db.query_best(mod, "llvm")
        sch = db.query_schedule(mod, "llvm")
    """

    def __init__(self, work_dir):
        self.work_dir = Path(work_dir)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.work_dir / DATABASE_FILE
        self._records: list[TuningRecord] = []
        self._load()

    def _load(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    self._records.append(TuningRecord.from_json(json.loads(line)))
                except (ValueError, KeyError, TypeError) as exc:
                    warnings.warn(
                        f"{self.path}:{number}: skipping a corrupt tuning record ({exc})",
                        stacklevel=3,
                    )

    def __len__(self) -> int:
        return len(self._records)

    def commit(self, record: TuningRecord) -> None:
        """Append ``record`` to the file (one write, then fsync) and to memory."""
        line = (json.dumps(record.to_json(), separators=(",", ":")) + "\n").encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size and not _ends_with_newline(self.path):
                line = b"\n" + line  # a torn last line stays a line of its own
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        self._records.append(record)

    def records(self, mod=None, target: str | None = None) -> list[TuningRecord]:
        """The records of ``mod`` on ``target`` (all records when both are None)."""
        key = None if mod is None else (mod if isinstance(mod, str) else workload_hash(mod))
        return [
            r
            for r in self._records
            if (key is None or r.workload == key) and (target is None or r.target == str(target))
        ]

    def query_best(self, mod, target: str, top_k: int = 1) -> list[TuningRecord]:
        """The ``top_k`` fastest valid records of ``mod`` on ``target``, fastest first,
        one per trace. When finalists were re-measured side by side after the last
        trial (``tune_tir(confirm=N)``), those re-measurements are the final word: only
        the finalists rank, each by its latest re-measurement (timings of trials taken
        at different moments of a loaded machine do not compare)."""
        records = self.records(mod, target)
        last_trial = max((i for i, r in enumerate(records) if not r.remeasured), default=-1)
        confirmed = records[last_trial + 1 :]
        chosen: dict = {}
        for record in confirmed or [r for r in records if not r.remeasured]:
            key = json.dumps(record.trace, sort_keys=True)
            held = chosen.get(key)
            if held is None or confirmed or record.latency < held.latency:
                chosen[key] = record
        valid = [r for r in chosen.values() if math.isfinite(r.latency)]
        return sorted(valid, key=lambda r: r.latency)[:top_k]

    def query_schedule(self, mod, target: str):
        """A :class:`tilelang.Schedule` of ``mod`` replaying the best record, or None."""
        from tilelang.tune.trace_json import replay

        best = self.query_best(mod, target)
        return replay(mod, best[0].as_trace()) if best else None


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def make_record(workload, target, trace, run_secs=(), valid=True, error=None, flop=0.0):
    """A :class:`TuningRecord` from a live :class:`Trace` (or its JSON form)."""
    data = trace if isinstance(trace, list) else trace_to_json(trace)
    return TuningRecord(workload, str(target), data, tuple(run_secs), valid, error, flop)
