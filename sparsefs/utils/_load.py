"""Machine load over a time window: the one load monitor of the harness, the standing
benchmarks and the benchmark scripts (``benchmarks/_bench.py``).

Standard library only, so that a benchmark script can import it without loading numpy or
scikit-learn.

The share of the machine used by *other* processes over the window is

.. math::

    f_l = \\frac{\\max(0,\\ B - c)}{T},

with :math:`B` the busy CPU time of the whole machine (user + nice + system + irq + softirq +
steal, from ``/proc/stat``), :math:`T` its capacity (busy + idle + iowait, over all CPUs)
and :math:`c` this process's own CPU time (``os.times()``: all its threads, and its child
processes once reaped). Caveats: worker *processes* still alive (a dask cluster, joblib/loky
with ``n_jobs > 1``) count as "other"; a window of fewer than :data:`FL_MIN_TICKS` ticks of
capacity is coarse (10 ms ticks: one stray tick is worth 1 % or more). Off Linux (no
``/proc/stat``) the shares are ``None``.
"""

from __future__ import annotations

import os
import time
from typing import Any

__all__ = ["FL_LIMIT", "FL_MIN_TICKS", "LoadMonitor", "fl_flag"]

#: Timings whose share of the machine used by other processes exceeds this are flagged.
FL_LIMIT = 0.05
#: Windows with fewer ticks of capacity than this (over all CPUs: under 0.5 s on 2 CPUs) give a
#: coarse share; they are recorded but never flagged.
FL_MIN_TICKS = 100


def _proc_stat_ticks() -> tuple[int, int, int] | None:
    """``(busy, steal, total)`` ticks summed over all CPUs from ``/proc/stat``, or None."""
    try:
        with open("/proc/stat") as fh:
            first = fh.readline().split()
    except OSError:
        return None
    if not first or first[0] != "cpu":
        return None
    v = [int(x) for x in first[1:]] + [0] * 8
    user, nice, system, idle, iowait, irq, softirq, steal = v[:8]
    # guest / guest_nice are already included in user / nice
    busy = user + nice + system + irq + softirq + steal
    return busy, steal, busy + idle + iowait


def _own_cpu_s() -> float:
    """CPU time of this process (all its threads) plus its reaped child processes."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def fl_flag(fl: float | None, coarse: bool = False) -> str | None:
    """A loud message when ``fl`` exceeds :data:`FL_LIMIT` in a window that is not coarse."""
    if fl is not None and fl > FL_LIMIT and not coarse:
        return f"HIGH MACHINE LOAD: fl={fl:.3f} > {FL_LIMIT}; timings unreliable"
    return None


class LoadMonitor:
    """Machine load during a window: ``start()``, then ``stop()`` returns its figures.

    ``stop()`` returns a dict with ``wall_s`` and ``own_cpu_s`` (this process), ``cpu_count``,
    the load averages ``loadavg_before`` / ``loadavg_after``, ``busy_share`` (the busy share
    of all CPUs' time, everyone included), ``fl`` (the share used by other processes, the
    formula of the module docstring; ``other_share`` is the same figure under the harness's
    older name), ``steal_share`` (the hypervisor's) and ``fl_coarse`` (a window too short for
    a reliable share, :data:`FL_MIN_TICKS`).

    Examples
    --------
    >>> from sparsefs.utils._load import LoadMonitor
    >>> mon = LoadMonitor().start()
    >>> load = mon.stop()
    >>> load["wall_s"] >= 0 and "fl" in load
    True
    """

    def __init__(self) -> None:
        self._t0 = 0.0
        self._stat0: tuple[int, int, int] | None = None
        self._cpu0 = 0.0
        self._load0: list[float] | None = None

    def start(self) -> LoadMonitor:
        """Start the window."""
        self._load0 = _loadavg()
        self._stat0 = _proc_stat_ticks()
        self._cpu0 = _own_cpu_s()
        self._t0 = time.perf_counter()
        return self

    def stop(self) -> dict[str, Any]:
        """End the window and return its figures."""
        wall = time.perf_counter() - self._t0
        cpu = _own_cpu_s() - self._cpu0
        stat1 = _proc_stat_ticks()
        out: dict[str, Any] = {
            "wall_s": round(wall, 6),
            "own_cpu_s": round(cpu, 6),
            "cpu_count": os.cpu_count(),
            "loadavg_before": self._load0,
            "loadavg_after": _loadavg(),
            "busy_share": None,
            "fl": None,
            "other_share": None,
            "steal_share": None,
            "fl_coarse": True,
        }
        if self._stat0 is None or stat1 is None:
            return out
        hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
        busy, steal, total = ((b - a) / hz for a, b in zip(self._stat0, stat1, strict=True))
        if total <= 0:
            return out
        fl = round(max(0.0, busy - cpu) / total, 4)
        out.update(busy_share=round(min(1.0, busy / total), 4), fl=fl, other_share=fl,
                   steal_share=round(steal / total, 4),
                   fl_coarse=stat1[2] - self._stat0[2] < FL_MIN_TICKS)
        return out
