r"""The FISTA loop of :func:`sparsefs._kernels.group_lasso.prox_grad_working_set`, compiled.

One call runs the whole accelerated proximal-gradient loop on a dense working set of
features (Beck & Teboulle 2009, with the gradient-scheme adaptive restart of O'Donoghue &
Candès 2015): per iteration

.. math::

    Z = X W_y + \mathbf 1 b_y^\top,\quad
    W^+ = \operatorname{prox}_{s\lambda\Omega}\big(W_y - s X^\top \nabla f(Z)\big),\quad
    b^+ = b_y - s\,\mathbf 1^\top \nabla f(Z),

restart (:math:`t = 1`) when :math:`\langle W_y - W^+, W^+ - W\rangle +
\langle b_y - b^+, b^+ - b\rangle > 0`, momentum :math:`t^+ = (1 + \sqrt{1 + 4t^2})/2`,
:math:`W_y = W^+ + \frac{t - 1}{t^+}(W^+ - W)`; every ``check_every`` iterations the
objective is recorded and the loop stops when the largest KKT residual of the working-set
problem is at most ``tol_abs``. The arithmetic is that of the numpy loop
(:func:`sparsefs._kernels.group_lasso._fista_numpy`, kept as the reference): the same formulas
in the same order element by element. Only the order of the sums inside the two matrix products and
the reductions differs (BLAS and numpy's pairwise sums against sequential sums here), so the
iterates agree to rounding (~1e-15 relative per iteration), and the iteration counts agree
except where a KKT residual lies within rounding of the tolerance.

Why compiled: the numpy loop is ~15 array calls per iteration on arrays of a few thousand
entries (n x |working set| x K); their fixed cost (~30 us per iteration) was 35-41 % of a
default ``LassoSelector`` fit (issue #33). Here one call per working set does all
iterations; the cost left is the two passes over the working set's columns per iteration.

Layout: ``X`` (n x m) and its transpose ``Xt`` (m x n), both C-contiguous, so that both
products are ``axpy`` loops over contiguous rows (vectorised without reordering any sum):
:math:`Z_{k\cdot} \mathrel{+}= w_{jk} X^\top_{j\cdot}` and :math:`G_{k\cdot} \mathrel{+}=
\partial Z_{ki}\, X_{i\cdot}`; :math:`Z`, :math:`\nabla f` and :math:`G` are stored
class-major (K x n, K x m).

The problem is that of the lasso and elastic-net selectors: the multinomial logistic loss
:math:`f(Z) = \frac1n\sum_i[\log\sum_k e^{z_{ik}} - z_{i y_i}]` (shifted by the row
maximum) and the elastic net :math:`\lambda(\rho\|W\|_1 + \frac{1-\rho}2\|W\|_F^2)`
(prox: soft-thresholding by :math:`s\lambda\rho`, then division by
:math:`1 + s\lambda(1-\rho)`). The l2,1 selectors keep the numpy loop: each further data fit
or penalty compiled here costs first-use compilation time (issue #33 allows 2 s per method,
numba's own start-up included; this kernel takes ~1.3 s on a quiet machine).
No parallel loops (the thread policy of :mod:`sparsefs._kernels.threads`): one thread, GIL
released; nothing allocated inside (numpy's allocation routines would be compiled with it).
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["fista_multinomial_enet", "work_arrays"]


def work_arrays(n: int, m: int, c: int) -> tuple:
    """Scratch for :func:`fista_multinomial_enet` on n samples, m features, c classes:
    ``(Wy, W_new, by, b_new, Z, dZ, G)``."""
    e = np.empty
    return e((m, c)), e((m, c)), e(c), e(c), e((c, n)), e((c, n)), e((c, m))


@numba.njit(cache=True, nogil=True)
def _linear(Xt, W, b, Z):  # pragma: no cover - compiled
    """Z (K x n) = (X W + 1 b^T)^T from Xt (m x n)."""
    m, n = Xt.shape
    for k in range(Z.shape[0]):
        zk = Z[k]
        bk = b[k]
        for i in range(n):
            zk[i] = 0.0
        for j in range(m):
            w = W[j, k]
            if w != 0.0:  # rows outside the model cost nothing
                xj = Xt[j]
                for i in range(n):
                    zk[i] += w * xj[i]
        for i in range(n):
            zk[i] += bk


@numba.njit(cache=True, nogil=True)
def _gradient(X, dZ, G):  # pragma: no cover - compiled
    """G (K x m) = (X^T dZ^T)^T: G[k, j] = sum_i X[i, j] dZ[k, i], summed over i in order."""
    n, m = X.shape
    for k in range(G.shape[0]):
        gk = G[k]
        for j in range(m):
            gk[j] = 0.0
        for i in range(n):
            d = dZ[k, i]
            xi = X[i]
            for j in range(m):
                gk[j] += d * xi[j]


@numba.njit(cache=True, nogil=True)
def _softmax_grad(Z, Y, dZ):  # pragma: no cover - compiled
    """dZ (K x n) = (softmax(Z) - Y^T) / n, the gradient of the multinomial loss in Z."""
    c, n = Z.shape
    for i in range(n):
        top = Z[0, i]
        for k in range(1, c):
            top = max(top, Z[k, i])
        total = 0.0
        for k in range(c):
            e = math.exp(Z[k, i] - top)
            dZ[k, i] = e
            total += e
        for k in range(c):
            dZ[k, i] = (dZ[k, i] / total - Y[i, k]) / n


@numba.njit(cache=True, nogil=True)
def _multinomial_value(Z, Y):  # pragma: no cover - compiled
    """The multinomial loss at Z (K x n), as ``Multinomial.value_grad`` computes it."""
    c, n = Z.shape
    lse = 0.0
    zy = 0.0
    for i in range(n):
        top = Z[0, i]
        for k in range(1, c):
            top = max(top, Z[k, i])
        total = 0.0
        for k in range(c):
            total += math.exp(Z[k, i] - top)
        lse += math.log(total) + top
        for k in range(c):
            zy += Z[k, i] * Y[i, k]
    return (lse - zy) / n


@numba.njit(cache=True, nogil=True)
def _penalty_kkt(W, G, dZ, lam, rho):  # pragma: no cover - compiled
    """The elastic-net penalty of W (m x K) and the largest KKT residual of the problem
    (``ElasticNetPenalty.value`` / ``row_violation``, and the intercept's ``|1^T dZ|``), from
    the gradient G (K x m) and dZ (K x n)."""
    m, c = W.shape
    l1 = 0.0
    l2 = 0.0
    worst = 0.0
    for j in range(m):
        for k in range(c):
            w = W[j, k]
            g = G[k, j]
            l1 += abs(w)
            l2 += w * w
            if w != 0.0:
                r = abs(g + lam * (1 - rho) * w + lam * rho * (1.0 if w > 0.0 else -1.0))
            else:
                r = max(abs(g) - lam * rho, 0.0)
            worst = max(worst, r)
    for k in range(c):
        s = 0.0
        for i in range(dZ.shape[1]):
            s += dZ[k, i]
        worst = max(worst, abs(s))
    return lam * (rho * l1 + 0.5 * (1 - rho) * l2), worst


@numba.njit(cache=True, nogil=True)
def fista_multinomial_enet(X, Xt, Y, W, b, lam, rho, step, max_iter, tol_abs, check_every,
                           history, work):  # pragma: no cover - compiled
    """FISTA with adaptive restart on a dense working set (intercept fitted); updates ``W``
    (m x K) and ``b`` (K) in place.

    Parameters
    ----------
    X, Xt : ndarray (n x m) and its transpose (m x n), C-contiguous float64
    Y : ndarray (n x K)
        One-hot labels.
    W, b : ndarray (m x K), (K,)
        The start; overwritten by the last iterate.
    lam, rho, step : float
        Penalty lambda, l1 share rho, step 1/L.
    max_iter, check_every : int
    tol_abs : float
        Stop when the largest KKT residual (every entry of W and the intercept) is at most
        this, checked every ``check_every`` iterations and at the last.
    history : ndarray of at least ``max_iter // check_every + 1`` entries
        Receives the objective at each check.
    work : tuple
        Scratch arrays from :func:`work_arrays`.

    Returns
    -------
    n_iter : int
    converged : bool
    n_history : int
        Entries written to ``history``.
    """
    n, m = X.shape
    c = Y.shape[1]
    Wy, W_new, by, b_new, Z, dZ, G = work
    for j in range(m):
        for k in range(c):
            Wy[j, k] = W[j, k]
    for k in range(c):
        by[k] = b[k]
    step_lam = step * lam
    thr = step_lam * rho
    shrink = 1.0 + step_lam * (1 - rho)
    t = 1.0
    it = 0
    n_hist = 0
    converged = False
    for it in range(1, max_iter + 1):
        _linear(Xt, Wy, by, Z)
        _softmax_grad(Z, Y, dZ)
        _gradient(X, dZ, G)
        # gradient step and prox (numpy: sign(v) max(|v| - s lam rho, 0) / (1 + s lam (1-rho)))
        restart_w = 0.0
        for j in range(m):
            for k in range(c):
                v = G[k, j] * -step + Wy[j, k]
                sign = 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)
                wn = sign * max(abs(v) - thr, 0.0) / shrink
                W_new[j, k] = wn
                restart_w += (Wy[j, k] - wn) * (wn - W[j, k])
        restart_b = 0.0
        for k in range(c):
            s = 0.0
            for i in range(n):
                s += dZ[k, i]
            b_new[k] = by[k] - step * s
            restart_b += (by[k] - b_new[k]) * (b_new[k] - b[k])
        # adaptive restart (gradient scheme): momentum is dropped when it points uphill
        if restart_w + restart_b > 0.0:
            t = 1.0
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        beta = (t - 1.0) / t_new
        for j in range(m):
            for k in range(c):
                Wy[j, k] = W_new[j, k] + beta * (W_new[j, k] - W[j, k])
                W[j, k] = W_new[j, k]
        for k in range(c):
            by[k] = b_new[k] + beta * (b_new[k] - b[k])
            b[k] = b_new[k]
        t = t_new
        if it % check_every == 0 or it == max_iter:
            _linear(Xt, W, b, Z)
            value = _multinomial_value(Z, Y)
            _softmax_grad(Z, Y, dZ)
            _gradient(X, dZ, G)
            penalty, worst = _penalty_kkt(W, G, dZ, lam, rho)
            history[n_hist] = value + penalty
            n_hist += 1
            if worst <= tol_abs:
                converged = True
                break
    return it, converged, n_hist
