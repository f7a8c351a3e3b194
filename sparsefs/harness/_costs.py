"""What a run will cost: prior task costs from the registry, and a progress bar whose
estimate of the remaining time learns each method's cost as its tasks finish.

The tasks of a comparison differ in cost by orders of magnitude (a Fisher score in
milliseconds, tuned sparse KOS in minutes), so a bar that counts tasks predicts the end badly
(4x off over all 28 methods on the embedded default). Here every task weighs its expected
seconds: before a method has finished a task, the registry's measured cost of one fit
(:attr:`~sparsefs.utils.MethodInfo.fit_seconds`, on the embedded default) scaled to the data
set's size, plus the downstream evaluation over the k grid; once it has, the mean of its own
measured tasks on that data set. The remaining time is the remaining expected work times the
wall time spent per unit of work done so far (which accounts for ``n_jobs`` and the machine's
load).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["REFERENCE_SIZE", "TaskProgress", "task_costs"]

#: n_samples * n_features of the registry's cost measurements: one training fold (4/5 of the
#: rows) of the embedded default data, 178 x 500.
REFERENCE_SIZE = 142 * 500
#: seconds of the downstream evaluation of one k with one estimator (linear SVM, naive Bayes,
#: 5-NN, tree: 2.4 ms CPU on average on a fold of the embedded default,
#: benchmarks/bench_method_costs.py)
EVAL_SECONDS = 0.0025
#: the cost of a method whose registry entry has no measurement
UNKNOWN_FIT_SECONDS = 1.0


def task_costs(spec: Any, datasets: Sequence[Any]) -> dict[tuple[int, int], float]:
    """Expected seconds of one task (one fold) of every (data set, method) of ``spec``.

    Parameters
    ----------
    spec : ExperimentSpec
    datasets : sequence of Dataset
        The loaded data sets, in ``spec.datasets`` order.

    Returns
    -------
    dict
        ``(i_data, i_method) -> seconds``.
    """
    from sparsefs.utils._registry import get_method

    cv = spec.cv
    train_share = 1.0 if cv.scheme == "none" else (
        cv.train_size if cv.scheme == "split" else 1.0 - 1.0 / cv.n_splits)
    out = {}
    for i, ds in enumerate(datasets):
        n, p = ds.X.shape
        size = max(1.0, n * train_share * p)
        ks = [k for k in spec.k if k <= p]
        for j, m in enumerate(spec.methods):
            mode = m.resolved_mode(spec.protocol)
            fit = 0.0
            if mode != "all":
                info = None
                if m.stem:
                    try:
                        info = get_method(m.stem)
                    except ValueError:
                        info = None
                base = (info.fit_seconds if info is not None and info.fit_seconds is not None
                        else UNKNOWN_FIT_SECONDS)
                fit = base * size / REFERENCE_SIZE
                if mode == "refit":
                    fit *= max(1, len(ks))
            n_k = 1 if mode in ("own", "all") else max(1, len(ks))
            runs = spec.n_runs if spec.protocol == "unsupervised" else 1
            evaluation = EVAL_SECONDS * n_k * len(spec.estimators) * runs * (n / 178)
            out[(i, j)] = fit + evaluation
    return out


class TaskProgress:
    """A tqdm bar over the tasks of a run, its remaining time weighted by each task's cost.

    Parameters
    ----------
    keys : sequence of (i_data, i_method)
        One entry per task, in the order they were submitted.
    prior : mapping, optional
        ``(i_data, i_method) -> expected seconds`` (:func:`task_costs`); equal weights if None.
    enabled : bool
    desc : str
    """

    def __init__(self, keys: Sequence[tuple[int, int]], prior: Mapping | None, enabled: bool,
                 desc: str):
        from tqdm.auto import tqdm

        self.keys = list(keys)
        self.prior = {k: float(prior.get(k, 1.0)) if prior else 1.0 for k in self.keys}
        self.remaining: dict[tuple[int, int], int] = {}
        for k in self.keys:
            self.remaining[k] = self.remaining.get(k, 0) + 1
        self.seen: dict[tuple[int, int], list[float]] = {}
        self.start = time.perf_counter()
        self.n_done = 0
        self.work_done = 0.0
        self.bar = tqdm(total=len(self.keys), desc=desc, unit="task", disable=not enabled,
                        file=sys.stderr, mininterval=0.5,
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} "
                        "tasks [{elapsed}{postfix}]")

    def expected(self, key: tuple[int, int]) -> float:
        """The expected seconds of one more task of ``key``: its measured mean once known,
        else its prior scaled by how the priors compared with the measurements so far."""
        if self.seen.get(key):
            return sum(self.seen[key]) / len(self.seen[key])
        measured = [(sum(v) / len(v), self.prior[k]) for k, v in self.seen.items() if v]
        if measured:
            ratio = sum(m for m, _ in measured) / max(sum(p for _, p in measured), 1e-12)
            return self.prior[key] * ratio
        return self.prior[key]

    def eta(self) -> float | None:
        """Seconds left: the expected remaining work times the wall time per unit of work
        done so far; None before the first task ends."""
        if self.n_done == 0 or self.work_done <= 0:
            return None
        left = sum(n * self.expected(k) for k, n in self.remaining.items() if n)
        wall = time.perf_counter() - self.start
        return left * wall / self.work_done

    def done(self, key: tuple[int, int], seconds: float) -> None:
        """Record one finished task of ``key`` that took ``seconds`` (measured in the task)."""
        self.remaining[key] = max(0, self.remaining.get(key, 0) - 1)
        self.seen.setdefault(key, []).append(max(float(seconds), 1e-6))
        self.n_done += 1
        self.work_done += max(float(seconds), 1e-6)
        eta = self.eta()
        if eta is not None and self.n_done < len(self.keys):
            self.bar.set_postfix_str(f"<{_clock(eta)} left", refresh=False)
        else:
            self.bar.set_postfix_str("", refresh=False)
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()


def _clock(seconds: float) -> str:
    seconds = round(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"
