r"""Column variances, dense or sparse, without overflow.

.. math:: s_j^2 = \frac1n \sum_i (x_{ij} - \bar x_j)^2 .

The matrix is first divided by one common factor, its largest magnitude :math:`c` (a power of
two, so the division is exact), so values of 1e300 or 1e-300 neither overflow nor underflow;
the variances of :math:`X/c` are returned with :math:`c` (the variances of X are
:math:`c^2` times them, which may overflow: the ranking uses the scaled ones). Dense X is read in
column blocks (centred: no cancellation); sparse X (CSR/CSC) in one compiled pass over its
stored values (:math:`\sum x`, :math:`\sum x^2`, the moment identity, never densified).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from sparsefs._kernels.columns import power_of_two_scale
from sparsefs._kernels.stats import sparse_class_sums

__all__ = ["scaled_variances"]


def _check_finite(values) -> None:
    if not np.all(np.isfinite(values)):
        if np.isnan(values).any():
            raise ValueError("Input X contains NaN.")
        raise ValueError("Input X contains infinity or a value too large for dtype('float64').")


def scaled_variances(X, block_elements: int = 1 << 22) -> tuple[np.ndarray, float]:
    """Variances of the columns of ``X / c`` and the common factor ``c`` (a power of two).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    block_elements : int
        Dense X: entries per column block.

    Returns
    -------
    variances : ndarray of shape (n_features,)
        Population variances (divisor n) of ``X / c``; exactly 0 for a constant column.
    c : float
        ``2**k`` near the largest magnitude of X (1 for an all-zero X).

    Raises
    ------
    ValueError
        NaN or infinite values (scikit-learn's messages).
    """
    n, p = X.shape
    if sp.issparse(X):
        data = X.data if X.format in ("csr", "csc") else sp.csr_array(X).data
        _check_finite(data)
        amax = float(np.abs(data).max(initial=0.0))
    else:
        X = np.asarray(X)
        amax = float(np.abs(X).max(initial=0.0)) if X.size else 0.0
        if not np.isfinite(amax):
            _check_finite(X)
    c = power_of_two_scale(amax=amax, above=True)
    if sp.issparse(X):
        div = c
        if not 2.0**-400 < c < 2.0**400:  # squares would overflow or underflow: scale a copy
            X = X / c  # of the stored values only
            div = 1.0
        sums, sq = sparse_class_sums(X, np.zeros(n, dtype=np.intp), 1)
        mean = sums[0] / div / n
        sq = sq / (div * div)
        var = sq / n - mean * mean
        # the identity cancels; a column constant on its stored values (or all zero) is exact
        var[var <= 1e-12 * np.maximum(sq / n, 1e-300)] = 0.0
        return np.maximum(var, 0.0), c
    var = np.empty(p)
    step = max(1, block_elements // max(n, 1))
    for j0 in range(0, p, step):
        B = np.asarray(X[:, j0:j0 + step], dtype=np.float64) / c
        B -= B.mean(axis=0)
        var[j0:j0 + step] = np.einsum("ij,ij->j", B, B) / max(n, 1)
    return var, c
