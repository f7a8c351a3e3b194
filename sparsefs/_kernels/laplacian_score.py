r"""Laplacian score (He, Cai & Niyogi, NIPS 2005).

With a sample affinity graph W (:mod:`sparsefs._kernels.graphs`),
:math:`D = \mathrm{diag}(W\mathbf 1)` and :math:`L = D - W`, feature :math:`f_r` (a column of X)
is first centred by its degree-weighted mean,

.. math::

    \tilde f_r = f_r - \frac{f_r^\top D \mathbf 1}{\mathbf 1^\top D \mathbf 1}\mathbf 1,
    \qquad
    L_r = \frac{\tilde f_r^\top L \tilde f_r}{\tilde f_r^\top D \tilde f_r},

and smaller is better (a feature that varies little along the graph's edges relative to its
total, degree-weighted variance). :math:`L_r \in [0, 2]`: it is a Rayleigh quotient of the
generalised problem :math:`L v = \lambda D v`. Since :math:`L\mathbf 1 = 0`, the numerator is
:math:`f_r^\top L f_r = \frac12\sum_{ij} W_{ij}(f_{ir} - f_{jr})^2`, computed over the edges.

A constant feature has :math:`0/0`; it is given :math:`L_r = +\infty` (worst).
"""

import numpy as np
import scipy.sparse as sp

from sparsefs._kernels.graphs import degrees, graph_smoothness, weighted_centered_ss

__all__ = ["column_power_of_two_scaled", "constant_columns", "laplacian_score"]


def column_power_of_two_scaled(X):
    """A copy of X with each column divided by a power of two near its largest magnitude.

    Exact (no rounding), and it keeps squares of values near ``1e300`` / ``1e-300`` finite and
    non-zero; used by statistics that are invariant to scaling a feature.
    """
    amax = abs(X).max(axis=0)
    amax = amax.toarray().ravel() if sp.issparse(amax) else np.asarray(amax, float).ravel()
    with np.errstate(divide="ignore"):
        scale = np.where(amax > 0, 2.0 ** np.floor(np.log2(np.where(amax > 0, amax, 1.0))), 1.0)
    if sp.issparse(X):
        return sp.csr_array(X @ sp.diags_array(1.0 / scale))
    return X / scale


def constant_columns(X) -> np.ndarray:
    """Boolean mask of the columns whose values are all equal (exactly)."""
    if sp.issparse(X):
        Xc = sp.csc_array(X)
        n = Xc.shape[0]
        nnz = np.diff(Xc.indptr)
        mx = Xc.max(axis=0)
        mn = Xc.min(axis=0)
        mx = mx.toarray().ravel() if sp.issparse(mx) else np.asarray(mx).ravel()
        mn = mn.toarray().ravel() if sp.issparse(mn) else np.asarray(mn).ravel()
        # max/min include the implicit zeros only when a column has fewer than n stored values
        full = nnz == n
        return np.where(full, mx == mn, (mx == 0) & (mn == 0))
    X = np.asarray(X)
    return np.all(X[:1] == X, axis=0)


def laplacian_score(X, W) -> np.ndarray:
    r"""Laplacian scores of the columns of X on the graph W (lower is better).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    W : scipy.sparse array or ndarray of shape (n_samples, n_samples)
        Symmetric non-negative affinity with at least one positive weight.

    Returns
    -------
    scores : ndarray of shape (n_features,)
        :math:`L_r \in [0, 2]`; ``+inf`` for constant features.
    """
    X = column_power_of_two_scaled(X)
    d = degrees(W)
    num = graph_smoothness(X, W)
    den, _ = weighted_centered_ss(X, d)
    const = constant_columns(X)
    scores = np.full(X.shape[1], np.inf)
    ok = ~const & (den > 0)
    scores[ok] = num[ok] / den[ok]
    # a non-constant feature that lives only on isolated samples has den = 0: no information
    return scores
