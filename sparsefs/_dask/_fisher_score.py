"""Fisher scores of a dask array: one pass of class moments on any chunking.

Dense or scipy.sparse blocks (the sparse ones read through their stored values only).
"""

from __future__ import annotations

import numpy as np

from sparsefs._dask._moments import class_moments
from sparsefs._kernels import fisher_score as _kernel
from sparsefs._kernels.arrays import to_dense
from sparsefs._kernels.columns import SAFE_RANGE

__all__ = ["dask_fisher_ratios"]


def dask_fisher_ratios(X, y_idx: np.ndarray, n_classes: int) -> np.ndarray:
    """Fisher scores SSB / SSW of every column of a dask array, as numpy.

    The class counts, sums and within-class scatter come from one pass
    (:func:`sparsefs._dask._moments.class_moments`, with the column magnitudes); the between
    scatter and the edge cases follow :func:`sparsefs._kernels.fisher_score.fisher_ratios`:
    columns whose scatter overflows, or underflows to 0 (largest magnitude below 1e-100), are
    the few recomputed by the in-memory kernel on those columns only (``X[:, cols]``).

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
    y_idx : ndarray of shape (n_samples,)
    n_classes : int

    Returns
    -------
    ndarray of shape (n_features,)
    """
    with np.errstate(over="ignore", invalid="ignore"):
        mom = class_moments(X, y_idx, n_classes, within=True, extremes="absmax",
                            estimator_name="FisherScore")
        counts, means = mom.counts, mom.means
        within = mom.within
        grand = counts @ means / counts.sum()
        between = counts @ (means - grand) ** 2
    overflow = ~(np.isfinite(between) & np.isfinite(within))
    amax = mom.absmax
    redo = overflow | ((within == 0) & (amax > 0) & (amax < SAFE_RANGE[0]))
    scores = _kernel.fisher_from_scatter(np.where(overflow, 0.0, between),
                                         np.where(overflow, 0.0, within))
    cols = np.flatnonzero(redo)
    if cols.size:  # few columns (huge or tiny values): the in-memory kernel on those only
        sub = X[:, cols].compute()
        sub = to_dense(sub, np.float64)
        scores[cols] = _kernel.fisher_ratios(sub, y_idx, n_classes)[0]
    return scores
