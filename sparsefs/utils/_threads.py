"""The project's BLAS / OpenMP thread policy, in one place.

Most sparsefs fits are sequences of *small* dense operations (n x n Cholesky solves,
eigen-solves of a few hundred rows, short GEMMs inside an iteration). Threads barely speed
those up, and when the cores are shared with other work OpenBLAS's threaded kernels slow down
10-300-fold (measured on a loaded 2-core machine: a 500 x 500 ``eigh`` takes 0.04 s on one
thread and 7.6 s on two). scikit-learn's KMeans limits its iterations the same way.

The policy: a fit whose per-operation work is small runs on one BLAS thread
(:func:`blas_single_thread` / :func:`one_blas_thread`); large products keep every thread.
Callers state "small" in their own terms (a size or flop threshold, documented where used).
"""

import functools
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

from threadpoolctl import threadpool_limits

__all__ = ["blas_single_thread", "one_blas_thread"]

F = TypeVar("F", bound=Callable[..., Any])


def blas_single_thread(active: bool = True, *, user_api: str | None = None
                       ) -> AbstractContextManager:
    """A context that limits BLAS (and OpenMP, unless ``user_api="blas"``) to one thread.

    Parameters
    ----------
    active : bool, default=True
        ``False`` gives a no-op context, so callers can write
        ``with blas_single_thread(X.size <= threshold):``.
    user_api : {"blas", "openmp"} or None, default=None
        Which thread pools to limit (threadpoolctl's ``user_api``); ``None`` limits both.

    Returns
    -------
    contextlib.AbstractContextManager
    """
    if not active:
        return nullcontext()
    return threadpool_limits(limits=1, user_api=user_api)


def one_blas_thread(fit: F) -> F:
    """Decorate a method so that it runs on one BLAS thread, restoring the setting afterwards.

    For ``_fit`` methods whose cost is a sequence of small dense factorisations and
    eigen-solves (see the module docstring).
    """

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        with blas_single_thread(user_api="blas"):
            return fit(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
