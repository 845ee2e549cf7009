"""Per-task reporting for tuning runs of one or many tasks: the progress line of a
whole-model run, the final table and the best-so-far curves.

The table follows MetaSchedule's task table (ID, name, FLOP, weight, GFLOP/s,
latency, weighted latency, trials) plus the cost model's accuracy: the mean Kendall
tau between the order it predicted for the candidates it chose and their measured
order (``-`` when it chose none, e.g. before it had eight measurements), and how many
candidates the cost models scored per round (screened by decisions, ranked by IR).
"""

from __future__ import annotations

import math
import warnings

from tilelang.tune.progress import Progress, _gflops, best_so_far


def task_table(rows) -> str:
    """A table of task summaries (dicts with ``name``, ``flop``, ``weight``,
    ``best_sec``, ``trials`` and optionally ``model_tau`` and ``scored``: candidates
    the cost models scored per round), one row each, then the
    total trials and the model's latency: the weighted sum of the tasks' best."""
    header = ["ID", "Name", "FLOP", "Weight", "Speed (GFLOPS)", "Latency (us)",
              "Weighted Latency (us)", "Trials", "Model tau", "Scored/round"]  # fmt: skip
    body, total, trials = [], 0.0, 0
    for index, row in enumerate(rows):
        best = row["best_sec"]
        latency = best * 1e6 if math.isfinite(best) else math.nan
        tau = row.get("model_tau")
        body.append([
            str(index), row["name"], f"{int(row['flop'])}", str(row["weight"]),
            f"{_gflops(row['flop'], best):.4f}", f"{latency:.4f}",
            f"{latency * row['weight']:.4f}", str(row["trials"]),
            "-" if tau is None else f"{tau:.2f}",
            "-" if row.get("scored") is None else str(row["scored"]),
        ])  # fmt: skip
        total += latency * row["weight"]
        trials += row["trials"]
    widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(header)]
    fmt = " | ".join(f"{{:>{w}}}" for w in widths)
    rule = "-" * (sum(widths) + 3 * (len(widths) - 1))
    lines = [fmt.format(*header), rule, *(fmt.format(*r) for r in body), rule]
    if len(body) > 1:
        lines.append(f"Total trials: {trials}   Total weighted latency: {total:.4f} us")
    return "\n".join(lines)


class ModelProgress:
    """The progress line of a whole-model run: trials over the shared budget, the task
    being tuned with its own trials, best and cost-model accuracy (once it has chosen a
    batch), and the model's estimated latency."""

    def __init__(self, tasks, total: int, stream=None, enabled: bool = True):
        self.tasks = tasks
        self.bar = Progress(total, 0.0, stream, enabled)
        self.stream = self.bar.stream

    def for_task(self, task):
        """An object with ``update(trials, best_sec)`` for ``task``'s batch."""
        return _TaskBar(self, task)

    def show(self, task) -> None:
        if not self.bar.enabled:
            return
        done = sum(t.trials for t in self.tasks)
        line = self.bar.line(done, math.inf).split("  ")[0]
        best = task.best_sec()
        shown = f"{best * 1e3:.4f} ms" if math.isfinite(best) else "none yet"
        latency = total_latency(self.tasks)
        model = f"{latency * 1e3:.4f} ms" if math.isfinite(latency) else "unknown"
        summary = task.summary()
        tau, scored = summary.get("model_tau"), summary.get("scored")
        accuracy = "" if tau is None else f", model tau {tau:.2f}"
        if scored is not None:
            accuracy += f", scored {scored}/round"
        text = (
            f"{line}  task {task.name}: {task.trials} trials, best {shown}{accuracy}  model {model}"
        )
        self.stream.write(("\r" + text) if self.bar.tty else text + "\n")
        self.stream.flush()

    def close(self) -> None:
        self.bar.close()


class _TaskBar:
    def __init__(self, progress, task):
        self.progress, self.task = progress, task

    def update(self, trials, best_sec, scored=None) -> None:
        self.progress.show(self.task)


def total_latency(tasks) -> float:
    """The model's latency estimate: each task's best seconds times its weight
    (infinite while a task has no valid candidate)."""
    return sum(t.weight * t.best_sec() for t in tasks)


def save_task_plot(path, tasks) -> bool:
    """Save one best-so-far GFLOP/s curve per task (against that task's trials) as a
    PNG; False (with a warning) when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warnings.warn("plot skipped: matplotlib is not installed", stacklevel=2)
        return False
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for task in tasks:
        curve = [_gflops(task.flop, s) for s in best_so_far(task.latencies())]
        ax.plot(range(1, len(curve) + 1), curve, marker=".", label=task.name)
    ax.set_xlabel("trials of the task")
    ax.set_ylabel("best GFLOP/s so far")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


__all__ = ["task_table", "ModelProgress", "total_latency", "save_task_plot"]
