"""Feedback while tuning: a progress bar, the final table and the best-so-far plot.

The bar redraws one line on a terminal and prints plain lines otherwise (logs, CI),
so it needs no third-party package. ``save_plot`` draws with matplotlib when it is
installed (the ``plot`` extra) and otherwise warns and does nothing.
"""

from __future__ import annotations

import math
import sys
import warnings


def _gflops(flop: float, seconds: float) -> float:
    return flop / seconds / 1e9 if seconds and math.isfinite(seconds) and flop else 0.0


class Progress:
    """``trials done / total``, best latency and best GFLOP/s, and how many candidates
    the cost model scored in the last round (when it did), on ``stream``."""

    WIDTH = 24

    def __init__(self, total: int, flop: float, stream=None, enabled: bool = True):
        self.total, self.flop, self.enabled = max(total, 1), flop, enabled
        self.stream = stream if stream is not None else sys.stderr
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()

    def line(self, done: int, best_sec: float, scored: int | None = None) -> str:
        filled = self.WIDTH * min(done, self.total) // self.total
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        if math.isfinite(best_sec):
            best = f"best {best_sec * 1e3:.4f} ms  {_gflops(self.flop, best_sec):.2f} GFLOP/s"
        else:
            best = "no valid candidate yet"
        scored = "" if scored is None else f"  scored {scored}/round"
        return f"[{bar}] {done}/{self.total} trials  {best}{scored}"

    def update(self, done: int, best_sec: float, scored: int | None = None) -> None:
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\r" + self.line(done, best_sec, scored))
        else:
            self.stream.write(self.line(done, best_sec, scored) + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            self.stream.write("\n")
            self.stream.flush()


def summary_table(name: str, flop: float, best_sec: float, trials: int) -> str:
    """The course's table for one task: FLOP, GFLOP/s, latency, trials (the table of
    :func:`tilelang.tune.report.task_table`)."""
    from tilelang.tune.report import task_table

    return task_table([{"name": name, "flop": flop, "weight": 1, "best_sec": best_sec,
                        "trials": trials}])  # fmt: skip


def best_so_far(latencies) -> list[float]:
    """The running minimum of per-trial latencies (inf for failed trials)."""
    out, best = [], math.inf
    for value in latencies:
        best = min(best, value)
        out.append(best)
    return out


def save_plot(path, latencies, flop: float) -> bool:
    """Save the best-so-far GFLOP/s per trial as a PNG; False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warnings.warn("plot skipped: matplotlib is not installed", stacklevel=2)
        return False
    curve = [_gflops(flop, s) for s in best_so_far(latencies)]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(range(1, len(curve) + 1), curve, marker=".")
    ax.set_xlabel("trial")
    ax.set_ylabel("best GFLOP/s so far")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True
