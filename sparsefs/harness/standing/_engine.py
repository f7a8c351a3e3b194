"""Running the cells of a standing benchmark: resumable, with a CPU-time budget per cell.

Each (data set, method) cell runs in a worker process (joblib's loky executor) with one BLAS
and one numba thread, so that the run times of all methods are measured alike; ``n_jobs``
workers run side by side. The budget counts the worker's **CPU seconds** (on a shared machine
wall time depends on the other users, single-threaded CPU time hardly does): a cell checks it
after every fold and stops when its projected time exceeds it, and a watchdog thread in the
worker ends a single step that runs past it (the worker exits; the other cells in flight are
started again). Either way the cell is stored as ``budget``: "not run in budget", as Bommert
et al. (2020) report methods that did not finish. A wall-clock limit of
:data:`WALL_FACTOR` times the budget catches what uses no CPU (a hang). ``n_jobs=0`` runs the
cells in this process, without a hard stop (tests, debugging); a cell over its budget is still
stored as ``budget``.
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import importlib.util
import logging
import os
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sparsefs.harness._results import LoadMonitor, environment_metadata, utc_now
from sparsefs.harness.standing._budget import Budget, OverBudget
from sparsefs.harness.standing._spec import StandingData, StandingMethod, StandingSpec
from sparsefs.harness.standing._store import ResultStore

__all__ = ["WALL_FACTOR", "CellOutcome", "compute_cell", "pending_cells", "run_cells"]

WALL_FACTOR = 20.0
"""A cell is killed after this many times its budget in wall time, CPU or not."""

logger = logging.getLogger("sparsefs.harness")


def _cell_function(benchmark: str) -> Callable[..., dict[str, Any]]:
    if benchmark == "microarray":
        from sparsefs.harness.standing._microarray import microarray_cell

        return microarray_cell
    if benchmark == "markers":
        from sparsefs.harness.standing._markers import markers_cell

        return markers_cell
    from sparsefs.harness.standing._clustering import clustering_cell

    return clustering_cell


def _single_threaded():
    """One BLAS thread and one numba thread: every method's time is measured alike."""
    from contextlib import ExitStack

    from threadpoolctl import threadpool_limits

    stack = ExitStack()
    stack.enter_context(threadpool_limits(limits=1))
    try:
        import numba

        previous = numba.get_num_threads()
        numba.set_num_threads(1)
        stack.callback(numba.set_num_threads, previous)
    except (ImportError, ValueError):  # pragma: no cover - numba is a dependency
        pass
    return stack


def compute_cell(spec: StandingSpec, dataset: StandingData, method: StandingMethod,
                 *, single_thread: bool = True) -> dict[str, Any]:
    """Compute one cell and return its record (``status``, ``message``, ``result``, ``meta``).

    A failing fit is an ``error`` record with the exception's last line (the run goes on); a
    peer whose package is not importable is ``missing``; a cell that stops early because it
    will not fit its budget (:class:`OverBudget`) is ``budget``; a data set that is not
    available raises :class:`~sparsefs.harness.MissingDataError` (the whole data set is
    skipped).
    """
    from sparsefs.harness._data import MissingDataError

    budget = Budget(float(method.budget_s or spec.budget_s))
    monitor = LoadMonitor().start()
    started = utc_now()
    status, message, result = "ok", "", None
    if method.package and importlib.util.find_spec(method.package) is None:
        status = "missing"
        message = f"{method.package} is not installed (pip install {method.package})"
    else:
        func = _cell_function(spec.benchmark)
        try:
            if single_thread:
                with _single_threaded():
                    result = func(spec, dataset, method, budget=budget)
            else:
                result = func(spec, dataset, method, budget=budget)
        except MissingDataError:
            raise
        except OverBudget as exc:
            status, message = "budget", str(exc)
        except Exception as exc:  # a method that fails is a result, not a crash
            status = "error"
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            message = last[:400]
            logger.warning("%s / %s failed: %s", dataset.label, method.label, message)
    load = monitor.stop()
    return {"status": status, "message": message, "result": result,
            "meta": {"started": started, "wall_s": load["wall_s"],
                     "cpu_s": round(budget.elapsed, 3), "load": load}}


def _budget_of(spec: StandingSpec, method: StandingMethod) -> float:
    return float(method.budget_s or spec.budget_s)


