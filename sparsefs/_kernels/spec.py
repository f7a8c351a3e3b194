r"""SPEC, spectral feature selection (Zhao & Liu, ICML 2007).

With a sample affinity W, :math:`D = \mathrm{diag}(W\mathbf 1)`, the normalised Laplacian
:math:`\mathcal L = D^{-1/2}(D - W)D^{-1/2} = \sum_j \lambda_j \xi_j\xi_j^\top`
(:math:`0 = \lambda_1 \le \lambda_2 \le \dots`,
:math:`\xi_1 = D^{1/2}\mathbf 1/\|D^{1/2}\mathbf 1\|`)
and the normalised feature :math:`\hat f = D^{1/2} f / \|D^{1/2} f\|` with
:math:`\alpha_j = \xi_j^\top \hat f`, the three ranking functions of the paper (spectral
function :math:`\gamma(\lambda) = \lambda`) are

.. math::

    \varphi_1(f) = \hat f^\top \mathcal L \hat f = \sum_{j} \alpha_j^2 \lambda_j
                 = \frac{f^\top L f}{f^\top D f},
    \qquad
    \varphi_2(f) = \frac{\hat f^\top \mathcal L \hat f}{1 - (\hat f^\top \xi_1)^2}
                 = \frac{f^\top L f}{\tilde f^\top D \tilde f},
    \qquad
    \varphi_3(f) = \sum_{j=2}^{k} (2 - \lambda_j)\,\alpha_j^2,

:math:`\varphi_1, \varphi_2` lower is better, :math:`\varphi_3` higher is better
(:math:`\tilde f` is f centred by its degree-weighted mean, so :math:`\varphi_2` is the
Laplacian score of the same graph). :math:`\varphi_1` and :math:`\varphi_2` need no
eigen-decomposition; :math:`\varphi_3` needs :math:`\xi_2..\xi_k`
(:func:`sparsefs._kernels.graphs.spectral_embedding`).

Constant features (for which :math:`\hat f = \xi_1`, so :math:`\varphi_1 = 0` would rank them
best) get the worst value: ``+inf`` for :math:`\varphi_1, \varphi_2`, ``0`` for
:math:`\varphi_3`.
"""

import numpy as np

from sparsefs._kernels.columns import column_power_of_two_scaled, constant_columns
from sparsefs._kernels.graphs import degrees, graph_smoothness, spectral_embedding
from sparsefs._kernels.graphs import weighted_centered_ss as _wss

__all__ = ["spec_scores"]

VARIANTS = ("phi1", "phi2", "phi3")


def spec_scores(X, W, variant: str = "phi2", n_clusters: int = 2) -> np.ndarray:
    r"""SPEC ranking values of the columns of X on the graph W.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    W : scipy.sparse array or ndarray of shape (n_samples, n_samples)
    variant : {"phi1", "phi2", "phi3"}
    n_clusters : int
        :math:`k` of :math:`\varphi_3` (uses :math:`\xi_2..\xi_k`); unused otherwise.

    Returns
    -------
    values : ndarray of shape (n_features,)
        Raw :math:`\varphi` values (orientation as in the module docstring).
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant={variant!r} must be one of {VARIANTS}.")
    X = column_power_of_two_scaled(X)
    const = constant_columns(X)
    d = degrees(W)
    centred, fdf = _wss(X, d)
    if variant == "phi3":
        m = int(n_clusters) - 1
        values = np.zeros(X.shape[1])
        if m < 1:
            return values
        mu, Z = spectral_embedding(W, m)
        proj = np.asarray((Z * np.sqrt(d)[:, None]).T @ X)  # xi_j^T D^{1/2} f, shape (m, p)
        ok = ~const & (fdf > 0)
        alpha2 = proj[:, ok] ** 2 / fdf[ok]
        values[ok] = (1.0 + mu) @ alpha2  # 2 - lambda_j = 1 + mu_j
        return values
    num = graph_smoothness(X, W)
    den = fdf if variant == "phi1" else centred
    values = np.full(X.shape[1], np.inf)
    ok = ~const & (den > 0)
    values[ok] = num[ok] / den[ok]
    return values


def is_lower_better(variant: str) -> bool:
    """Whether smaller raw values are better for ``variant``."""
    return variant != "phi3"
