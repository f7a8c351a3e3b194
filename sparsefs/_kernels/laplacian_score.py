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

from sparsefs._kernels.columns import column_power_of_two_scaled, constant_columns
from sparsefs._kernels.graphs import degrees, graph_smoothness, weighted_centered_ss

__all__ = ["laplacian_score"]


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
