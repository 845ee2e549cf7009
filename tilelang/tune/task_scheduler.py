"""Task schedulers: which task of a model gets the next batch of measured trials.

A task is anything with ``weight`` (calls per model run), ``trials`` (measured so
far), ``best_sec()`` and ``exhausted`` (its space has nothing new); the driver
(:func:`allocate`) records each task's best latency after each of its batches and asks
the scheduler for the next task until the budget is spent.

:class:`GradientScheduler` follows MetaSchedule's gradient-based task scheduler: the
model's latency is ``sum(weight_i * best_i)``, and the next batch goes to the task
whose next batch is expected to lower it most. After one warm-up batch per task, a
task's expected gain is its weight times a blend of

- the *recent* improvement: how much its best latency fell per batch over its last
  ``window`` batches (zero for a task that has stalled), and
- the *optimistic* improvement ``best / batches``: the next batch's gain if the best
  latency kept falling like ``1 / batches``, which keeps every task in play and
  favours slow tasks with few batches,

weighted ``alpha`` and ``1 - alpha`` (MetaSchedule's defaults: 0.2 and a window of 3).
A task whose batches found no valid candidate yet comes last (gain 0: the model
still runs its function as the default rules schedule it). Ties go to the task with
fewer trials.
:class:`RoundRobinScheduler` gives each task a batch in turn (the even split).
"""

from __future__ import annotations

import math

from tilelang.errors import ArgumentError

ALPHA = 0.2
WINDOW = 3


class RoundRobinScheduler:
    """Each unfinished task in turn."""

    def __init__(self):
        self._turn = 0

    def next_task(self, tasks, histories, finished) -> int | None:
        """The index of the task to tune next, None when every task is finished."""
        for offset in range(len(tasks)):
            index = (self._turn + offset) % len(tasks)
            if not finished[index]:
                self._turn = index + 1
                return index
        return None


class GradientScheduler:
    """The next batch to the task with the largest expected weighted gain (see the
    module docstring); ``histories[i]`` is task i's best latency after each batch."""

    def __init__(self, alpha: float = ALPHA, window: int = WINDOW):
        if not 0.0 <= alpha <= 1.0 or window < 1:
            raise ArgumentError(f"gradient scheduler: alpha in [0, 1], window >= 1, "
                                f"not {alpha}, {window}")  # fmt: skip
        self.alpha, self.window = alpha, window

    def expected_gain(self, task, history) -> float:
        """Task's expected reduction of the model's latency (seconds) from one more
        batch; 0 while it has no valid candidate."""
        if not history or not math.isfinite(history[-1]):
            return 0.0
        best = history[-1]
        recent = 0.0
        if len(history) > self.window and math.isfinite(history[-1 - self.window]):
            recent = (history[-1 - self.window] - best) / self.window
        optimistic = best / len(history)
        return task.weight * (self.alpha * recent + (1.0 - self.alpha) * optimistic)

    def next_task(self, tasks, histories, finished) -> int | None:
        """The index of the task to tune next, None when every task is finished."""
        open_tasks = [i for i in range(len(tasks)) if not finished[i]]
        if not open_tasks:
            return None
        warming = [i for i in open_tasks if not histories[i]]
        if warming:
            return warming[0]
        return max(
            open_tasks,
            key=lambda i: (self.expected_gain(tasks[i], histories[i]), -tasks[i].trials, -i),
        )


def make_scheduler(name):
    """A scheduler by name (``"gradient"``, ``"round-robin"``) or the object itself."""
    if name == "gradient":
        return GradientScheduler()
    if name == "round-robin":
        return RoundRobinScheduler()
    if hasattr(name, "next_task"):
        return name
    raise ArgumentError(
        f"task_scheduler must be 'gradient', 'round-robin' or an object with next_task, "
        f"not {name!r}"
    )


def allocate(tasks, max_trials: int, batch: int, scheduler, step,
             max_trials_per_task: int | None = None) -> list[list[float]]:  # fmt: skip
    """Share ``max_trials`` measured trials (counting those the tasks already have)
    among ``tasks``, ``batch`` at a time (at most ``max_trials // len(tasks)``, so a
    small budget still gives every task its warm-up batch): ``step(task, count)``
    measures up to ``count`` candidates of one task and returns how many it measured
    (0: the space is exhausted). Returns each task's best-latency history, one entry
    per batch."""
    histories = [[] for _ in tasks]
    batch = max(1, min(batch, max_trials // max(1, len(tasks))))
    for task, history in zip(tasks, histories):
        if task.trials:  # earlier runs' records count as one batch each task has had
            history.append(task.best_sec())
    cap = max_trials_per_task if max_trials_per_task is not None else math.inf

    def finished(i):
        return tasks[i].exhausted or tasks[i].trials >= cap

    while sum(t.trials for t in tasks) < max_trials:
        index = scheduler.next_task(tasks, histories, [finished(i) for i in range(len(tasks))])
        if index is None:
            break
        task = tasks[index]
        left = max_trials - sum(t.trials for t in tasks)
        count = int(min(batch, left, cap - task.trials))
        step(task, count)
        histories[index].append(task.best_sec())
    return histories


__all__ = ["GradientScheduler", "RoundRobinScheduler", "make_scheduler", "allocate"]
