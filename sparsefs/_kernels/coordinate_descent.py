r"""Coordinate descent for the Gaussian and Cox elastic net, with glmnet's strategies.

Solves

.. math::

    \min_\beta\; \frac1n L(X\beta) + \lambda\Big(\rho\|\beta\|_1 + \frac{1-\rho}{2}\|\beta\|_2^2
    \Big),

for two losses of the linear predictor :math:`\eta = X\beta` (centred columns):

* ``"gaussian"``: :math:`L(\eta) = \tfrac12\|y - \bar y - \eta\|^2`, least squares (the
  intercept :math:`\bar y` is exact for centred columns) - scikit-learn's ``Lasso`` /
  ``ElasticNet`` objective with ``alpha`` :math:`= \lambda`, ``l1_ratio`` :math:`= \rho`
  (Friedman, Hastie & Tibshirani, J. Stat. Softw. 33(1), 2010);
* ``"cox"``: :math:`L(\eta) = -\ell(\eta)`, minus Cox's partial log-likelihood (Breslow or
  Efron ties, :mod:`sparsefs._kernels.cox`), glmnet's scaling :math:`-\ell/n` (Simon,
  Friedman, Hastie & Tibshirani, J. Stat. Softw. 39(5), 2011).

The algorithm of those papers, written from them:

1. **Quadratic approximation** (IRLS): around the current :math:`\eta`, with
   :math:`g = -\partial L/\partial\eta` and the diagonal weights
   :math:`h = \mathrm{diag}\,\partial^2 L/\partial\eta^2`, :math:`L` is replaced by
   :math:`\tfrac12\sum_k h_k (z_k - \eta_k)^2`, :math:`z = \eta + g/h` (exact for least squares:
   :math:`h = 1`). The solver works with the weighted residual :math:`h(z - X\beta)`, equal to
   :math:`g` at the expansion point, so no division by a zero weight occurs.
2. **Coordinate descent** on that penalised weighted least squares: for each :math:`j`,
   :math:`\beta_j \leftarrow S(\tfrac1n\sum_k x_{kj} r_k + c_j\beta_j,\ \lambda\rho) /
   (c_j + \lambda(1-\rho))` with :math:`c_j = \tfrac1n\sum_k h_k x_{kj}^2` and
   :math:`S` the soft-threshold; the residual is updated in :math:`O(n)` (dense) or
   :math:`O(\mathrm{nnz}_j)` (sparse: the centring is a scalar offset carried along).
3. **Active set**: a full sweep, then sweeps over the nonzero coefficients only until they
   settle, then a full sweep again - until a full sweep changes nothing.
4. **Strong rules and KKT checks** (Tibshirani et al., JRSS-B 74, 2012): at :math:`\lambda`
   following :math:`\lambda'` on a path, only the features with
   :math:`|\nabla_j| \ge \rho(2\lambda - \lambda')` (and the nonzero ones) are optimised; the
   KKT conditions of every feature are then checked and violators added.
5. **Warm starts** along a decreasing :math:`\lambda` path; a damped step (halved until the
   objective does not increase) keeps the Cox iteration monotone.

Stopping: when the largest KKT residual of the full problem (in the units of the gradient
:math:`\tfrac1n X^\top g`) is at most ``tol``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from sparsefs._kernels import cox as _cox

__all__ = ["CoxLoss", "ENetDesign", "ENetResult", "GaussianLoss", "enet_fit", "enet_lambda_max"]


@numba.njit(cache=True, nogil=True)
def _sweep(idx, beta, wr, h, state, Xf, data, indices, indptr, mean, sparse, curv, hs_nz,
           lam1, lam2, n):  # pragma: no cover - compiled
    """One pass of coordinate updates over ``idx``; returns the largest sqrt(c_j) |delta_j|.

    ``state = [c, wsum, hsum]`` for sparse designs: the true weighted residual is
    ``wr + c * h`` and ``wsum`` the sum of the stored ``wr`` (the centring offsets)."""
    biggest = 0.0
    for t in range(idx.shape[0]):
        j = idx[t]
        cj = curv[j] / n
        if cj <= 0.0:
            beta[j] = 0.0
            continue
        if sparse:
            c = state[0]
            dot = 0.0
            for q in range(indptr[j], indptr[j + 1]):
                dot += data[q] * wr[indices[q]]
            dot += c * hs_nz[j] - mean[j] * (state[1] + c * state[2])
        else:
            col = Xf[:, j]
            dot = 0.0
            for k in range(n):
                dot += col[k] * wr[k]
        old = beta[j]
        u = dot / n + cj * old
        if u > lam1:
            new = (u - lam1) / (cj + lam2)
        elif u < -lam1:
            new = (u + lam1) / (cj + lam2)
        else:
            new = 0.0
        delta = new - old
        if delta == 0.0:
            continue
        beta[j] = new
        if sparse:
            for q in range(indptr[j], indptr[j + 1]):
                k = indices[q]
                wr[k] -= h[k] * data[q] * delta
            state[0] += mean[j] * delta
            state[1] -= hs_nz[j] * delta
        else:
            col = Xf[:, j]
            for k in range(n):
                wr[k] -= h[k] * col[k] * delta
        change = np.sqrt(cj) * abs(delta)
        if change > biggest:
            biggest = change
    return biggest


@numba.njit(cache=True, nogil=True)
def _cd(idx, beta, wr, h, state, Xf, data, indices, indptr, mean, sparse, curv, hs_nz, lam1,
        lam2, n, tol, max_sweeps):  # pragma: no cover - compiled
    """Active-set coordinate descent over ``idx`` (glmnet's step 3); returns sweeps done and
    whether a full sweep moved no coefficient by more than ``tol``."""
    sweeps = 0
    while sweeps < max_sweeps:
        big = _sweep(idx, beta, wr, h, state, Xf, data, indices, indptr, mean, sparse, curv,
                     hs_nz, lam1, lam2, n)
        sweeps += 1
        if big <= tol:
            return sweeps, True
        m = 0
        for t in range(idx.shape[0]):
            if beta[idx[t]] != 0.0:
                m += 1
        act = np.empty(m, dtype=np.int64)
        m = 0
        for t in range(idx.shape[0]):
            if beta[idx[t]] != 0.0:
                act[m] = idx[t]
                m += 1
        while sweeps < max_sweeps:
            big = _sweep(act, beta, wr, h, state, Xf, data, indices, indptr, mean, sparse,
                         curv, hs_nz, lam1, lam2, n)
            sweeps += 1
            if big <= tol:
                break
    return sweeps, False


@dataclass
class ENetDesign:
    """The prepared (centred, optionally standardised) design, dense or sparse.

    ``dense`` is a Fortran-ordered float64 array (columns contiguous), or ``None`` with the
    CSC matrix ``S`` and column offsets ``mean`` (design column j = ``S[:, j] - mean[j]``).
    """

    dense: np.ndarray | None
    S: sp.csc_array | None
    mean: np.ndarray

    @classmethod
    def from_prepared(cls, X) -> ENetDesign:
        """From ``sparsefs._kernels.l21.prepare_design(...).X`` (an array or CenteredSparse)."""
        if isinstance(X, np.ndarray):
            return cls(np.asfortranarray(X, dtype=np.float64), None, np.zeros(X.shape[1]))
        S = sp.csc_array(X.S, dtype=np.float64)
        S.sort_indices()
        return cls(None, S, np.asarray(X.m, dtype=np.float64))

    @property
    def shape(self) -> tuple[int, int]:
        return self.dense.shape if self.dense is not None else self.S.shape

    def matvec(self, beta: np.ndarray) -> np.ndarray:
        """:math:`X\\beta` (the nonzero coefficients only)."""
        nz = np.flatnonzero(beta)
        n = self.shape[0]
        if nz.size == 0:
            return np.zeros(n)
        if self.dense is not None:
            return self.dense[:, nz] @ beta[nz]
        return self.S[:, nz] @ beta[nz] - float(self.mean[nz] @ beta[nz])

    def rmatvec(self, v: np.ndarray) -> np.ndarray:
        """:math:`X^\\top v`."""
        if self.dense is not None:
            return self.dense.T @ v
        return self.S.T @ v - self.mean * v.sum()

    def weighted_sq(self, h: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(sum_k h_k x_kj^2, sum over stored k of h_k s_kj)`` for ``cols`` (else 0)."""
        p = self.shape[1]
        curv = np.zeros(p)
        hs = np.zeros(p)
        if cols.size == 0:
            return curv, hs
        if self.dense is not None:
            B = self.dense[:, cols]
            curv[cols] = h @ (B * B)
            return curv, hs
        Sc = self.S[:, cols]
        hsq = Sc.multiply(Sc).T @ h
        hs_c = Sc.T @ h
        m = self.mean[cols]
        curv[cols] = hsq - 2.0 * m * hs_c + m * m * h.sum()
        hs[cols] = hs_c
        return curv, hs

    def kernel_args(self):
        if self.dense is not None:
            z = np.zeros(1)
            zi = np.zeros(1, dtype=np.int32)
            return self.dense, z, zi, np.zeros(2, dtype=np.int32), self.mean, False
        S = self.S
        return (np.zeros((1, 1), order="F"), S.data, S.indices, S.indptr, self.mean, True)


class GaussianLoss:
    r""":math:`L(\eta) = \tfrac12\|y_c - \eta\|^2`: ``g`` is the residual, ``h = 1``."""

    name = "gaussian"

    def __init__(self, y: np.ndarray):
        y = np.asarray(y, dtype=np.float64)
        self.offset = float(y.mean())
        self.yc = y - self.offset

    def derivatives(self, eta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        r = self.yc - eta
        return 0.5 * float(r @ r), r, np.ones_like(r)


class CoxLoss:
    r""":math:`L(\eta) = -\ell(\eta)`, Cox's partial likelihood with ``ties``."""

    name = "cox"

    def __init__(self, time: np.ndarray, event: np.ndarray, ties: str = "breslow"):
        self.data = _cox.cox_data(time, event)
        self.ties = ties
        self.offset = 0.0

    def derivatives(self, eta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        ll, g, h = _cox.eta_derivatives(eta, self.data, self.ties)
        return -ll, g, h


@dataclass
class ENetResult:
    """A fit at one penalty.

    Attributes
    ----------
    coef : ndarray of shape (p,)
    lam : float
    grad : ndarray of shape (p,)
        :math:`\\frac1n X^\\top g` at the solution (minus the gradient of the smooth part).
    objective : float
    n_iter : int
        Coordinate sweeps (all working sets and quadratic approximations together).
    converged : bool
    kkt : float
        Largest KKT residual of the full problem, in gradient units.
    """

    coef: np.ndarray
    lam: float
    grad: np.ndarray
    objective: float
    n_iter: int
    converged: bool
    kkt: float


def _penalty(beta, lam, l1_ratio):
    return lam * (l1_ratio * float(np.abs(beta).sum())
                  + 0.5 * (1.0 - l1_ratio) * float(beta @ beta))


def _kkt(beta, grad, lam, l1_ratio) -> np.ndarray:
    """Per-feature KKT residual of minimising -(1/n) ell + penalty (``grad`` = X^T g / n)."""
    l1, l2 = lam * l1_ratio, lam * (1.0 - l1_ratio)
    viol = np.maximum(np.abs(grad) - l1, 0.0)
    nz = beta != 0
    viol[nz] = np.abs(grad[nz] - l2 * beta[nz] - l1 * np.sign(beta[nz]))
    return viol


def enet_lambda_max(design: ENetDesign, loss, l1_ratio: float) -> float:
    r"""The smallest :math:`\lambda` with :math:`\beta = 0` optimal:
    :math:`\max_j |x_j^\top g(0)| / (n\rho)`."""
    n = design.shape[0]
    _, g, _ = loss.derivatives(np.zeros(n))
    return float(np.abs(design.rmatvec(g)).max(initial=0.0)) / (n * l1_ratio)


def enet_fit(
    design: ENetDesign,
    loss,
    lam: float,
    l1_ratio: float = 1.0,
    *,
    coef0: np.ndarray | None = None,
    lam_prev: float | None = None,
    tol: float = 1e-7,
    max_iter: int = 100_000,
    max_outer: int = 200,
) -> ENetResult:
    r"""The elastic net at one penalty :math:`\lambda`, warm-started from ``coef0``.

    Parameters
    ----------
    design : ENetDesign
    loss : GaussianLoss or CoxLoss
    lam : float
        :math:`\lambda > 0`.
    l1_ratio : float in (0, 1]
        :math:`\rho`.
    coef0 : ndarray of shape (p,), optional
        Warm start (default 0).
    lam_prev : float, optional
        The previous penalty on a path (strong rule); default: :func:`enet_lambda_max`.
    tol : float
        Stop when the largest KKT residual is at most ``tol`` (gradient units).
    max_iter : int
        Coordinate sweeps in all.
    max_outer : int
        Quadratic approximations (Cox) / working-set rounds.

    Returns
    -------
    ENetResult
    """
    n, p = design.shape
    beta = np.zeros(p) if coef0 is None else np.array(coef0, dtype=np.float64)
    l1, l2 = lam * l1_ratio, lam * (1.0 - l1_ratio)
    eta = design.matvec(beta)
    value, g, h = loss.derivatives(eta)
    grad = design.rmatvec(g) / n
    objective = value / n + _penalty(beta, lam, l1_ratio)
    if lam_prev is None:
        lam_prev = float(np.abs(grad).max(initial=0.0)) / l1_ratio if coef0 is None else lam
    strong = (np.abs(grad) >= l1_ratio * (2.0 * lam - lam_prev)) | (beta != 0)
    working = np.flatnonzero(strong).astype(np.int64)
    Xf, data, indices, indptr, mean, sparse = design.kernel_args()
    sweeps = 0
    converged = False
    kkt = float(_kkt(beta, grad, lam, l1_ratio).max(initial=0.0))
    for _ in range(max_outer):
        if kkt <= tol:
            converged = True
            break
        viol = _kkt(beta, grad, lam, l1_ratio)
        add = np.flatnonzero(viol > tol)
        working = np.union1d(working, add).astype(np.int64)
        curv, hs = design.weighted_sq(h, working)
        wr = g.copy()
        state = np.array([0.0, float(wr.sum()), float(h.sum())])
        old = beta.copy()
        # inner tolerance a little below the outer one: the KKT check decides
        done, _ = _cd(working, beta, wr, h, state, Xf, data, indices, indptr, mean, sparse,
                      curv, hs, l1, l2, float(n), 0.1 * tol, max(1, max_iter - sweeps))
        sweeps += done
        # the new point, damped until the objective does not increase (Cox; exact for LS)
        step = beta - old
        t = 1.0
        while True:
            cand = old + t * step
            eta = design.matvec(cand)
            value_c, g_c, h_c = loss.derivatives(eta)
            obj_c = value_c / n + _penalty(cand, lam, l1_ratio)
            if obj_c <= objective + 1e-12 * max(1.0, abs(objective)) or t < 1e-6:
                break
            t *= 0.5
        beta, value, g, h, objective = cand, value_c, g_c, h_c, obj_c
        grad = design.rmatvec(g) / n
        kkt = float(_kkt(beta, grad, lam, l1_ratio).max(initial=0.0))
        if sweeps >= max_iter:
            break
    if kkt <= tol:
        converged = True
    return ENetResult(beta, lam, grad, objective, sweeps, converged, kkt)
