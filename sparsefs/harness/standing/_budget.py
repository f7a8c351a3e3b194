"""The time budget of one cell, counted in CPU seconds of the process that computes it.

The machine the benchmarks run on is shared: wall time depends on everyone else's load, the
CPU time of a single-threaded computation hardly does. Every cell runs with one BLAS and one
numba thread, so its CPU time is what its wall time would be on a quiet machine.
"""

from __future__ import annotations

import time

__all__ = ["Budget", "OverBudget", "cpu_seconds"]


def cpu_seconds() -> float:
    """CPU time (user + system) of this process, all its threads (``time.process_time``)."""
    return time.process_time()


class OverBudget(Exception):
    """Raised by a cell that will not finish within its budget (stored as "not run in
    budget" with the message)."""


class Budget:
    """CPU-time budget of a cell, started at construction.

    Parameters
    ----------
    seconds : float or None
        ``None``: no budget.
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.start = cpu_seconds()

    @property
    def elapsed(self) -> float:
        """CPU seconds since the start."""
        return cpu_seconds() - self.start

    def check(self, done: int, total: int, what: str = "folds") -> None:
        """After ``done`` of ``total`` equal steps: raise :class:`OverBudget` when the CPU time
        spent exceeds the budget, or when the projected CPU time of the cell,
        ``elapsed * total / done``, does (after the first step only when it exceeds twice the
        budget: the first step also pays for imports and compilation)."""
        if self.seconds is None or done <= 0:
            return
        elapsed = self.elapsed
        projected = elapsed * total / done
        limit = self.seconds * (1.25 if done == 1 else 1.0)
        if elapsed > self.seconds or (done < total and projected > limit):
            raise OverBudget(f"{done} of {total} {what} took {elapsed:.0f} CPU s: about "
                             f"{projected:.0f} s in all, over the budget of "
                             f"{self.seconds:.0f} s")

    def check_elapsed(self) -> None:
        """Raise :class:`OverBudget` when the CPU time spent exceeds the budget (for steps of
        unequal cost, where a projection would mislead)."""
        if self.seconds is not None and self.elapsed > self.seconds:
            raise OverBudget(f"took {self.elapsed:.0f} CPU s, over the budget of "
                             f"{self.seconds:.0f} s")
