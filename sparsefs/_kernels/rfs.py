r"""RFS: robust feature selection by joint l2,1-norm minimisation (Nie et al., NIPS 2010).

.. math::

    \min_{W}\; \|Y - XW\|_{2,1} + \gamma \|W\|_{2,1}
    \qquad (\|A\|_{2,1} = \textstyle\sum_i \|a^i\|_2),

an l2,1 (row-wise, hence outlier-robust) loss over the samples and an l2,1 (row-sparse) penalty
over the features, :math:`Y` the one-hot class indicators. Nie et al. write it as
:math:`\min_U \|U\|_{2,1}` s.t. :math:`[X,\ \gamma I]\,U = Y` and solve it by the reweighting

.. math::

    U \leftarrow D^{-1} A^\top (A D^{-1} A^\top)^{-1} Y, \qquad D_{ii} = 1 / (2\|u^i\|),

whose system :math:`A D^{-1} A^\top = X D_W^{-1} X^\top + \gamma^2 D_E^{-1}` is n x n: this module
solves exactly that (or the equivalent d x d system when d < n) with the diagonal matrices applied
element-wise (:func:`sparsefs._kernels.group_lasso.irls_l21_step`), never the (n+d) x (n+d) inverse.
The objective decreases monotonically (Nie et al., Theorem 1).

Optimality is certified by the dual problem

.. math::

    \max_\Lambda \langle Y, \Lambda\rangle \quad\text{s.t.}\quad \|\Lambda_i\|_2 \le 1\ \forall i,
    \quad \|x_j^\top \Lambda\|_2 \le \gamma\ \forall j,

whose value never exceeds the primal one; the iteration stops when the relative duality gap
is below ``tol``. At :math:`W = 0` the residual rows are :math:`y_i`, so :math:`W = 0` is optimal
exactly when :math:`\gamma \ge \gamma_{max} = \max_j \|x_j^\top \hat Y\|_2` with
:math:`\hat y_i = y_i / \|y_i\|`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sparsefs._kernels.group_lasso import irls_l21_step, row_norms

__all__ = ["RFSResult", "gamma_max", "rfs", "rfs_dual_gap"]


def gamma_max(X: np.ndarray, Y: np.ndarray) -> float:
    """``max_j ||x_j^T Yhat||``, Yhat the rows of Y scaled to unit norm (zero rows stay 0)."""
    norms = row_norms(Y)
    Yhat = Y / np.where(norms > 0, norms, 1.0)[:, None]
    return float(row_norms(X.T @ Yhat).max(initial=0.0))


def rfs_dual_gap(X: np.ndarray, Y: np.ndarray, W: np.ndarray, Lam: np.ndarray, gamma: float):
    """Primal value, dual value of ``Lam`` scaled into the feasible set, and that scaled ``Lam``.

    The primal is ``||Y - XW||_{2,1} + gamma ||W||_{2,1}``; ``Lam`` is divided by the smallest
    factor >= 1 that makes it dual feasible, so ``primal - dual >= 0`` bounds the suboptimality.
    """
    primal = float(row_norms(Y - X @ W).sum() + gamma * row_norms(W).sum())
    s = max(1.0, float(row_norms(Lam).max(initial=0.0)),
            float(row_norms(X.T @ Lam).max(initial=0.0)) / gamma)
    Lam = Lam / s
    return primal, float(np.sum(Y * Lam)), Lam


@dataclass
class RFSResult:
    """Outcome of :func:`rfs`.

    Attributes
    ----------
    coef : ndarray of shape (n_features, n_outputs)
    dual : ndarray of shape (n_samples, n_outputs)
        A dual-feasible :math:`\\Lambda` (the optimality certificate).
    n_iter : int
    converged : bool
    objective : ndarray
        Primal objective after each iteration (non-increasing).
    gap : ndarray
        Relative duality gap after each iteration.
    """

    coef: np.ndarray
    dual: np.ndarray
    n_iter: int
    converged: bool
    objective: np.ndarray
    gap: np.ndarray


def rfs(
    X: np.ndarray,
    Y: np.ndarray,
    gamma: float,
    *,
    max_iter: int = 300,
    tol: float = 1e-4,
    eps: float = 1e-12,
    prune: float = 1e-10,
) -> RFSResult:
    r"""Solve RFS by Nie et al.'s reweighting, in the smaller dimension.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    Y : ndarray of shape (n_samples, n_outputs)
    gamma : float
        Penalty :math:`\gamma > 0` (absolute; see :func:`gamma_max`). ``gamma >= gamma_max``
        returns W = 0 exactly.
    max_iter : int, default=300
    tol : float, default=1e-4
        Stop when the relative duality gap ``(primal - dual) / primal`` is at most ``tol``.
    eps : float, default=1e-12
        Residual norms below ``eps`` times the largest are floored there, the usual smoothing
        of the reweighting (:math:`D_{ii} = 1/(2\max(\|u^i\|, \epsilon))`).
    prune : float, default=1e-10
        Feature rows whose norm falls below ``prune`` times the largest are set to zero and
        left out of later systems (which shrink to the remaining rows).

    Returns
    -------
    RFSResult
    """
    n, d = X.shape
    c = Y.shape[1]
    gmax = gamma_max(X, Y)
    if gamma >= gmax or d == 0:
        W = np.zeros((d, c))
        norms = row_norms(Y)
        Lam = Y / np.where(norms > 0, norms, 1.0)[:, None]
        primal, dual, Lam = rfs_dual_gap(X, Y, W, Lam, gamma)
        return RFSResult(W, Lam, 0, True, np.array([primal]),
                         np.array([(primal - dual) / max(primal, 1e-300)]))
    row_w = np.ones(d)
    sample_w = np.ones(n)
    objective, gaps = [], []
    converged = False
    W = np.zeros((d, c))
    Lam = np.zeros((n, c))
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        # rows that reached exactly zero stay zero: solve on the others only (the system
        # shrinks to |active| x |active| once fewer rows than samples remain)
        active = np.flatnonzero(row_w > 0)
        if active.size == d:
            W, _ = irls_l21_step(X, Y, row_w, sample_w, gamma)
        else:
            W = np.zeros((d, c))
            if active.size:
                W[active], _ = irls_l21_step(X[:, active], Y, row_w[active], sample_w, gamma)
        E = Y - X @ W
        e_norms = row_norms(E)
        floor = max(eps * float(e_norms.max(initial=0.0)), 1e-300)
        safe = np.maximum(e_norms, floor)
        primal, dual, Lam = rfs_dual_gap(X, Y, W, E / safe[:, None], gamma)
        objective.append(primal)
        gaps.append((primal - dual) / max(primal, 1e-300))
        if gaps[-1] <= tol:
            converged = True
            break
        row_w = row_norms(W)
        # a row shrinks by the factor ||x_j^T Lambda|| / gamma per iteration; once it is
        # 1e-10 below the largest it is dropped (a wrongly dropped row would keep the dual
        # infeasible, so the gap test still guards convergence)
        row_w[row_w < prune * row_w.max(initial=0.0)] = 0.0
        sample_w = safe
    return RFSResult(W, Lam, n_iter, converged, np.asarray(objective), np.asarray(gaps))