def _worker(spec: StandingSpec, dataset: StandingData, method: StandingMethod,
            marker: str) -> dict[str, Any]:
    """A cell in a worker, with a watchdog that ends the process when the cell's CPU time
    passes its budget (leaving ``marker`` behind so the parent knows why)."""
    from sparsefs.harness.standing._budget import cpu_seconds

    limit = _budget_of(spec, method) * 1.05 + 2.0
    start = cpu_seconds()
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(1.0):
            used = cpu_seconds() - start
            if used > limit:
                Path(marker).write_text(f"{used:.1f}", encoding="utf-8")
                os._exit(17)

    threading.Thread(target=watch, daemon=True).start()
    try:
        return compute_cell(spec, dataset, method)
    finally:
        stop.set()


@dataclass
class CellOutcome:
    """What happened to one cell in a run."""

    dataset: str
    method: str
    status: str
    wall_s: float
    computed: bool


def pending_cells(spec: StandingSpec, store: ResultStore, *, force: bool = False,
                  retry: Iterable[str] = ()) -> list[tuple[StandingData, StandingMethod]]:
    """The cells that must be computed: no stored record with the current hash (or every
    cell with ``force``; or stored with a status in ``retry``, e.g. ``("budget",)``)."""
    retry = set(retry)
    out = []
    for d in spec.datasets:
        for m in spec.methods:
            h = spec.cell_hash(d, m)
            rec = store.get(d.label, m.label)
            if force or rec is None or rec.get("hash") != h or rec.get("status") in retry:
                out.append((d, m))
    return out


def _finish(spec: StandingSpec, store: ResultStore, d: StandingData, m: StandingMethod,
            record: dict[str, Any], budget: float, env: dict[str, Any]) -> CellOutcome:
    wall = float(record["meta"]["wall_s"])
    cpu = float(record["meta"].get("cpu_s", wall))
    if record["status"] == "ok" and cpu > budget:
        record = {**record, "status": "budget", "result": None,
                  "message": f"took {cpu:.0f} CPU s, over the budget of {budget:.0f} s"}
    record = {**record, "hash": spec.cell_hash(d, m),
              "meta": {**record["meta"], "budget_s": budget, **env}}
    store.put(d.label, m.label, record)
    return CellOutcome(d.label, m.label, record["status"], wall, True)


def run_cells(spec: StandingSpec, store: ResultStore, *, n_jobs: int = 1, force: bool = False,
              retry: Iterable[str] = (), progress: bool | None = None,
              reuse: Iterable[ResultStore] = ()) -> list[CellOutcome]:
    """Compute every pending cell of ``spec`` and store it as soon as it is done.

    Parameters
    ----------
    spec : StandingSpec
    store : ResultStore
    n_jobs : int, default=1
        Worker processes (each single-threaded); ``0``: in this process (no hard stop at
        the budget).
    force : bool, default=False
        Recompute stored cells too.
    retry : iterable of str
        Recompute stored cells with these statuses (``"budget"``, ``"error"``).
    progress : bool or None
        A tqdm bar on stderr (``None``: when stderr is a terminal).
    reuse : iterable of ResultStore
        Other stores: a pending cell stored there with the same hash (same data set, method
        label and definition) is copied rather than recomputed.

    Returns
    -------
    list of CellOutcome
        The computed cells (stored ones are not listed).
    """
    from tqdm.auto import tqdm

    from sparsefs.harness._data import MissingDataError

    todo = pending_cells(spec, store, force=force, retry=retry)
    reuse = list(reuse)
    if reuse and not force:
        left = []
        for d, m in todo:
            h = spec.cell_hash(d, m)
            rec = next((r for r in (o.get(d.label, m.label) for o in reuse)
                        if r is not None and r.get("hash") == h
                        and r.get("status") not in set(retry)), None)
            if rec is None:
                left.append((d, m))
            else:
                store.put(d.label, m.label, rec)
        todo = left
    env = {"git": (environment_metadata().get("git") or {}), "finished": None}
    env["versions"] = environment_metadata()["versions"]
    show = progress if progress is not None else sys.stderr.isatty()
    bar = tqdm(total=len(todo), desc=f"standing {spec.benchmark}", unit="cell",
               disable=not show, file=sys.stderr)
    outcomes: list[CellOutcome] = []
    missing_data: set[str] = set()

    def done(d, m, record):
        budget = _budget_of(spec, m)
        env["finished"] = utc_now()
        out = _finish(spec, store, d, m, record, budget, dict(env))
        outcomes.append(out)
        bar.update(1)
        logger.info("%s / %s: %s (%.1f s)", d.label, m.label, out.status, out.wall_s)

    monitor = LoadMonitor().start()
    started = utc_now()
    try:
        if n_jobs == 0:
            for d, m in todo:
                if d.label in missing_data:
                    bar.update(1)
                    continue
                try:
                    rec = compute_cell(spec, d, m, single_thread=False)
                except MissingDataError as exc:
                    logger.warning("skipping data set %s: %s", d.label, exc)
                    missing_data.add(d.label)
                    bar.update(1)
                    continue
                done(d, m, rec)
        else:
            _run_pool(spec, todo, n_jobs, done, missing_data, bar)
    finally:
        bar.close()
        if outcomes:
            load = monitor.stop()
            counts: dict[str, int] = {}
            for o in outcomes:
                counts[o.status] = counts.get(o.status, 0) + 1
            store.log_run({"started": started, "finished": utc_now(),
                           "wall_s": load["wall_s"], "n_jobs": n_jobs,
                           "cells": counts, "quick": spec.is_quick,
                           "loadavg_before": load["loadavg_before"],
                           "loadavg_after": load["loadavg_after"],
                           "busy_share": load["busy_share"], "cpu_count": load["cpu_count"]})
    return outcomes


