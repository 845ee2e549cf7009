"""``ms.database``: the tuning database is :class:`tilelang.tune.JSONDatabase`
(one JSON-lines file in the work directory; see :mod:`tilelang.tune.database`)."""

from tilelang.tune.database import JSONDatabase, TuningRecord

__all__ = ["JSONDatabase", "TuningRecord"]
