r"""The l2,1 (row-group) penalty, the smooth data fits and the solvers: the shared layer.

One home for the row-sparse problems

.. math::

    \min_{W,\, b}\ f(XW + \mathbf{1} b^\top) + \lambda\|W\|_{2,1},
    \qquad \|W\|_{2,1} = \sum_j\|w^j\|_2,

of the l2,1 selectors (:mod:`sparsefs._kernels.ls_l21`, :mod:`~sparsefs._kernels.ll_l21`,
:mod:`~sparsefs._kernels.rfs`, the l1 / elastic-net logistic paths of
:mod:`~sparsefs._kernels.lasso`, with the design preparation of :mod:`sparsefs._kernels.l21`)
and of SMBA (:mod:`sparsefs._kernels.smba` and its ``smba_*`` modules), in skglm's datafit /
penalty / solver split:

* **penalty** - :func:`row_norms`, :func:`l21_norm` (the value), :func:`group_soft_threshold`
  (the prox), and :class:`GroupL21Penalty`, which bundles value, prox, the scale
  :math:`\lambda_{max}` and the subdifferential distance of every row
  (:meth:`GroupL21Penalty.row_violation`, the KKT residual); the elastic-net penalty of
  :mod:`sparsefs._kernels.elastic_net` has the same interface;
* **data fits** - :class:`LeastSquares` and :class:`Multinomial` (value, gradient, curvature
  bound, the optimal intercept at W = 0);
* **solvers** - for the multi-task least-squares group lasso
  :math:`\min_B \tfrac12\|T - AB\|_F^2 + \lambda\|B\|_{2,1}` (SMBA): its duality gap
  (:func:`group_lasso_gap`) and block coordinate descent on a growing working set
  (:func:`group_lasso_bcd`, celer's working-set rule and Anderson extrapolation); for any data
  fit and penalty (the l2,1 selectors): accelerated proximal gradient on a growing working set
  (:func:`prox_grad_working_set`, FISTA with adaptive restart, its curvature from
  :func:`lipschitz_bound`; the lasso's dense loop compiled in :mod:`sparsefs._kernels.fista`);
  and the reweighted least-squares step of RFS solved in the smaller dimension
  (:func:`irls_l21_step`).

Designs are dense arrays or the implicitly centred sparse operator
(:class:`~sparsefs._kernels.centered.CenteredSparse`: products, column selection, Gram
matrices; never densified). Method kernels take these pieces from here and never from one another.

References
----------
M. Massias, A. Gramfort, J. Salmon, "Celer: a fast solver for the Lasso with dual
extrapolation", ICML 2018. Q. Bertrand, Q. Klopfenstein, P.-A. Bannier, G. Gidel, M. Massias,
"Beyond L1: faster and better sparse models with skglm", NeurIPS 2022. A. Beck, M. Teboulle,
"A fast iterative shrinkage-thresholding algorithm for linear inverse problems", SIAM J.
Imaging Sci. 2009; B. O'Donoghue, E. Candès, "Adaptive restart for accelerated gradient
schemes", Found. Comput. Math. 2015.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
import scipy.sparse.linalg as spla
from numba import njit

from sparsefs._kernels import fista as _fista_kernel
from sparsefs._kernels import threads as _threads
from sparsefs._kernels.centered import CenteredSparse
from sparsefs._kernels.elastic_net import ElasticNetPenalty

__all__ = [
    "FISTA_ENGINES",
    "GroupL21Penalty",
    "LeastSquares",
    "Multinomial",
    "ProxGradResult",
    "group_lasso_bcd",
    "group_lasso_gap",
    "group_soft_threshold",
    "irls_l21_step",
    "l21_norm",
    "lipschitz_bound",
    "nonzero_rows",
    "prox_grad_working_set",
    "row_norms",
]


# --------------------------------------------------------------------------------------------
# the penalty: value, prox, subdifferential distance
# --------------------------------------------------------------------------------------------


def row_norms(W: np.ndarray, *, safe: bool = True) -> np.ndarray:
    """Euclidean norm of every row of a 2-D array (``|w|`` for a 1-D array).

    ``safe=True`` scales every row by its largest entry first (no overflow of the squares for
    huge entries, no underflow for tiny ones); ``safe=False`` is the plain
    ``sqrt(sum of squares)``, for data already scaled to a safe range (SMBA rescales X by a
    power of two), half the passes.
    """
    W = np.asarray(W)
    if W.ndim == 1:
        return np.abs(W)
    if not safe:
        return np.sqrt(np.einsum("ij,ij->i", W, W))
    # scaled to avoid overflow of the squares for huge entries
    scale = np.abs(W).max(axis=1) if W.shape[1] else np.zeros(W.shape[0])
    out = np.zeros(W.shape[0])
    nz = scale > 0
    out[nz] = scale[nz] * np.sqrt(np.einsum("ij,ij->i", W[nz] / scale[nz, None],
                                            W[nz] / scale[nz, None]))
    return out


def nonzero_rows(W: np.ndarray) -> np.ndarray:
    """Boolean mask of the rows of a 2-D array with a nonzero entry (``row_norms(W) > 0``),
    column by column: a reduction over a short last axis costs numpy ~10x more per entry,
    and the solvers ask this of a d x K coefficient matrix at every working set."""
    W = np.asarray(W)
    if W.ndim == 1:
        return W != 0
    out = np.zeros(W.shape[0], dtype=bool)
    for k in range(W.shape[1]):
        out |= W[:, k] != 0
    return out


def l21_norm(W: np.ndarray, *, safe: bool = True) -> float:
    r""":math:`\|W\|_{2,1} = \sum_j \|w^j\|_2`, the sum of the row norms (``safe``: see
    :func:`row_norms`)."""
    return float(row_norms(W, safe=safe).sum())


def group_soft_threshold(
    V: np.ndarray,
    threshold: float | np.ndarray,
    *,
    out: np.ndarray | None = None,
    norms: np.ndarray | None = None,
) -> np.ndarray:
    r"""Proximal operator of :math:`t\|\cdot\|_{2,1}`: each row shrunk towards 0 by ``t``.

    .. math:: \operatorname{prox}(V)^j = \max\!\left(0, 1 - t / \|v^j\|_2\right) v^j .

    Rows with norm at most ``t`` become exactly zero. ``norms``: the row norms of V if the
    caller has them (:func:`row_norms` otherwise); ``out``: where to write (may be V).
    """
    if norms is None:
        norms = row_norms(V)
    # t / norm overflows only for norms far below t, whose rows np.where zeroes anyway
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        factor = np.where(norms > threshold, 1.0 - threshold / norms, 0.0)
    return np.multiply(V, factor[:, None], out=out)


class GroupL21Penalty:
    r"""Row-sparse penalty :math:`\lambda \|W\|_{2,1}` (ls-l21, ll-l21).

    Optimality (KKT) at a solution, with :math:`G = \nabla_W f`:
    :math:`G^j + \lambda w^j/\|w^j\| = 0` on nonzero rows and :math:`\|G^j\| \le \lambda` on zero
    rows. A zero row enters the model when :math:`\|G^j\|` reaches :math:`\lambda`, so
    :math:`\|G^j\|/\lambda - 1 \in [-1, 0]` measures how close it is to entering.
    :meth:`row_violation` is the distance of :math:`-G^j` to the subdifferential
    :math:`\lambda\,\partial\|w^j\|_2` (0 exactly at a solution).
    """

    name = "l21"

    def value(self, W: np.ndarray, lam: float) -> float:
        return lam * l21_norm(W)

    def prox(self, V: np.ndarray, step_lam: float) -> np.ndarray:
        return group_soft_threshold(V, step_lam)

    def lam_max(self, G0: np.ndarray) -> float:
        """Smallest penalty with W = 0 optimal, from the gradient at W = 0."""
        return float(row_norms(G0).max(initial=0.0))

    def row_violation(self, W: np.ndarray, G: np.ndarray, lam: float) -> np.ndarray:
        """Per-row KKT residual (0 at an exact solution)."""
        norms = row_norms(W)
        out = np.maximum(row_norms(G) - lam, 0.0)
        nz = norms > 0
        if nz.any():
            out[nz] = row_norms(G[nz] + lam * W[nz] / norms[nz, None])
        return out

    def entry_closeness(self, G: np.ndarray, lam: float) -> np.ndarray:
        """``||G_j|| / lam - 1`` for every row (in [-1, 0] on zero rows at a solution)."""
        return row_norms(G) / lam - 1.0

# --------------------------------------------------------------------------------------------
# the least-squares multi-task group lasso: duality gap, block coordinate descent
# --------------------------------------------------------------------------------------------


@njit(cache=True)
def _bcd_sweep(At, B, R, lip, lam, groups, g, v):  # pragma: no cover - compiled
    """One cyclic pass of exact group updates over ``groups``, in place.

    For the group lasso :math:`\\min_B \\tfrac12\\|T - AB\\|^2 + \\lambda\\sum_i\\|b^i\\|` with
    ``At = A^T`` (M x p, row i = :math:`a_i`), ``B`` (M x k) and the residual ``R = T - AB``
    (p x k): :math:`b^i \\leftarrow \\operatorname{shrink}(b^i + a_i^\\top R/L_i,
    \\lambda/L_i)`, :math:`L_i = \\|a_i\\|^2`, then :math:`R \\mathrel{-}= a_i (\\Delta b^i)^\\top`.
    Returns the largest :math:`\\|\\Delta b^i\\|`.
    """
    p, k = R.shape
    biggest = 0.0
    for i in groups:
        L = lip[i]
        if L <= 0.0:
            continue
        for t in range(k):
            g[t] = 0.0
        for j in range(p):
            a = At[i, j]
            if a != 0.0:
                for t in range(k):
                    g[t] += a * R[j, t]
        nrm = 0.0
        for t in range(k):
            v[t] = B[i, t] + g[t] / L
            nrm += v[t] * v[t]
        nrm = np.sqrt(nrm)
        thr = lam / L
        f = 1.0 - thr / nrm if nrm > thr else 0.0
        dn = 0.0
        for t in range(k):
            d = f * v[t] - B[i, t]
            g[t] = d
            dn += d * d
        if dn == 0.0:
            continue
        if dn > biggest:
            biggest = dn
        for t in range(k):
            B[i, t] += g[t]
        for j in range(p):
            a = At[i, j]
            if a != 0.0:
                for t in range(k):
                    R[j, t] -= a * g[t]
    return np.sqrt(biggest)


def group_lasso_gap(At_S, B_S, R, lam):
    r"""Duality gap of the group lasso restricted to the groups S (B zero elsewhere).

    The dual of :math:`\min_B \tfrac12\|T - AB\|^2 + \lambda\sum_i\|b^i\|` is
    :math:`\max_\Theta \tfrac12\|T\|^2 - \tfrac12\|T - \lambda\Theta\|^2` s.t.
    :math:`\|a_i^\top\Theta\|_2 \le 1` for all i; the residual rescaled into the feasible set,
    :math:`\Theta = R/\max(\lambda, \max_i\|a_i^\top R\|)`, gives (with
    :math:`\theta = \lambda/\max(\lambda, \max_i \|g_i\|)`, :math:`g_i = a_i^\top R` and
    :math:`T = R + AB`) the gap
    :math:`\tfrac12(1-\theta)^2\|R\|^2 + \sum_i(\lambda\|b^i\| - \theta\langle b^i, g_i\rangle)`,
    a sum of non-negative terms (no cancellation near the optimum).

    Returns (gap, primal, g norms over S, G = A_S^T R).
    """
    G = At_S @ R
    gn = row_norms(G, safe=False)
    rr = float(np.einsum("ij,ij->", R, R))
    theta = lam / max(lam, float(gn.max(initial=0.0)))
    pen = lam * l21_norm(B_S, safe=False)
    gap = 0.5 * (1.0 - theta) ** 2 * rr + pen - theta * float(np.einsum("ij,ij->", B_S, G))
    return max(gap, 0.0), 0.5 * rr + pen, gn, G


def _anderson_step(last, At_ws, T, B, R, ws, lam):
    """Anderson extrapolation of the last K+1 working-set iterates (kept if it lowers the
    objective); updates B and R in place. Returns whether it was accepted."""
    Xs = np.stack([b.ravel() for b in last])
    D = np.diff(Xs, axis=0)
    DD = D @ D.T
    K = DD.shape[0]
    try:
        c = np.linalg.solve(DD + 1e-14 * np.trace(DD) * np.eye(K), np.ones(K))
    except np.linalg.LinAlgError:  # pragma: no cover - singular after regularisation
        return False
    if not np.all(np.isfinite(c)) or c.sum() == 0.0:
        return False
    c /= c.sum()
    B_acc = (c @ Xs[1:]).reshape(last[-1].shape)
    R_acc = T - At_ws.T @ B_acc
    B_ws = last[-1]
    obj = 0.5 * float(np.einsum("ij,ij->", R, R)) + lam * l21_norm(B_ws, safe=False)
    obj_acc = 0.5 * float(np.einsum("ij,ij->", R_acc, R_acc)) + lam * l21_norm(B_acc,
                                                                              safe=False)
    if obj_acc < obj:
        B[ws] = B_acc
        R[...] = R_acc
        return True
    return False


def group_lasso_bcd(
    At: np.ndarray,
    T: np.ndarray,
    lam: float,
    *,
    B: np.ndarray | None = None,
    tol: float = 1e-10,
    max_sweeps: int = 3000,
    ws_size: int | None = None,
    check_every: int = 1,
    anderson: int = 5,
) -> dict:
    r"""Multi-task group lasso by block coordinate descent on a growing working set.

    .. math::

        \min_{B \in \mathbb R^{M\times k}}\ \tfrac12\|T - AB\|_F^2 + \lambda\sum_{i=1}^M\|b^i\|_2,
        \qquad A \in \mathbb R^{p \times M},\ T \in \mathbb R^{p\times k}.

    Each outer step computes the full duality gap (:func:`group_lasso_gap`, one GEMM of
    :math:`O(Mpk)`); if it exceeds ``tol`` the working set becomes the support plus the groups
    closest to their dual constraint, :math:`(1 - \|a_i^\top\Theta\|)/\|a_i\|` smallest
    (celer's rule; its size doubles every outer step), and exact group updates
    (:func:`_bcd_sweep`, :math:`4pk` flops per group) run on it until its own gap is at most
    0.3 times the full gap (checked every ``check_every`` sweeps).

    Parameters
    ----------
    At : ndarray of shape (M, p), C-contiguous
        :math:`A^\top` (row i is the group's column :math:`a_i`).
    T : ndarray of shape (p, k)
    lam : float > 0
    B : ndarray of shape (M, k), optional
        Warm start (updated in place).
    tol : float
        Absolute duality gap to reach.
    max_sweeps : int
        Total sweeps (over the working sets) allowed.
    ws_size : int, optional
        First working-set size (default: twice the support, at least 2p, at most M).
    check_every : int
    anderson : int
        Every ``anderson + 1`` sweeps, the Anderson extrapolation of the last iterates (on
        the working set) replaces B when it lowers the objective (0: off).

    Returns
    -------
    dict
        ``coef`` (B), ``residual`` (R = T - AB), ``grad_norms`` (:math:`\|a_i^\top R\|`),
        ``gap`` (full gap at the end), ``n_sweeps``, ``converged``, ``gaps`` (the working-set
        problem's gap after each checked sweep; the full gap after the last sweep of each
        working set), ``ws_size``.
    """
    M, p = At.shape
    k = T.shape[1]
    B = np.zeros((M, k)) if B is None else B
    lip = np.einsum("ij,ij->i", At, At)
    g = np.empty(k)
    v = np.empty(k)
    gaps: list[float] = []
    n_sweeps = 0
    converged = False
    size = ws_size
    while True:
        R = T - At.T @ B  # fresh residual (no drift)
        gap, _, gn, _ = group_lasso_gap(At, B, R, lam)
        if gaps:
            gaps[-1] = gap  # the full problem's gap at the last sweep's iterate
        if gap <= tol:
            converged = True
            break
        if n_sweeps >= max_sweeps:
            break
        support = row_norms(B, safe=False) > 0
        nsup = int(support.sum())
        size = max(2 * nsup, 2 * p, 1) if size is None else max(2 * size, 2 * nsup)
        size = min(size, M)
        s = max(lam, float(gn.max(initial=0.0)))
        with np.errstate(divide="ignore", invalid="ignore"):
            prio = np.where(lip > 0, (1.0 - gn / s) / np.sqrt(lip), np.inf)
        prio[support] = -np.inf
        ws = np.argpartition(prio, size - 1)[:size] if size < M else np.arange(M)
        ws = np.sort(ws[np.isfinite(prio[ws]) | support[ws]]).astype(np.int64)
        if ws.size == 0:  # pragma: no cover - every column zero
            break
        At_ws = np.ascontiguousarray(At[ws])
        target = max(0.3 * gap, tol)
        inner = 0
        last: list[np.ndarray] = []
        while n_sweeps < max_sweeps:
            _bcd_sweep(At, B, R, lip, lam, ws, g, v)
            n_sweeps += 1
            inner += 1
            if anderson:
                last.append(B[ws])
                if len(last) == anderson + 1:
                    _anderson_step(last, At_ws, T, B, R, ws, lam)
                    last = []
            if inner % check_every == 0:
                ws_gap, _, _, _ = group_lasso_gap(At_ws, B[ws], R, lam)
                gaps.append(ws_gap)
                if ws_gap <= target:
                    break
    return {"coef": B, "residual": R, "grad_norms": gn, "gap": gap,
            "n_sweeps": n_sweeps, "converged": converged, "gaps": np.asarray(gaps),
            "ws_size": size}


# --------------------------------------------------------------------------------------------
# smooth data fits f(Z), Z = XW + 1 b^T; averaged over the samples
# --------------------------------------------------------------------------------------------


class LeastSquares:
    r""":math:`f(Z) = \frac{1}{2n}\|Y - Z\|_F^2`; curvature bound :math:`1/n`."""

    name = "least_squares"

    def value_grad(self, Z: np.ndarray, Y: np.ndarray) -> tuple[float, np.ndarray]:
        R = Z - Y
        n = Y.shape[0]
        return 0.5 * float((R * R).sum()) / n, R / n

    def grad(self, Z: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """The gradient alone (the solver's inner iterations)."""
        R = Z - Y
        R /= Y.shape[0]
        return R

    def curvature(self, n_samples: int) -> float:
        return 1.0 / n_samples

    def intercept_at_zero(self, Y: np.ndarray) -> np.ndarray:
        return Y.mean(axis=0)


class Multinomial:
    r"""Multinomial logistic loss :math:`f(Z) = \frac1n\sum_i [\log\sum_k e^{z_{ik}} - z_{i,y_i}]`
    for one-hot ``Y``; the Hessian in Z is bounded by :math:`\frac{1}{2n} I` (Böhning 1992)."""

    name = "multinomial"

    def value_grad(self, Z: np.ndarray, Y: np.ndarray) -> tuple[float, np.ndarray]:
        n = Y.shape[0]
        # the log-sum-exp in numpy (shifted by the row maximum, as scipy's): this runs once
        # per solver iteration, and scipy.special.logsumexp costs ~10x more in call overhead
        # than the sum itself at these sizes (issue #33); the shifted exponentials give the
        # softmax without a second exp
        top = Z.max(axis=1, keepdims=True)
        E = np.exp(Z - top)
        total = E.sum(axis=1, keepdims=True)
        value = float((np.log(total) + top).sum() - (Z * Y).sum()) / n
        E /= total
        E -= Y
        E /= n
        return value, E

    def grad(self, Z: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """The gradient alone (the solver's inner iterations): the same arithmetic as
        :meth:`value_grad`'s."""
        E = Z - Z.max(axis=1, keepdims=True)
        np.exp(E, out=E)
        E /= E.sum(axis=1, keepdims=True)
        E -= Y
        E /= Y.shape[0]
        return E

    def curvature(self, n_samples: int) -> float:
        return 0.5 / n_samples

    def intercept_at_zero(self, Y: np.ndarray) -> np.ndarray:
        prior = Y.mean(axis=0)
        with np.errstate(divide="ignore"):
            b = np.log(prior)
        return b - b[np.isfinite(b)].mean()


#: sparse designs whose smaller Gram matrix has at most this order form it (else Lanczos)
_SMALL_GRAM = 2000


def lipschitz_bound(X: np.ndarray, curvature: float, fit_intercept: bool) -> float:
    r"""Lipschitz constant of :math:`(W, b) \mapsto \nabla f(XW + 1b^\top)`:
    ``curvature * sigma_max([X, 1])**2``, the largest singular value from the smaller Gram
    matrix."""
    n, d = X.shape
    if d == 0:
        return curvature * (n if fit_intercept else 1.0)
    if isinstance(X, CenteredSparse):
        # the smaller Gram matrix of [X, 1] from sparse products (as for dense X below) when
        # it is small; else the top eigenvalue by Lanczos on A^T A, matrix-free
        c = 1 if fit_intercept else 0
        if min(n, d + c) <= _SMALL_GRAM:
            if n <= d + c:
                gram = X.row_gram() + float(c)
            else:
                gram, ones = X.col_gram(), X.col_sums()
                if c:
                    gram = np.block([[gram, ones[:, None]], [ones[None, :], np.full((1, 1), n)]])
            top = float(la.eigvalsh(gram, subset_by_index=[gram.shape[0] - 1] * 2)[0])
        else:
            def normal(v):
                u = X @ v[:d] + (v[d] if c else 0.0)
                return np.concatenate([X.T @ u, [u.sum()]]) if c else X.T @ u

            op = spla.LinearOperator((d + c, d + c), matvec=normal, dtype=np.float64)
            top = float(spla.eigsh(op, k=1, which="LA", tol=0, v0=np.ones(d + c),
                                   return_eigenvectors=False)[0]) * (1.0 + 1e-8)
        return curvature * max(top, 1e-300) * (1.0 + 1e-10)
    A = np.column_stack([X, np.ones(n)]) if fit_intercept else X
    gram = A @ A.T if A.shape[0] <= A.shape[1] else A.T @ A
    top = float(la.eigvalsh(gram, subset_by_index=[gram.shape[0] - 1, gram.shape[0] - 1])[0])
    return curvature * max(top, 1e-300) * (1.0 + 1e-10)


# --------------------------------------------------------------------------------------------
# proximal gradient on a working set
# --------------------------------------------------------------------------------------------


@dataclass
class ProxGradResult:
    """Outcome of :func:`prox_grad_working_set`.

    Attributes
    ----------
    coef : ndarray of shape (n_features, n_outputs)
    intercept : ndarray of shape (n_outputs,)
    grad : ndarray of shape (n_features, n_outputs)
        Gradient of the data fit in ``coef`` at the solution (all rows).
    n_iter : int
        Proximal-gradient iterations (all working sets together).
    converged : bool
    objective : ndarray
        Objective (data fit + penalty) after each iteration.
    kkt : float
        Largest KKT residual of the full problem at the returned point, relative to ``scale``.
    """

    coef: np.ndarray
    intercept: np.ndarray
    grad: np.ndarray
    n_iter: int
    converged: bool
    objective: np.ndarray
    kkt: float

    @classmethod
    def at_zero(cls, X: np.ndarray, Y: np.ndarray, datafit) -> ProxGradResult:
        r"""The exact solution W = 0 (any :math:`\lambda \ge \lambda_{max}`): the optimal
        intercept at W = 0, its data fit and the gradient :math:`X^\top \nabla f` (the dual norm
        of which is :math:`\lambda_{max}`; the scores of a fit that selects nothing)."""
        b0 = datafit.intercept_at_zero(Y)
        value, dZ = datafit.value_grad(np.broadcast_to(b0, Y.shape), Y)
        return cls(np.zeros((X.shape[1], Y.shape[1])), b0, X.T @ dZ, 0, True,
                   np.array([value]), 0.0)


#: the FISTA loops: "auto" (the compiled kernel where it applies, see :func:`_fista`),
#: "compiled" (that kernel; an error where it does not apply), "numpy" (the reference loop)
FISTA_ENGINES = ("auto", "compiled", "numpy")


def _compiled_applies(X, datafit, penalty, n_outputs: int, fit_intercept: bool,
                      engine: str) -> bool:
    """Whether :func:`_fista` runs the compiled loop for this working set."""
    if engine not in FISTA_ENGINES:
        raise ValueError(f"engine must be one of {FISTA_ENGINES}, got {engine!r}.")
    if engine == "numpy":
        return False
    known = (isinstance(X, np.ndarray) and type(datafit) is Multinomial
             and type(penalty) is ElasticNetPenalty and fit_intercept)
    if engine == "compiled":
        if not known:
            raise ValueError("the compiled FISTA loop takes a dense design, the Multinomial "
                             "data fit, the elastic-net penalty and an intercept.")
        return True
    if not known:
        return False
    # products big enough for threaded BLAS (threads.plan's rule) keep numpy's loop when the
    # plan in force gives BLAS more than one thread: the compiled loop runs on one
    flops = 2.0 * X.shape[0] * X.shape[1] * n_outputs
    if flops >= _threads.MIN_BLAS_FLOPS:
        plan = _threads.current_plan()
        blas = _threads.available_cpus() if plan is None else plan.blas
        return blas <= 1
    return True


def _fista(X, Y, datafit, penalty, lam, W, b, *, fit_intercept, max_iter, tol_abs, history,
           check_every=10, engine="auto"):
    """FISTA with adaptive restart on the columns of X; returns (W, b, n_iter, converged).

    ``engine="auto"`` runs the whole loop as one compiled kernel
    (:func:`sparsefs._kernels.fista.fista_multinomial_enet`: a dense X, the multinomial loss,
    the elastic-net penalty, an intercept: the lasso and elastic-net selectors) unless one
    product of the loop is large enough for threaded BLAS
    (:data:`sparsefs._kernels.threads.MIN_BLAS_FLOPS`) and the thread plan gives BLAS more
    than one thread. Otherwise, and with ``engine="numpy"``, the numpy loop
    (:func:`_fista_numpy`, the reference: the same iterates to rounding).
    """
    if not _compiled_applies(X, datafit, penalty, Y.shape[1], fit_intercept, engine):
        return _fista_numpy(X, Y, datafit, penalty, lam, W, b, fit_intercept=fit_intercept,
                            max_iter=max_iter, tol_abs=tol_abs, history=history,
                            check_every=check_every)
    n, m = X.shape
    c = Y.shape[1]
    step = 1.0 / lipschitz_bound(X, datafit.curvature(n), fit_intercept)
    X = np.ascontiguousarray(X, dtype=np.float64)
    W = np.array(W, dtype=np.float64, order="C")  # updated in place by the kernel
    b = np.array(b, dtype=np.float64)
    hist = np.empty(max(int(max_iter), 0) // check_every + 1)
    it, converged, n_hist = _fista_kernel.fista_multinomial_enet(
        X, np.ascontiguousarray(X.T), np.ascontiguousarray(Y, dtype=np.float64), W, b,
        float(lam), float(penalty.l1_ratio), float(step), int(max_iter), float(tol_abs),
        int(check_every), hist, _fista_kernel.work_arrays(n, m, c))
    history.extend(hist[:n_hist].tolist())
    return W, b, int(it), bool(converged)


def _fista_numpy(X, Y, datafit, penalty, lam, W, b, *, fit_intercept, max_iter, tol_abs,
                 history, check_every=10):
    """The FISTA loop in numpy (any design, data fit and penalty with this module's
    interface): the reference for the compiled loop."""
    n = X.shape[0]
    L = lipschitz_bound(X, datafit.curvature(n), fit_intercept)
    step = 1.0 / L
    Wy, by = W.copy(), b.copy()
    t = 1.0
    converged = False
    it = 0
    # one iteration is ~15 numpy calls on small arrays: the gradient alone (no objective),
    # ndarray methods rather than the np.* wrappers (the same reductions, less call overhead)
    for it in range(1, max_iter + 1):
        Z = X @ Wy
        Z += by
        dZ = datafit.grad(Z, Y)
        G = X.T @ dZ
        G *= -step
        G += Wy
        W_new = penalty.prox(G, step * lam)
        b_new = by - step * dZ.sum(axis=0) if fit_intercept else b
        # adaptive restart (gradient scheme): momentum is dropped when it points uphill
        if ((Wy - W_new) * (W_new - W)).sum() + ((by - b_new) * (b_new - b)).sum() > 0:
            t = 1.0
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        beta = (t - 1.0) / t_new
        Wy = W_new + beta * (W_new - W)
        by = b_new + beta * (b_new - b) if fit_intercept else b_new
        W, b, t = W_new, b_new, t_new
        if it % check_every == 0 or it == max_iter:
            value, dZ = datafit.value_grad(X @ W + b, Y)
            history.append(value + penalty.value(W, lam))
            G = X.T @ dZ
            viol = penalty.row_violation(W, G, lam).max(initial=0.0)
            if fit_intercept:
                viol = max(viol, float(np.abs(dZ.sum(axis=0)).max()))
            if viol <= tol_abs:
                converged = True
                break
    return W, b, it, converged


def prox_grad_working_set(
    X: np.ndarray,
    Y: np.ndarray,
    datafit,
    penalty,
    lam: float,
    *,
    coef0: np.ndarray | None = None,
    intercept0: np.ndarray | None = None,
    fit_intercept: bool = True,
    max_iter: int = 1000,
    tol: float = 1e-4,
    scale: float = 1.0,
    initial_size: int = 16,
    engine: str = "auto",
) -> ProxGradResult:
    r"""Minimise :math:`f(XW + 1b^\top) + \lambda\Omega(W)` by proximal gradient on working sets.

    The solver keeps a working set of rows (features): those nonzero in the warm start plus the
    worst KKT violators. It solves the problem restricted to them with FISTA, checks the KKT
    conditions of the *full* problem, adds the worst violators (at least doubling the set) and
    repeats. It stops when every KKT residual is at most ``tol * scale`` (``scale`` is usually
    the penalty's :math:`\lambda_{max}`, so ``tol`` is relative) or after ``max_iter``
    proximal-gradient iterations in all.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    Y : ndarray of shape (n_samples, n_outputs)
    datafit : LeastSquares or Multinomial
    penalty : GroupL21Penalty or sparsefs._kernels.elastic_net.ElasticNetPenalty
    lam : float
        Penalty strength :math:`\lambda > 0`.
    coef0, intercept0 : ndarray, optional
        Warm start (default: zero coefficients, the optimal intercept for W = 0).
    fit_intercept : bool, default=True
    max_iter : int, default=1000
    tol : float, default=1e-4
    scale : float, default=1.0
    initial_size : int, default=16
        Size of the first working set (beyond the warm start's nonzero rows).
    engine : {"auto", "compiled", "numpy"}, default="auto"
        The FISTA loop on each working set (:func:`_fista`): the compiled kernel, or the
        numpy reference loop; they give the same iterates to rounding.

    Returns
    -------
    ProxGradResult
    """
    d = X.shape[1]
    c = Y.shape[1]
    W = np.zeros((d, c)) if coef0 is None else np.array(coef0, dtype=np.float64)
    if intercept0 is not None:
        b = np.array(intercept0, dtype=np.float64)
    elif fit_intercept:
        b = datafit.intercept_at_zero(Y)
    else:
        b = np.zeros(c)
    tol_abs = tol * scale
    history: list[float] = []
    n_iter = 0
    converged = False
    active = np.flatnonzero(nonzero_rows(W))
    size = max(initial_size, 2 * active.size)
    while True:
        # X W from the nonzero rows only (the others add exact zeros): one full pass, X^T dZ
        Z = X[:, active] @ W[active] if active.size < d else X @ W
        value, dZ = datafit.value_grad(Z + b, Y)
        G = X.T @ dZ
        viol = penalty.row_violation(W, G, lam)
        b_viol = float(np.abs(dZ.sum(axis=0)).max()) if fit_intercept else 0.0
        worst = max(viol.max(initial=0.0), b_viol)
        if worst <= tol_abs:
            converged = True
            break
        if n_iter >= max_iter:
            break
        # working set: current nonzero rows, then the worst violators, up to `size` rows
        # (the violators sorted alone, stably: the same order as sorting every row)
        candidates = np.flatnonzero(viol > tol_abs)
        candidates = candidates[np.argsort(-viol[candidates], kind="stable")]
        in_ws = np.zeros(d, dtype=bool)
        in_ws[active] = True
        in_ws[candidates[: max(size - active.size, 1)]] = True
        ws = np.flatnonzero(in_ws)
        Ws, bs, it, _ = _fista(
            X[:, ws], Y, datafit, penalty, lam, W[ws], b,
            fit_intercept=fit_intercept, max_iter=max_iter - n_iter, tol_abs=tol_abs,
            history=history, engine=engine,
        )
        n_iter += it
        W = np.zeros_like(W)
        W[ws] = Ws
        b = bs
        active = np.flatnonzero(nonzero_rows(W))
        size = max(2 * size, 2 * active.size)
    # the loop stops right after evaluating the gradient and the KKT residual at (W, b)
    kkt = worst
    if not history:
        history.append(value + penalty.value(W, lam))
    return ProxGradResult(W, b, G, n_iter, converged, np.asarray(history), kkt / max(scale, 1e-300))


# --------------------------------------------------------------------------------------------
# IRLS for l2,1 problems, in the smaller dimension
# --------------------------------------------------------------------------------------------


def _solve_pd(M: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Solve M Z = B for a symmetric positive (semi)definite M; least squares if singular."""
    try:
        return la.solve(M, B, assume_a="pos", check_finite=False)
    except (la.LinAlgError, ValueError):
        return la.lstsq(M, B, check_finite=False)[0]


def irls_l21_step(
    X: np.ndarray,
    Y: np.ndarray,
    row_weights: np.ndarray,
    sample_weights: np.ndarray,
    gamma: float,
) -> tuple[np.ndarray, np.ndarray]:
    r"""One reweighted least-squares step of an l2,1 problem, solved in the smaller dimension.

    Minimises the quadratic majoriser

    .. math::

        \sum_i \frac{\|y_i - x_i W\|^2}{a_i} + \gamma \sum_j \frac{\|w^j\|^2}{b_j},

    with ``b = row_weights`` (the previous row norms :math:`\|w^j\|`, may be 0) and
    ``a = sample_weights`` (the previous residual norms, must be > 0). The solution is

    .. math::

        W = B X^\top (X B X^\top + \gamma A)^{-1} Y
          = B^{1/2} (B^{1/2} X^\top A^{-1} X B^{1/2} + \gamma I)^{-1} B^{1/2} X^\top A^{-1} Y,

    with :math:`A = \mathrm{diag}(a)`, :math:`B = \mathrm{diag}(b)` (Woodbury identity). The
    first, n x n form is used when ``n <= d`` (Nie et al. 2010 solve exactly this n x n system in
    RFS; scikit-feature inverts the (n+d) x (n+d) diagonal matrix instead), the second, d x d form
    otherwise. Diagonal matrices are applied by element-wise products.

    Returns
    -------
    W : ndarray of shape (n_features, n_outputs)
    Z : ndarray of shape (n_samples, n_outputs)
        :math:`(X B X^\top + \gamma A)^{-1} Y`, so that ``gamma * Z`` is the dual variable of RFS.
    """
    n, d = X.shape
    b = row_weights
    a = sample_weights
    if isinstance(X, CenteredSparse):
        if n > d:  # fewer columns than rows: at most n x n dense entries
            X = X.toarray()
        else:
            M = X.row_gram(b)
            M[np.diag_indices(n)] += gamma * a
            Z = _solve_pd(M, Y)
            return (X * b).T @ Z, Z
    if n <= d:
        XB = X * b
        M = XB @ X.T
        M[np.diag_indices(n)] += gamma * a
        Z = _solve_pd(M, Y)
        W = XB.T @ Z
    else:
        sb = np.sqrt(b)
        XS = X * sb
        XSa = XS / a[:, None]
        M = XS.T @ XSa
        M[np.diag_indices(d)] += gamma
        V = _solve_pd(M, XSa.T @ Y)
        W = V * sb[:, None]
        Z = (Y - X @ W) / (gamma * a[:, None])
    return W, Z
