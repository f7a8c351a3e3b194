"""The one place where sparsefs chooses thread counts: BLAS (numpy's and scipy's OpenBLAS, or
any other BLAS threadpoolctl finds), OpenMP, and sparsefs's own thread pool.

Why a policy at all. OpenBLAS and OpenMP worker threads busy-wait between operations. A fit
that alternates small operations between two BLAS libraries (numpy's and scipy's wheels each
bring an OpenBLAS with a pool of one thread per CPU) keeps the idle pool spinning while the
other works; on a machine where another process is busy, every threaded operation waits for a
descheduled worker. Measured on the project's 2-core machine (issue #33): UFCM at 90 x 200
took 21.5 s with one other busy process against 1.7-1.9 s with one BLAS thread; a 500 x 500
``eigh`` 0.04 s on one thread and 7.6 s on two. Threads only pay when one operation is large:
then a worker that is not scheduled for a few milliseconds costs little.

The policy (:func:`plan`), chosen once per fit from the sizes the estimator states:

* **BLAS and OpenMP** get every CPU this process may use when one typical BLAS operation of
  the fit is at least :data:`MIN_BLAS_FLOPS` (1e9 flops: ~10 ms on one core, so a worker
  delayed by a scheduler tick costs little), else one thread. The limit applies to every BLAS
  library at once (numpy's and scipy's), so two pools never alternate with idle spinners.
* **sparsefs's own pool** (:func:`run_blocks`: per-column-block kernels that release the GIL)
  gets every CPU when a pass touches at least :data:`MIN_POOL_ELEMENTS` values. It never
  busy-waits: the calling thread works through the same queue of blocks as the workers, so a
  worker that is not scheduled delays at most the block it took and, if it never starts, the
  caller does every block itself (under load never much slower than one thread).
* **numba**'s own threading layer is not used: no kernel is compiled with ``parallel=True``
  (parallel loops run on :func:`run_blocks`), which also keeps first-use compilation short.

:func:`applied` sets the plan for the duration of a fit (nested fits, e.g. inside stability
selection, take the smaller counts). The estimators' ``fit`` applies it
(:class:`sparsefs.base._SparseEstimatorBase`); kernels read the current plan through
:func:`pool_threads`.

Every ``n_jobs`` parameter (estimators, data generators) is read by :func:`resolve_n_jobs`,
one rule for all of them (docs/contract.md, "n_jobs").
"""

from __future__ import annotations

import contextvars
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = [
    "MIN_BLAS_FLOPS",
    "MIN_POOL_ELEMENTS",
    "ThreadPlan",
    "applied",
    "available_cpus",
    "current_plan",
    "plan",
    "pool_ceiling",
    "pool_threads",
    "resolve_n_jobs",
    "run_blocks",
    "run_tasks",
]

#: One BLAS operation must be this large (flops) for BLAS/OpenMP threads to pay, also on a
#: machine shared with other busy processes.
MIN_BLAS_FLOPS = 1e9
#: A pass of sparsefs's own pool must touch this many values (8 MiB of float64) for threads
#: to pay (starting the blocks costs ~0.1 ms; a pass of 2**20 values ~1 ms on one core).
MIN_POOL_ELEMENTS = 1 << 20


def available_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def resolve_n_jobs(n_jobs: int | None, *, n_tasks: int | None = None,
                   within_fit: bool = False) -> int:
    """The number of threads (or processes) an ``n_jobs`` parameter asks for: the one rule.

    * ``None``: scikit-learn's convention, ``joblib.effective_n_jobs(None)`` - 1, unless the
      call runs inside ``joblib.parallel_config(n_jobs=k)`` (then k, resolved by the same
      rule) - for ``n_jobs`` that runs independent tasks (cross-validation paths, resamples,
      permutations, donors). With ``within_fit=True`` (an ``n_jobs`` that caps sparsefs's own
      pool inside one fit, like scikit-learn's OpenMP threads, which use every CPU without an
      ``n_jobs``): every CPU this process may use, the pool's ceiling in every estimator that
      has no ``n_jobs``;
    * ``k >= 1``: k;
    * ``k <= -1``: :func:`available_cpus` ``+ 1 + k``, at least 1 (-1: every CPU);
    * ``0``: ValueError.

    The result is at most ``n_tasks`` when given (never more threads than tasks).

    Parameters
    ----------
    n_jobs : int or None
    n_tasks : int, optional
    within_fit : bool, default=False

    Returns
    -------
    int
        At least 1.
    """
    if n_jobs is None:
        if within_fit:
            n = available_cpus()
        else:
            from joblib import effective_n_jobs

            k = int(effective_n_jobs(None))  # 1 outside a joblib context
            n = k if k > 0 else max(1, available_cpus() + 1 + k)
    elif int(n_jobs) == 0:
        raise ValueError("n_jobs=0 is not allowed; pass None, -1 (all CPUs) or a count >= 1.")
    else:
        k = int(n_jobs)
        n = k if k > 0 else max(1, available_cpus() + 1 + k)
    if n_tasks is not None:
        n = min(n, max(1, int(n_tasks)))
    return n


def pool_ceiling() -> int:
    """The most threads sparsefs's own pool may use now: the plan's ceiling inside a fit
    (:func:`applied`), every available CPU outside one."""
    p = _CURRENT.get()
    return available_cpus() if p is None else p.pool


@dataclass(frozen=True)
class ThreadPlan:
    """Thread counts for one fit.

    Attributes
    ----------
    blas : int
        Threads of every BLAS library and of OpenMP.
    pool : int
        The most threads sparsefs's own pool may use (each pass still asks
        :func:`pool_threads` for its own size).
    """

    blas: int
    pool: int


