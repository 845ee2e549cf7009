"""Default CPU schedules: rules that schedule a function nobody scheduled.

``default_schedule(mod)`` returns a :class:`~tilelang.schedule.Schedule` whose module
is ``mod`` with every unscheduled PrimFunc scheduled by the rules and whose trace lists
the primitives they issued (``print(sch.trace)`` replays them). ``tilelang.build``,
``tilec`` and the graph-level build apply it unless asked not to
(``auto_schedule=False``, ``tilec --no-auto-schedule``); a function that carries any
schedule of its own (:func:`is_user_scheduled`) is left exactly as written.

Modules: ``analysis`` (facts about blocks: iterators, loops, access strides),
``machine`` (vector width, registers), ``tiling`` (register-tiled reductions),
``fusion`` (inlining, per-row fusion), ``loops`` (tile sizes, vectorise, parallel),
``apply`` (the driver and the order of the rules).
"""

from tilelang.schedule.rules.apply import default_schedule, is_user_scheduled
from tilelang.schedule.rules.machine import Machine, host_machine

__all__ = ["default_schedule", "is_user_scheduled", "Machine", "host_machine"]