def _stopped(message: str, wall: float, cpu: float | None = None) -> dict[str, Any]:
    return {"status": "budget", "result": None, "message": message,
            "meta": {"started": utc_now(), "wall_s": round(wall, 3),
                     "cpu_s": round(cpu if cpu is not None else wall, 3), "load": {}}}


def _run_pool(spec, todo, n_jobs, done, missing_data, bar) -> None:
    from joblib.externals.loky import get_reusable_executor

    from sparsefs.harness._data import MissingDataError

    queue = list(todo)
    running: dict[cf.Future, tuple[StandingData, StandingMethod, float, Path]] = {}
    markers = Path(tempfile.mkdtemp(prefix="sparsefs-standing-"))
    executor = get_reusable_executor(max_workers=n_jobs, timeout=600)
    try:
        while queue or running:
            while queue and len(running) < n_jobs:
                d, m = queue.pop(0)
                if d.label in missing_data:
                    bar.update(1)
                    continue
                key = hashlib.sha1(f"{d.label}\0{m.label}".encode()).hexdigest()[:16]
                marker = markers / key
                marker.unlink(missing_ok=True)
                fut = executor.submit(_worker, spec, d, m, str(marker))
                running[fut] = (d, m, time.perf_counter(), marker)
            if not running:
                continue
            finished, _ = cf.wait(list(running), timeout=1.0, return_when=cf.FIRST_COMPLETED)
            broken = False
            for fut in finished:
                d, m, t0, marker = running.pop(fut)
                try:
                    rec = fut.result()
                except MissingDataError as exc:
                    logger.warning("skipping data set %s: %s", d.label, exc)
                    missing_data.add(d.label)
                    bar.update(1)
                    continue
                except Exception as exc:  # the worker died: the watchdog, or a crash
                    broken = True
                    if marker.is_file():
                        cpu = float(marker.read_text(encoding="utf-8"))
                        rec = _stopped(f"stopped after {cpu:.0f} CPU s (budget "
                                       f"{_budget_of(spec, m):.0f} s)",
                                       time.perf_counter() - t0, cpu)
                    elif any(v[3].is_file() for v in running.values()):
                        queue.insert(0, (d, m))  # an innocent victim of another's stop
                        continue
                    else:
                        rec = {"status": "error", "result": None,
                               "message": f"worker crashed: {exc!r}"[:400],
                               "meta": {"started": utc_now(), "wall_s": 0.0, "load": {}}}
                done(d, m, rec)
            now = time.perf_counter()
            over = [(f, v) for f, v in running.items()
                    if now - v[2] > WALL_FACTOR * _budget_of(spec, v[1])]
            if over or broken:
                if over:
                    executor.shutdown(wait=False, kill_workers=True)
                for fut, (d, m, t0, _marker) in over:
                    running.pop(fut)
                    done(d, m, _stopped(f"stopped after {now - t0:.0f} s of wall time "
                                        f"({WALL_FACTOR:g} x the budget)", now - t0))
                if over:  # the others were killed with the workers: start them again
                    queue = [(d, m) for (d, m, _t, _k) in running.values()] + queue
                    running.clear()
                executor = get_reusable_executor(max_workers=n_jobs, timeout=600)
    except BaseException:  # interrupted (Ctrl-C, SIGTERM): stop the cells in flight too
        executor.shutdown(wait=False, kill_workers=True)
        raise
    else:
        executor.shutdown(wait=True)
    finally:
        for p in markers.glob("*"):
            p.unlink(missing_ok=True)
        markers.rmdir()
