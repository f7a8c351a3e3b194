r"""Least squares with an l2,1 penalty (multi-task lasso; Obozinski et al. 2010; Liu, Ji & Ye 2009).

.. math::

    \min_{W, b}\; \frac{1}{2n}\|Y - XW - \mathbf{1}b^\top\|_F^2 + \lambda \|W\|_{2,1},
    \qquad \|W\|_{2,1} = \sum_j \|w^j\|_2,

with one-hot class indicators :math:`Y`. The intercept is eliminated by centring X and Y (exact
for least squares). :math:`W = 0` is optimal exactly when
:math:`\lambda \ge \lambda_{max} = \max_j \|x_j^\top (Y - \bar Y)\|_2 / n`. Solved by accelerated
proximal gradient with group soft-thresholding on working sets (Liu, Ji & Ye 2009 use the same
accelerated scheme), stopped by the KKT residual.
"""

from __future__ import annotations

import numpy as np

from sparsefs._kernels.group_lasso import (
    GroupL21Penalty,
    LeastSquares,
    ProxGradResult,
    prox_grad_working_set,
    row_norms,
)

__all__ = ["lambda_max", "ls_l21"]


def lambda_max(X: np.ndarray, Y: np.ndarray) -> float:
    """``max_j ||x_j^T (Y - mean(Y))|| / n`` for centred X."""
    Yc = Y - Y.mean(axis=0)
    return float(row_norms(X.T @ Yc).max(initial=0.0)) / X.shape[0]


def ls_l21(
    X: np.ndarray,
    Y: np.ndarray,
    ratio: float,
    *,
    lam_max: float | None = None,
    coef0: np.ndarray | None = None,
    max_iter: int = 1000,
    tol: float = 1e-4,
) -> ProxGradResult:
    r"""Solve ls-l21 at :math:`\lambda = \text{ratio} \cdot \lambda_{max}` for centred ``X``.

    ``ratio >= 1`` returns W = 0 exactly. ``tol`` bounds the KKT residual relative to
    :math:`\lambda_{max}`. The intercept returned is the mean of Y minus the fitted part at the
    column means of X (zero for centred X): ``b = mean(Y)``.
    """
    if lam_max is None:
        lam_max = lambda_max(X, Y)
    Yc = Y - Y.mean(axis=0)
    datafit = LeastSquares()
    if ratio >= 1.0 or lam_max == 0.0:
        value, dZ = datafit.value_grad(np.zeros_like(Yc), Yc)
        return ProxGradResult(np.zeros((X.shape[1], Y.shape[1])), Y.mean(axis=0), X.T @ dZ, 0,
                              True, np.array([value]), 0.0)
    res = prox_grad_working_set(
        X, Yc, datafit, GroupL21Penalty(), ratio * lam_max, coef0=coef0, fit_intercept=False,
        max_iter=max_iter, tol=tol, scale=lam_max,
    )
    res.intercept = Y.mean(axis=0)
    return res
