r"""Multinomial logistic regression with an l2,1 penalty (Liu, Ji & Ye 2009; Obozinski et al. 2010).

.. math::

    \min_{W, b}\; \frac1n \sum_{i=1}^n \Big[\log \sum_{k=1}^K e^{x_i w_k + b_k}
        - (x_i w_{y_i} + b_{y_i})\Big] + \lambda \|W\|_{2,1},

one weight row :math:`w^j \in \mathbb{R}^K` per feature, so a feature is used for all classes or
for none. Binary and multiclass labels are handled alike (K = 2 is the symmetric binary model).
:math:`W = 0` is optimal exactly when
:math:`\lambda \ge \lambda_{max} = \max_j \|x_j^\top (P_0 - Y)\|_2 / n`, with :math:`P_0` the class
priors (the optimal intercept at W = 0). Solved by accelerated proximal gradient with group
soft-thresholding on working sets, stopped by the KKT residual.
"""

from __future__ import annotations

import numpy as np

from sparsefs._kernels.group_lasso import (
    GroupL21Penalty,
    Multinomial,
    ProxGradResult,
    prox_grad_working_set,
)

__all__ = ["lambda_max", "ll_l21"]


def lambda_max(X: np.ndarray, Y: np.ndarray) -> float:
    """``max_j ||x_j^T (P0 - Y)|| / n``: the smallest penalty with W = 0 optimal."""
    return GroupL21Penalty().lam_max(ProxGradResult.at_zero(X, Y, Multinomial()).grad)


def ll_l21(
    X: np.ndarray,
    Y: np.ndarray,
    ratio: float,
    *,
    lam_max: float | None = None,
    coef0: np.ndarray | None = None,
    intercept0: np.ndarray | None = None,
    max_iter: int = 1000,
    tol: float = 1e-4,
) -> ProxGradResult:
    r"""Solve ll-l21 at :math:`\lambda = \text{ratio} \cdot \lambda_{max}`.

    ``Y`` is the one-hot label matrix (n_samples, K), K >= 2. ``ratio >= 1`` returns W = 0
    exactly. ``tol`` bounds the KKT residual relative to :math:`\lambda_{max}`.
    """
    if lam_max is None:
        lam_max = lambda_max(X, Y)
    datafit = Multinomial()
    if ratio >= 1.0 or lam_max == 0.0:
        return ProxGradResult.at_zero(X, Y, datafit)
    return prox_grad_working_set(
        X, Y, datafit, GroupL21Penalty(), ratio * lam_max, coef0=coef0, intercept0=intercept0,
        max_iter=max_iter, tol=tol, scale=lam_max,
    )
