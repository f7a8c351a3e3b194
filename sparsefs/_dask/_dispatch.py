"""The dask implementations of the array-type dispatch (:mod:`sparsefs._kernels.arrays`).

Imported by ``sparsefs._dask``'s lazy hook the first time a dask collection is dispatched;
registered on :class:`dask.base.DaskMethodsMixin`, the base of every dask collection (array,
dataframe, bag, delayed), so that a dataframe or a delayed object reaches the dask path and its
clear error rather than being computed whole by scikit-learn's validation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from dask.base import DaskMethodsMixin

from sparsefs._dask import _core
from sparsefs._kernels import arrays

__all__: list[str] = []


@arrays.estimator_call.register(DaskMethodsMixin)
def _estimator_call(X, estimator, method: str, *args: Any, **kwargs: Any) -> Any:
    if method == "fit":
        return _core.fit_dask(estimator, X, *args, **kwargs)
    if method == "transform":
        return _core.transform_dask(estimator, X)
    return _core.predict_dask(estimator, X, method)


@arrays.is_lazy.register(DaskMethodsMixin)
def _is_lazy(X) -> bool:
    return True


@arrays.class_moments.register(DaskMethodsMixin)
def _class_moments(X, y_idx: np.ndarray, n_classes: int, within: bool = True):
    from sparsefs._dask._moments import class_moments

    return class_moments(X, y_idx, n_classes, within=within)
