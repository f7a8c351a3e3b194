r"""l1 and elastic-net penalised multinomial logistic regression, and its penalty path.

Solves (Tibshirani 1996; Zou & Hastie 2005; Friedman, Hastie & Tibshirani 2010)

.. math::

    \min_{W, b}\; \frac1n \sum_{i=1}^n \Big[\log \sum_{k=1}^K e^{x_i w_k + b_k}
        - (x_i w_{y_i} + b_{y_i})\Big]
        + \lambda\Big(\rho \|W\|_1 + \frac{1-\rho}{2}\|W\|_F^2\Big),

:math:`W \in \mathbb{R}^{d \times K}`, by accelerated proximal gradient on working sets
(:func:`sparsefs._kernels.group_lasso.prox_grad_working_set`). :math:`W = 0` is optimal exactly when
:math:`\lambda \ge \lambda_{max} = \max_{jk} |G^0_{jk}| / \rho`, with :math:`G^0` the gradient
at :math:`W = 0` and the optimal intercept (the log class priors). Feature :math:`j` is selected
when row :math:`w^j` is nonzero; :func:`lasso_to_n_features` walks the penalty down from
:math:`\lambda_{max}` to reach a requested number of such rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sparsefs._kernels.elastic_net import ElasticNetPenalty
from sparsefs._kernels.group_lasso import (
    Multinomial,
    ProxGradResult,
    nonzero_rows,
    prox_grad_working_set,
)
from sparsefs._kernels.l21 import path_to_n_nonzero

__all__ = ["LassoFit", "elastic_net_logistic", "lambda_max", "lasso_to_n_features"]


def lambda_max(X: np.ndarray, Y: np.ndarray, l1_ratio: float) -> float:
    """Smallest penalty for which W = 0 (with the optimal intercept) solves the problem."""
    return ElasticNetPenalty(l1_ratio).lam_max(ProxGradResult.at_zero(X, Y, Multinomial()).grad)


@dataclass
class LassoFit:
    """A fit at one penalty ``ratio * lam_max``."""

    ratio: float
    lam: float
    result: ProxGradResult

    @property
    def n_nonzero(self) -> int:
        return int(np.count_nonzero(nonzero_rows(self.result.coef)))


def elastic_net_logistic(
    X: np.ndarray,
    Y: np.ndarray,
    ratio: float,
    *,
    l1_ratio: float = 1.0,
    lam_max: float | None = None,
    warm: LassoFit | None = None,
    max_iter: int = 1000,
    tol: float = 1e-4,
    engine: str = "auto",
) -> LassoFit:
    r"""Fit at penalty :math:`\lambda = \text{ratio} \cdot \lambda_{max}`.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    Y : ndarray of shape (n_samples, n_classes)
        One-hot labels.
    ratio : float
        Penalty relative to :math:`\lambda_{max}`; ``ratio >= 1`` returns W = 0 exactly.
    l1_ratio : float in (0, 1]
    lam_max : float, optional
        :func:`lambda_max`, if already known.
    warm : LassoFit, optional
        Warm start.
    max_iter, tol :
        Proximal-gradient iterations; KKT tolerance relative to :math:`\lambda_{max}`.
    engine : {"auto", "compiled", "numpy"}, default="auto"
        The FISTA loop (:func:`sparsefs._kernels.group_lasso.prox_grad_working_set`).
    """
    if lam_max is None:
        lam_max = lambda_max(X, Y, l1_ratio)
    penalty = ElasticNetPenalty(l1_ratio)
    datafit = Multinomial()
    lam = ratio * lam_max
    if ratio >= 1.0 or lam_max == 0.0:
        # W = 0 is optimal: return it exactly, with its gradient for the scores
        return LassoFit(ratio, lam, ProxGradResult.at_zero(X, Y, datafit))
    res = prox_grad_working_set(
        X, Y, datafit, penalty, lam,
        coef0=None if warm is None else warm.result.coef,
        intercept0=None if warm is None else warm.result.intercept,
        max_iter=max_iter, tol=tol, scale=lam_max, engine=engine,
    )
    return LassoFit(ratio, lam, res)


def lasso_to_n_features(
    X: np.ndarray,
    Y: np.ndarray,
    n_features: int,
    *,
    l1_ratio: float = 1.0,
    max_iter: int = 1000,
    tol: float = 1e-4,
    min_ratio: float = 1e-4,
    engine: str = "auto",
):
    """The largest penalty on the path with at least ``n_features`` nonzero rows.

    Returns
    -------
    fit : LassoFit
    path : sparsefs._kernels.l21.PathResult
    lam_max : float
    """
    lam_max = lambda_max(X, Y, l1_ratio)

    def fit_at(ratio, warm):
        fit = elastic_net_logistic(X, Y, ratio, l1_ratio=l1_ratio, lam_max=lam_max, warm=warm,
                                   max_iter=max_iter, tol=tol, engine=engine)
        return fit, fit.n_nonzero

    path = path_to_n_nonzero(fit_at, n_features, min_ratio=min_ratio)
    return path.state, path, lam_max
