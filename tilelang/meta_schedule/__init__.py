"""MetaSchedule's spelling of the tuner: the MLC course's ``from tvm import meta_schedule
as ms`` runs with ``from tilelang import meta_schedule as ms``.

This package is a facade over :mod:`tilelang.tune` (one tuner, one database format)::

    database = ms.tune_tir(
        mod=MyModule, target="llvm --num-cores=1",
        max_trials_global=64, num_trials_per_iter=64,
        space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
        work_dir="./tune_tmp", task_name="main",
    )
    sch = ms.tir_integration.compile_tir(database, MyModule, "llvm --num-cores=1")
    sch.trace.show(); sch.mod.show()

- :mod:`~tilelang.meta_schedule.tir_integration`: ``tune_tir``, ``compile_tir``
- :mod:`~tilelang.meta_schedule.relax_integration`: ``extract_tasks``, ``tune_relax``,
  ``compile_relax`` (every prim_func a graph-level module calls)
- :mod:`~tilelang.meta_schedule.space_generator`: ``ScheduleFn``, ``PostOrderApply``
- :mod:`~tilelang.meta_schedule.database`: ``JSONDatabase``

See docs/coming_from_tvm.md for the options tilelang's tuner does not have.
"""

from tilelang.meta_schedule import database, relax_integration, space_generator, tir_integration
from tilelang.meta_schedule.relax_integration import tune_relax
from tilelang.meta_schedule.tir_integration import compile_tir, tune_tir

__all__ = [
    "database", "relax_integration", "space_generator", "tir_integration", "tune_tir",
    "compile_tir", "tune_relax",
]  # fmt: skip