def plan(blas_flops: float = 0.0, *, pool: int | None = None) -> ThreadPlan:
    """The thread plan of a fit whose typical BLAS operation costs ``blas_flops``.

    Parameters
    ----------
    blas_flops : float, default=0.0
        Flops of one typical BLAS operation of the fit (e.g. ``2 m k n`` for an m x k by
        k x n product). Below :data:`MIN_BLAS_FLOPS` BLAS and OpenMP run on one thread.
    pool : int or None, default=None
        The largest thread count of sparsefs's own pool (a user's ``n_jobs``); ``None``:
        every available CPU.

    Returns
    -------
    ThreadPlan
    """
    cpus = available_cpus()
    blas = cpus if blas_flops >= MIN_BLAS_FLOPS else 1
    return ThreadPlan(blas=blas, pool=cpus if pool is None else max(1, min(int(pool), cpus)))


_CURRENT: contextvars.ContextVar[ThreadPlan | None] = contextvars.ContextVar(
    "sparsefs_thread_plan", default=None
)
_CONTROLLER: tuple[int, object] | None = None
_CONTROLLER_LOCK = threading.Lock()


def _controller():
    """threadpoolctl's view of the loaded BLAS / OpenMP libraries, rebuilt only when the
    process or its set of imported modules changed (an import is how a new BLAS or OpenMP
    library gets loaded, e.g. scikit-learn's libgomp; building it scans the loaded libraries:
    ~0.7 ms; a limit on the cached one ~10 us)."""
    global _CONTROLLER
    from threadpoolctl import ThreadpoolController

    key = (os.getpid(), len(sys.modules))
    with _CONTROLLER_LOCK:
        if _CONTROLLER is None or _CONTROLLER[0] != key:
            _CONTROLLER = (key, ThreadpoolController())
        return _CONTROLLER[1]


def current_plan() -> ThreadPlan | None:
    """The plan in force (inside :func:`applied`), else None."""
    return _CURRENT.get()


@contextmanager
def applied(p: ThreadPlan) -> Iterator[ThreadPlan]:
    """Apply the plan ``p`` (BLAS and OpenMP limits, the own pool's ceiling) until exit.

    Inside another plan (a fit inside a fit) each count is the smaller of the two. The BLAS
    and OpenMP settings are restored on exit.
    """
    outer = _CURRENT.get()
    if outer is not None:
        p = ThreadPlan(blas=min(p.blas, outer.blas), pool=min(p.pool, outer.pool))
    ctl = _controller()
    libs = [lib for lib in ctl.lib_controllers if lib.num_threads != p.blas]
    if libs:
        limiter = ctl.limit(limits=p.blas)
    token = _CURRENT.set(p)
    try:
        yield p
    finally:
        _CURRENT.reset(token)
        if libs:
            limiter.restore_original_limits()


def pool_threads(n_elements: float, n_blocks: int | None = None) -> int:
    """Threads for one pass of the own pool over ``n_elements`` values in ``n_blocks`` blocks:
    1 below :data:`MIN_POOL_ELEMENTS`, else the plan's ceiling (every CPU outside a plan),
    never more than the blocks."""
    if n_elements < MIN_POOL_ELEMENTS:
        return 1
    p = _CURRENT.get()
    n = available_cpus() if p is None else p.pool
    if n_blocks is not None:
        n = min(n, max(1, int(n_blocks)))
    return max(1, n)


_POOLS: dict[tuple[int, int], ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def run_blocks(fn: Callable[..., object], blocks: Sequence[tuple], n_threads: int) -> None:
    """``fn(*block)`` for every block, on the calling thread and ``n_threads - 1`` workers.

    The blocks are handed out one at a time from a shared queue, and the calling thread
    works too (it would otherwise only wait): on a shared machine, a worker that is not
    scheduled holds up at most the block it took, and if it never starts, the caller does
    every block itself (never much slower than one thread; with a fixed split, one
    descheduled thread stalled the whole fit). Starting a pool costs ~0.15 ms, so pools are
    kept (one per size, keyed by process id: a forked child makes its own). An exception in
    any block is raised once the others have stopped. ``fn`` should release the GIL (a
    ``nogil`` compiled kernel, or numpy on large arrays).
    """
    if n_threads <= 1 or len(blocks) <= 1:
        for block in blocks:
            fn(*block)
        return
    n_workers = min(n_threads, len(blocks)) - 1
    key = (os.getpid(), n_workers)
    with _POOLS_LOCK:
        pool = _POOLS.get(key)
        if pool is None:
            pool = _POOLS[key] = ThreadPoolExecutor(n_workers, thread_name_prefix="sparsefs")
    queue = iter(blocks)
    lock = threading.Lock()
    failed = []

    def work() -> None:
        while not failed:
            with lock:
                block = next(queue, None)
            if block is None:
                return
            try:
                fn(*block)
            except BaseException:
                failed.append(True)
                raise

    futures = [pool.submit(work) for _ in range(n_workers)]
    try:
        work()
    finally:
        for future in futures:
            future.exception()  # wait for every worker, even when the caller failed
    for future in futures:
        future.result()  # re-raise a worker's exception


def run_tasks(fn: Callable[[int], object], n_tasks: int, n_threads: int) -> None:
    """``fn(0), ..., fn(n_tasks - 1)`` by :func:`run_blocks`."""
    run_blocks(fn, [(t,) for t in range(n_tasks)], n_threads)
