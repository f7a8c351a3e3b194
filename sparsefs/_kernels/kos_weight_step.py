r"""Sparse KOS, the weight step (Algorithm 1, steps 1-4): the kernel's Jacobian in the weights,
the quadratic model (14) (dense or factored), the exact gradient, and the box-constrained lasso
solved by coordinate descent (update (16), compiled by numba).

Part of :mod:`sparsefs._kernels.sparse_kos` (notation there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

# --------------------------------------------------------------------------------------------
# linearisation (Algorithm 1, steps 1-3) and the exact gradient
# --------------------------------------------------------------------------------------------


def kernel_jacobian(
    K: np.ndarray, X: np.ndarray, A: np.ndarray, weights: np.ndarray, sigma2: float
) -> np.ndarray:
    r"""The matrices :math:`T_c` (n x p), one per score vector: the derivative of
    :math:`M_w a_c` along each :math:`w_l` (spec 2.7 step 2).

    .. math::

        T_c[:, l] = C\,\frac{\partial K_w}{\partial w_l}\,C a_c
        = -\frac{2 w_l}{\sigma^2}\, C\big[x_l^2\circ(K u) - 2x_l\circ(K(x_l\circ u))
        + K(x_l^2\circ u)\big],\qquad u = C a_c,

    so :math:`M_w A \approx M_{w_0}A + \sum_l (w_l - w_{0l}) T[:, :, l]`. All columns come
    from ONE product :math:`K[u, X\circ u, X^2\circ u]` over the active features (no n x n x p
    tensor, no per-feature n x n loop). Columns with :math:`w_l = 0` are exactly zero.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        :math:`K_w` at the linearisation point.
    X : ndarray of shape (n, p)
        Unweighted (standardised) data.
    A : ndarray of shape (n, q)
    weights : ndarray of shape (p,)
    sigma2 : float

    Returns
    -------
    T : ndarray of shape (q, n, p)
    """
    n, p = X.shape
    q = A.shape[1]
    T = np.zeros((q, n, p))
    act = np.flatnonzero(weights)
    s = act.shape[0]
    if s == 0:
        return T
    Xa = X[:, act]
    Xa2 = Xa * Xa
    U = A - A.mean(axis=0)
    B = np.empty((n, q * (2 * s + 1)))
    for c in range(q):
        u = U[:, c : c + 1]
        base = c * (2 * s + 1)
        B[:, base] = u[:, 0]
        B[:, base + 1 : base + 1 + s] = Xa * u
        B[:, base + 1 + s : base + 1 + 2 * s] = Xa2 * u
    KB = K @ B
    scale = -2.0 * weights[act] / sigma2
    for c in range(q):
        base = c * (2 * s + 1)
        Ku = KB[:, base : base + 1]
        Tc = Xa2 * Ku
        Tc -= 2.0 * Xa * KB[:, base + 1 : base + 1 + s]
        Tc += KB[:, base + 1 + s : base + 1 + 2 * s]
        Tc -= Tc.mean(axis=0)
        Tc *= scale
        T[c][:, act] = Tc
    return T


def quadratic_model(
    T: np.ndarray,
    residual: np.ndarray,
    A: np.ndarray,
    weights: np.ndarray,
    ridge: float,
    *,
    factored: bool | None = False,
) -> tuple[np.ndarray | FactoredQ, np.ndarray]:
    r"""The quadratic model (14)-(15) of :math:`F` in :math:`w` at fixed :math:`A`.

    .. math::

        \min_{w \in [-1,1]^p} w^\top Q w - 2\beta^\top w + \lambda\|w\|_1,\qquad
        Q = \frac1n\sum_c T_c^\top T_c,

        \beta = \frac1n\sum_c T_c^\top\big(Z_c - M_{w_0}a_c + T_c w_0\big)
                - \frac\gamma2\sum_c T_c^\top a_c .

    For ``q = 1`` this is the paper's (14)-(15). The model's gradient at :math:`w_0`,
    :math:`2Qw_0 - 2\beta`, is the exact gradient of :math:`F` in :math:`w`
    (:func:`weight_gradient`).

    Parameters
    ----------
    T : ndarray of shape (q, n, p)
        :func:`kernel_jacobian`.
    residual : ndarray of shape (n, q)
        :math:`Z - M_{w_0}A`.
    A : ndarray of shape (n, q)
    weights : ndarray of shape (p,)
        :math:`w_0`.
    ridge : float
    factored : bool or None, default=False
        Return :math:`Q` as :class:`FactoredQ` (never formed); ``None``: when the active
        features outnumber the rows of the stacked Jacobian (``s > n q``), where the factored
        form is the cheaper one.

    Returns
    -------
    Q : ndarray of shape (p, p) or FactoredQ
    beta : ndarray of shape (p,)
    """
    q, n, p = T.shape
    if factored is None:
        factored = int(np.count_nonzero(weights)) > n * q
    if factored:
        return _factored_quadratic_model(T, residual, A, weights, ridge)
    Q = np.zeros((p, p))
    lin = np.zeros(p)
    for c in range(q):
        Tc = T[c]
        Q += Tc.T @ Tc
        lin += Tc.T @ (residual[:, c] / n - 0.5 * ridge * A[:, c])
    Q /= n
    beta = lin + Q @ weights
    return Q, beta


@dataclass
class FactoredQ:
    r"""The matrix :math:`Q = \frac1n\sum_c T_c^\top T_c` of the quadratic model (14), kept as
    its factor: the rows of ``Tt`` are the active columns of :math:`[T_1; \dots; T_q]`.

    With ``s`` active features and ``n q`` rows of the stacked Jacobian, forming :math:`Q`
    costs :math:`O(nqs^2)` time and :math:`s^2` memory (406 MB at s = 7129), and a
    coordinate-descent update :math:`O(s)`; kept factored, an update reads one row of
    ``Tt`` (:math:`O(nq)`) and :math:`Q` is never formed. :func:`quadratic_model` returns
    this form when ``s > n q`` (many features, few samples: microarrays); both forms define
    the same model (tested to rounding).

    Attributes
    ----------
    Tt : ndarray of shape (s, n q)
        Row ``j``: :math:`(T_1[:, l_j], \dots, T_q[:, l_j])` for the active feature
        :math:`l_j`.
    index : ndarray of shape (s,)
        The active features :math:`l_j` (increasing).
    n : int
        The number of samples (the :math:`1/n` of :math:`Q`).
    n_features : int
        ``p``.
    """

    Tt: np.ndarray
    index: np.ndarray
    n: int
    n_features: int

    def diagonal(self) -> np.ndarray:
        """:math:`Q_{kk}` for every feature (0 off the active set)."""
        d = np.zeros(self.n_features)
        d[self.index] = np.einsum("ij,ij->i", self.Tt, self.Tt) / self.n
        return d

    def matvec(self, w: np.ndarray) -> np.ndarray:
        """:math:`Qw` (0 off the active set)."""
        out = np.zeros(self.n_features)
        out[self.index] = self.Tt @ (self.Tt.T @ w[self.index]) / self.n
        return out

    def toarray(self) -> np.ndarray:
        """The dense :math:`Q` (for tests and small problems)."""
        Q = np.zeros((self.n_features, self.n_features))
        Q[np.ix_(self.index, self.index)] = self.Tt @ self.Tt.T / self.n
        return Q


def _factored_quadratic_model(T, residual, A, weights, ridge):
    """:func:`quadratic_model` with :math:`Q` kept as :class:`FactoredQ`."""
    q, n, p = T.shape
    index = np.flatnonzero(weights)
    Tt = np.ascontiguousarray(T[:, :, index].transpose(2, 0, 1).reshape(index.size, q * n))
    v = (residual / n - 0.5 * ridge * A).T.reshape(q * n)
    Qf = FactoredQ(Tt, index, n, p)
    beta = np.zeros(p)
    beta[index] = Tt @ v
    beta += Qf.matvec(weights)
    return Qf, beta


def weight_gradient(
    K: np.ndarray,
    X: np.ndarray,
    A: np.ndarray,
    residual: np.ndarray,
    weights: np.ndarray,
    sigma2: float,
    ridge: float,
) -> np.ndarray:
    r"""Exact gradient in :math:`w` of the smooth part of :math:`F` at fixed :math:`A`.

    With :math:`R = Z - M_wA` the smooth part changes by :math:`\langle G, dK\rangle`,
    :math:`G = C(-\tfrac2n RA^\top + \gamma AA^\top)C`, and
    :math:`\partial K/\partial w_l = -\tfrac{2w_l}{\sigma^2} D_l\circ K`,
    :math:`(D_l)_{ij} = (x_{il} - x_{jl})^2`. For :math:`H = \mathrm{sym}(G)\circ K`, the
    performance notes' one-GEMM identity (section 8) gives all ``p`` sums at once:

    .. math::

        \sum_{ij} H_{ij}(x_{il}-x_{jl})^2 = 2\big[(H1)^\top(X\circ X)
        - 1^\top((HX)\circ X)\big]_l .

    Independent of :func:`kernel_jacobian` (used to cross-check it).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        :math:`K_w`.
    X : ndarray of shape (n, p)
    A, residual : ndarray of shape (n, q)
    weights : ndarray of shape (p,)
    sigma2, ridge : float

    Returns
    -------
    grad : ndarray of shape (p,)
    """
    n = K.shape[0]
    U = A - A.mean(axis=0)
    V = -2.0 / n * (residual - residual.mean(axis=0)) + ridge * U
    H = V @ U.T
    H += H.T
    H *= 0.5
    H *= K
    sums = 2.0 * (H.sum(axis=1) @ (X * X) - np.einsum("ij,ij->j", H @ X, X))
    return -2.0 * weights / sigma2 * sums


# --------------------------------------------------------------------------------------------
# coordinate descent (Algorithm 1, step 4, update (16))
# --------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _box_soft_update(b, qkk, half, alpha, tiny, lo, hi):  # pragma: no cover
    r"""The exact minimiser of :math:`q w^2 - 2bw + \lambda|w|` over :math:`[lo, hi]` (one
    coordinate of update (16); ``half`` = :math:`\lambda/2`; a linear problem when
    :math:`q \le` ``tiny``)."""
    if qkk > tiny:
        z = abs(b) - half
        if z <= 0.0:
            new = 0.0
        elif b > 0.0:
            new = z / qkk
        else:
            new = -z / qkk
    elif 2.0 * abs(b) > alpha:
        new = hi if b > 0.0 else lo
    else:
        new = 0.0
    # the 1-D problem is convex: clipping its minimiser to [lo, hi] is exact
    if new > hi:
        return hi
    if new < lo:
        return lo
    return new


@njit(cache=True)
def _cd_box_lasso(Q, beta, w, alpha, tol, max_sweeps, active, tiny, lo, hi):  # pragma: no cover
    p = w.shape[0]
    g = np.zeros(p)
    for j in range(p):
        wj = w[j]
        if wj != 0.0:
            for i in range(p):
                g[i] += Q[i, j] * wj
    half = 0.5 * alpha
    for sweep in range(1, max_sweeps + 1):
        change2 = 0.0
        for k in range(p):
            if not active[k]:
                continue
            qkk = Q[k, k]
            old = w[k]
            new = _box_soft_update(beta[k] - g[k] + qkk * old, qkk, half, alpha, tiny, lo[k],
                                   hi[k])
            if new != old:
                d = new - old
                for i in range(p):
                    g[i] += Q[i, k] * d
                w[k] = new
                change2 += d * d
        if math.sqrt(change2) < tol:
            return sweep, True
    return max_sweeps, False


@njit(cache=True)
def _cd_box_lasso_factored(Tt, inv_n, beta, w, alpha, tol, max_sweeps, active, tiny, lo,
                           hi):  # pragma: no cover
    s, m = Tt.shape
    r = np.zeros(m)  # the stacked T w
    diag = np.zeros(s)
    for j in range(s):
        acc = 0.0
        for i in range(m):
            acc += Tt[j, i] * Tt[j, i]
        diag[j] = acc * inv_n
        wj = w[j]
        if wj != 0.0:
            for i in range(m):
                r[i] += Tt[j, i] * wj
    half = 0.5 * alpha
    for sweep in range(1, max_sweeps + 1):
        change2 = 0.0
        for k in range(s):
            if not active[k]:
                continue
            qkk = diag[k]
            old = w[k]
            gk = 0.0
            for i in range(m):
                gk += Tt[k, i] * r[i]
            new = _box_soft_update(beta[k] - gk * inv_n + qkk * old, qkk, half, alpha, tiny,
                                   lo[k], hi[k])
            if new != old:
                d = new - old
                for i in range(m):
                    r[i] += Tt[k, i] * d
                w[k] = new
                change2 += d * d
        if math.sqrt(change2) < tol:
            return sweep, True
    return max_sweeps, False


def coordinate_descent(
    Q: np.ndarray,
    beta: np.ndarray,
    w0: np.ndarray,
    alpha: float,
    *,
    tol: float = 1e-6,
    max_sweeps: int = 10_000,
    active: np.ndarray | None = None,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
) -> tuple[np.ndarray, int, bool]:
    r"""Cyclic coordinate descent for :math:`\min_{w\in[-1,1]^p} w^\top Qw - 2\beta^\top w
    + \lambda\|w\|_1` (update (16)).

    Coordinate ``k``: :math:`b_k = \beta_k - \sum_{j\ne k} Q_{kj}w_j`,
    :math:`w_k \leftarrow \Pi_{[-1,1]}(S_{\lambda/2}(b_k)/Q_{kk})` with the soft threshold
    :math:`S_\tau(z) = \mathrm{sign}(z)\max(|z|-\tau, 0)` (exact: the 1-D problem is convex).
    A coordinate with :math:`Q_{kk} \le 10^{-14}\max(1, \max_j Q_{jj})` has a linear 1-D
    problem: :math:`w_k = \mathrm{sign}(b_k)` if :math:`2|b_k| > \lambda`, else 0. Inactive
    coordinates (default: :math:`w_{0k} = 0`, which the linearised kernel makes absorbing) are
    skipped. Stops when a full sweep moves :math:`w` by less than ``tol`` (Euclidean norm).
    Compiled by numba; one sweep costs O(p^2).

    Parameters
    ----------
    Q : ndarray of shape (p, p) or FactoredQ
        Symmetric positive semi-definite; a :class:`FactoredQ` (from
        :func:`quadratic_model`) runs the same update on the factor, :math:`O(nq)` per
        coordinate instead of :math:`O(p)`, on its active features (every active coordinate
        must be one of them).
    beta : ndarray of shape (p,)
    w0 : ndarray of shape (p,)
        Starting point (not modified).
    alpha : float
        :math:`\lambda \ge 0`.
    tol : float
    max_sweeps : int
    active : ndarray of bool, optional
    lower, upper : ndarray of shape (p,), optional
        Per-coordinate box (default [-1, 1]); used by the region line search of
        :func:`sparse_kos`. Each 1-D minimiser is clipped to it (exact for a convex 1-D problem).

    Returns
    -------
    w : ndarray of shape (p,)
    n_sweeps : int
    converged : bool
    """
    w = np.array(w0, dtype=np.float64, copy=True)
    act = (w != 0.0) if active is None else np.asarray(active, dtype=np.bool_)
    p = w.shape[0]
    lo = -np.ones(p) if lower is None else np.asarray(lower, dtype=np.float64)
    hi = np.ones(p) if upper is None else np.asarray(upper, dtype=np.float64)
    if isinstance(Q, FactoredQ):
        idx = Q.index
        outside = act.copy()
        outside[idx] = False
        if outside.any():
            raise ValueError("a FactoredQ holds the active features only; an active feature "
                             "outside its index has no row in the model.")
        diag = Q.diagonal()
        tiny = 1e-14 * max(1.0, float(diag.max()) if diag.size else 1.0)
        ws = np.ascontiguousarray(w[idx])
        sweeps, ok = _cd_box_lasso_factored(
            Q.Tt, 1.0 / Q.n, np.ascontiguousarray(beta[idx], dtype=np.float64), ws,
            float(alpha), float(tol), int(max_sweeps), np.ascontiguousarray(act[idx]), tiny,
            np.ascontiguousarray(lo[idx]), np.ascontiguousarray(hi[idx]),
        )
        w[idx] = ws
        return w, int(sweeps), bool(ok)
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    diag = np.diag(Q)
    tiny = 1e-14 * max(1.0, float(diag.max()) if diag.size else 1.0)
    sweeps, ok = _cd_box_lasso(
        Q, np.ascontiguousarray(beta, dtype=np.float64), w, float(alpha), float(tol),
        int(max_sweeps), act, tiny, lo, hi,
    )
    return w, int(sweeps), bool(ok)
