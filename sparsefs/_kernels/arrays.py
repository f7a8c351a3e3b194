"""Array-type dispatch: the one place where sparsefs tells numpy, scipy.sparse and dask apart.

An operation whose implementation depends on the type of the array is a
:func:`functools.singledispatch` function here, with one implementation per array type (the
pattern of scanpy's ``get/_aggregated.py``): numpy (and anything array-like, the default),
scipy.sparse (matrices and arrays), and dask collections. The estimators' public methods
(``fit``, ``transform``, ``predict``, ``decision_function``) go through :func:`estimator_call`,
so a dask array reaches an estimator's dask implementation, or a clear error, from
:mod:`sparsefs.base` alone; kernels and the scanpy front end use the array operations.

Dask is never imported for this: its implementations are registered lazily, by package name
(:func:`register_lazy`), the first time a dask collection is dispatched. ``sparsefs._dask``
registers them, so importing sparsefs loads no dask, and the kernels depend on nothing above
them. A module that dispatches a caller's array (:mod:`sparsefs.base`, ``sparsefs.tl``)
imports ``sparsefs._dask`` for that registration; kernels only ever receive numpy or
scipy.sparse arrays.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "array_dispatch",
    "class_moments",
    "column_max_abs",
    "estimator_call",
    "is_lazy",
    "register_lazy",
    "stored_values",
    "to_dense",
]

#: top-level package name -> registration hooks not yet run (see :func:`register_lazy`)
_LAZY: dict[str, list[Callable[[], None]]] = {}
#: every package ever registered lazily (a type of another package never waits for the lock)
_LAZY_PACKAGES: set[str] = set()
_LAZY_LOCK = threading.RLock()


def register_lazy(package: str, hook: Callable[[], None]) -> None:
    """Run ``hook`` (which registers implementations) when an object of ``package`` is first
    dispatched by any :func:`array_dispatch` function.

    Parameters
    ----------
    package : str
        A top-level package name (``"dask"``).
    hook : callable
        Called once, without arguments.
    """
    with _LAZY_LOCK:
        _LAZY.setdefault(package, []).append(hook)
        _LAZY_PACKAGES.add(package)


@functools.cache
def _packages(cls: type) -> frozenset[str]:
    """The top-level packages of ``cls`` and its bases."""
    return frozenset(c.__module__.partition(".")[0] for c in cls.__mro__)


def _run_lazy(cls: type) -> None:
    """Run the pending hooks of the packages of ``cls`` (under the lock, so that another
    thread dispatching the same type waits for the registration instead of missing it)."""
    with _LAZY_LOCK:
        for name in _packages(cls) & _LAZY.keys():
            for hook in _LAZY[name]:
                hook()
            del _LAZY[name]


def array_dispatch(func: Callable) -> Callable:
    """:func:`functools.singledispatch` on the type of the first argument, whose default
    implementation (``func``) first runs the lazy registrations of that type's package
    (:func:`register_lazy`) and dispatches again.

    The result has ``register``, ``dispatch`` and ``registry`` as a singledispatch function.
    """
    dispatcher = functools.singledispatch(func)

    @functools.wraps(func)
    def call(X, *args, **kwargs):
        cls = type(X)
        impl = dispatcher.dispatch(cls)
        if impl is func and not _packages(cls).isdisjoint(_LAZY_PACKAGES):
            _run_lazy(cls)
            impl = dispatcher.dispatch(cls)
        return impl(X, *args, **kwargs)

    call.register = dispatcher.register  # type: ignore[attr-defined]
    call.dispatch = dispatcher.dispatch  # type: ignore[attr-defined]
    call.registry = dispatcher.registry  # type: ignore[attr-defined]
    return call


# --------------------------------------------------------------------------------------------
# Estimator methods
# --------------------------------------------------------------------------------------------


@array_dispatch
def estimator_call(X, estimator, method: str, *args: Any, **kwargs: Any) -> Any:
    """``estimator.<method>(X, *args, **kwargs)`` by the implementation for X's array type.

    In memory (numpy, scipy.sparse, and anything scikit-learn validates: lists, DataFrames):
    the estimator's ``_<method>_in_memory``. Dask collections: ``sparsefs._dask`` (its
    validation, then the estimator's ``_<method>_dask`` hook, or a ``TypeError`` that names
    the estimator and suggests ``X.compute()``).

    Parameters
    ----------
    X : {array-like, sparse matrix, dask array}
    estimator : sparsefs estimator
    method : {"fit", "transform", "predict", "decision_function"}
    *args, **kwargs
        Passed on (``y`` and the fit parameters for ``fit``).
    """
    return getattr(estimator, f"_{method}_in_memory")(X, *args, **kwargs)


@array_dispatch
def is_lazy(X) -> bool:
    """Whether X is a lazy (dask) collection: nothing in it is read until computed."""
    return False


# --------------------------------------------------------------------------------------------
# Array operations (numpy and scipy.sparse; kernels never receive a dask array)
# --------------------------------------------------------------------------------------------


@array_dispatch
def to_dense(X, dtype=None) -> np.ndarray:
    """X as a numpy array (a sparse matrix densified; a numpy array returned as is).

    Parameters
    ----------
    X : {array-like, sparse matrix}
    dtype : dtype, optional
        Cast to it (no copy when X already has it).
    """
    return np.asarray(X, dtype=dtype)


@to_dense.register(sp.spmatrix)
@to_dense.register(sp.sparray)
def _(X, dtype=None) -> np.ndarray:
    return np.asarray(X.toarray(), dtype=dtype)


@array_dispatch
def stored_values(X) -> np.ndarray:
    """The values X stores: every entry of a dense array, the explicit entries of a sparse
    one (what a finiteness check or a sign check must read)."""
    return np.asarray(X)


@stored_values.register(sp.spmatrix)
@stored_values.register(sp.sparray)
def _(X) -> np.ndarray:
    return X.data


@array_dispatch
def column_max_abs(X) -> np.ndarray:
    """The largest magnitude of each column (at least one row), shape (n_features,), in X's
    dtype."""
    return np.abs(np.asarray(X)).max(axis=0).ravel()


@column_max_abs.register(sp.spmatrix)
@column_max_abs.register(sp.sparray)
def _(X) -> np.ndarray:
    return to_dense(abs(X).max(axis=0)).ravel()  # a sparse or a dense row, by scipy version


@array_dispatch
def class_moments(X, y_idx: np.ndarray, n_classes: int, within: bool = True):
    """Per-class counts, means (and within-class scatter) of every column, one pass over X:
    :func:`sparsefs._kernels.stats.class_moments` in memory; block by block for a dask array
    (``sparsefs._dask._moments``, never loaded whole)."""
    from sparsefs._kernels.stats import class_moments as _class_moments

    return _class_moments(X, y_idx, n_classes)
