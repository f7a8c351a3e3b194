"""Thread-limit helpers for estimator code, on top of the one thread policy of sparsefs.

The policy itself (which library gets how many threads, and why) lives in
:mod:`sparsefs._kernels.threads` and is applied by every estimator's ``fit``. These helpers
let a part of a fit state that its operations are small (one BLAS/OpenMP thread), inside the
plan in force (a nested plan never raises a count).
"""

import functools
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

from sparsefs._kernels import threads as _threads

__all__ = ["blas_single_thread", "one_blas_thread"]

F = TypeVar("F", bound=Callable[..., Any])


def blas_single_thread(active: bool = True) -> AbstractContextManager:
    """A context in which BLAS and OpenMP run on one thread (the own pool keeps its ceiling).

    Parameters
    ----------
    active : bool, default=True
        ``False`` gives a no-op context, so callers can write
        ``with blas_single_thread(flops < threshold):``.

    Returns
    -------
    contextlib.AbstractContextManager
    """
    if not active:
        return nullcontext()
    return _threads.applied(_threads.ThreadPlan(blas=1, pool=_threads.pool_ceiling()))


def one_blas_thread(fit: F) -> F:
    """Decorate a method so that it runs with one BLAS/OpenMP thread, restoring the setting
    afterwards (for ``_fit`` methods whose cost is a sequence of small dense factorisations
    and eigen-solves)."""

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        with blas_single_thread():
            return fit(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
