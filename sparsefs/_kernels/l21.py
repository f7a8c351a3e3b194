r"""Shared machinery of the sparse linear selectors: l2,1 / l1 proxes, data fits, solvers, paths.

The selectors RFS, ls-l21, ll-l21 and the l1 / elastic-net logistic selectors all solve

.. math::

    \min_{W \in \mathbb{R}^{d \times c},\, b \in \mathbb{R}^c}
        f(XW + \mathbf{1} b^\top) + \lambda\,\Omega(W)

with a data fit :math:`f` (least squares, multinomial logistic, or the l2,1 "robust" loss of RFS)
and a row-sparse (:math:`\Omega = \|W\|_{2,1} = \sum_j \|w^j\|_2`) or entry-sparse (elastic net)
penalty. This module holds what they share:

* the penalties: the l2,1 penalty (value, group soft-thresholding prox, subdifferential
  distance) is the shared one of :mod:`sparsefs._kernels.group_lasso` (also SMBA's),
  re-exported here; the elastic-net one is in :mod:`sparsefs._kernels.elastic_net`, with the
  same interface;
* smooth data fits with their gradient and curvature bound;
* an accelerated proximal-gradient solver (FISTA, Beck & Teboulle 2009, with the adaptive
  restart of O'Donoghue & Candès 2015) run on a growing working set of rows, stopped by the
  KKT residual of the full problem;
* the iteratively reweighted least-squares step of RFS / l2,1 problems solved in the *smaller*
  dimension (the n x n Woodbury / dual form when n < d, the d x d form otherwise) - never an
  (n+d) x (n+d) system, and diagonal matrices are applied by element-wise products;
* a penalty path search that reaches a requested number of nonzero rows.

No scikit-learn import, no global state; every solver returns its iteration count and objective
history.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from sparsefs._kernels import fista as _fista_kernel
from sparsefs._kernels import threads as _threads
from sparsefs._kernels.centered import CenteredSparse, center_sparse
from sparsefs._kernels.elastic_net import ElasticNetPenalty
from sparsefs._kernels.group_lasso import (  # the shared l2,1 penalty, re-exported
    GroupL21Penalty,
    group_soft_threshold,
    l21_norm,
    nonzero_rows,
    row_norms,
)

__all__ = [
    "CenteredSparse",
    "GroupL21Penalty",
    "LeastSquares",
    "Multinomial",
    "PathResult",
    "PreparedX",
    "ProxGradResult",
    "group_soft_threshold",
    "irls_l21_step",
    "l21_norm",
    "lipschitz_bound",
    "nonzero_rows",
    "path_to_n_nonzero",
    "prepare_design",
    "prox_grad_working_set",
    "row_norms",
    "selection_scores",
]


# --------------------------------------------------------------------------------------------
# design preparation and scores
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PreparedX:
    """A design matrix ready for the solvers, and how to map coefficients back.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features)
        The prepared matrix (a new array; the caller's X is never modified).
    offset : ndarray of shape (n_features,)
        What was subtracted from each column (zeros when not centred).
    scale : ndarray of shape (n_features,)
        What each column was divided by, so ``X_prepared = (X - offset) / scale``; coefficients
        on the original columns are ``coef_prepared / scale[:, None]``.
    constant : ndarray of bool, shape (n_features,)
        Columns with a single value (they are exactly zero in ``X``).
    """

    X: np.ndarray
    offset: np.ndarray
    scale: np.ndarray
    constant: np.ndarray


def prepare_design(X: np.ndarray, *, center: bool, standardize: bool) -> PreparedX:
    r"""Centre and/or scale the columns of X without overflow, never in place.

    Each column is first divided by its largest magnitude (so values of 1e300 or 1e-300 are safe),
    then centred (``center``) and divided by its standard deviation (``standardize``, which
    implies centring). Without ``standardize`` the whole matrix is divided by one common factor
    (its largest magnitude): the penalties of the selectors are relative to their
    :math:`\lambda_{max}`, so a common factor changes neither the solution's support nor the
    scores' order. Constant columns become exactly zero.

    Sparse X (CSR/CSC) gives the same design as a
    :class:`~sparsefs._kernels.centered.CenteredSparse` operator (the scaled sparse matrix and
    the column means): never densified.
    """
    if sp.issparse(X):
        return _prepare_sparse(X, center=center, standardize=standardize)
    X = np.asarray(X, dtype=np.float64)
    n, d = X.shape
    amax = np.abs(X).max(axis=0) if n else np.zeros(d)
    amax = np.where(amax > 0, amax, 1.0)
    Xs = X / amax
    constant = np.ptp(Xs, axis=0) == 0 if n else np.ones(d, dtype=bool)
    if standardize:
        mean = Xs.mean(axis=0)
        Xs -= mean
        std = np.sqrt(np.mean(Xs * Xs, axis=0))
        std = np.where(constant | (std == 0), 1.0, std)
        Xs /= std
        Xs[:, constant] = 0.0
        return PreparedX(Xs, mean * amax, std * amax, constant)
    # one common factor keeps the relative column scales of the caller's data
    common = float(amax.max(initial=1.0))
    Xs = X / common
    offset = np.zeros(d)
    if center:
        offset = Xs.mean(axis=0)
        Xs -= offset
        Xs[:, constant] = 0.0
    return PreparedX(Xs, offset * common, np.full(d, common), constant)


def _prepare_sparse(X, *, center: bool, standardize: bool) -> PreparedX:
    """:func:`prepare_design` of sparse X: the same arithmetic on the stored values (the
    shared :func:`sparsefs._kernels.centered.center_sparse`, column access)."""
    Z, offset, scale, constant = center_sparse(X, standardize=standardize, center=center,
                                               fmt="csc")
    return PreparedX(Z, offset, scale, constant)


def selection_scores(
    coef: np.ndarray, closeness: np.ndarray, constant: np.ndarray | None = None
) -> np.ndarray:
    r"""One ordering of all features from a row-sparse solution.

    Nonzero rows score their norm :math:`\|w^j\| > 0`; zero rows score
    :math:`\|G^j\|/\lambda - 1 \in [-1, 0]` (``closeness``), how close the row is to entering
    the model (it enters when the gradient norm reaches :math:`\lambda`); constant columns score
    ``-inf``. So every nonzero row ranks above every zero row, and the zero rows follow in the
    order in which a slightly smaller penalty would let them in.
    """
    norms = row_norms(coef)
    scores = np.where(norms > 0, norms, np.minimum(closeness, 0.0))
    if constant is not None:
        scores = np.where(constant, -np.inf, scores)
    return scores


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


# --------------------------------------------------------------------------------------------
# reaching a number of nonzero rows along a penalty path
# --------------------------------------------------------------------------------------------


@dataclass
class PathResult:
    """Outcome of :func:`path_to_n_nonzero`.

    Attributes
    ----------
    ratio : float
        The chosen penalty relative to :math:`\\lambda_{max}`.
    state : object
        What ``fit_at`` returned there.
    n_nonzero : int
    ratios, n_nonzero_path : ndarray
        Every penalty tried (relative) and its count of nonzero rows, in the order tried.
    """

    ratio: float
    state: object
    n_nonzero: int
    ratios: np.ndarray
    n_nonzero_path: np.ndarray


def path_to_n_nonzero(
    fit_at: Callable[[float, object], tuple[object, int]],
    n_target: int,
    *,
    step: float = 0.7,
    min_ratio: float = 1e-4,
    max_bisect: int = 12,
) -> PathResult:
    r"""Find the largest penalty with at least ``n_target`` nonzero rows, exactly if possible.

    Walks down a geometric grid :math:`\lambda/\lambda_{max} = 1, s, s^2, \dots` (warm-starting
    each fit from the previous one) until at least ``n_target`` rows are nonzero, then bisects
    (in log scale) between the last two penalties to hit exactly ``n_target`` when the path
    allows it. If the count jumps over ``n_target`` the smallest count above it is kept (the
    caller then keeps the best ``n_target`` rows); if even ``min_ratio`` gives fewer, that fit is
    returned.

    Parameters
    ----------
    fit_at : callable ``(ratio, warm_state) -> (state, n_nonzero)``
        Fits at penalty ``ratio * lambda_max`` warm-started from ``warm_state`` (None at first).
    n_target : int
    step : float in (0, 1), default=0.7
    min_ratio : float, default=1e-4
    max_bisect : int, default=12

    Returns
    -------
    PathResult
    """
    ratios, counts = [], []

    def run(r, warm):
        state, nnz = fit_at(r, warm)
        ratios.append(r)
        counts.append(nnz)
        return state, nnz

    hi_r, (hi_state, hi_n) = 1.0, run(1.0, None)
    if hi_n >= n_target:
        return PathResult(1.0, hi_state, hi_n, np.array(ratios), np.array(counts))
    lo = None
    r = 1.0
    while r > min_ratio:
        r = max(r * step, min_ratio)
        state, nnz = run(r, hi_state)
        if nnz >= n_target:
            lo = (r, state, nnz)
            break
        hi_r, hi_state, hi_n = r, state, nnz
    if lo is None:
        return PathResult(hi_r, hi_state, hi_n, np.array(ratios), np.array(counts))
    for _ in range(max_bisect):
        if lo[2] == n_target or hi_r / lo[0] < 1.0 + 1e-3:
            break
        mid = float(np.sqrt(hi_r * lo[0]))
        state, nnz = run(mid, hi_state)
        if nnz >= n_target:
            lo = (mid, state, nnz)
        else:
            hi_r, hi_state, hi_n = mid, state, nnz
    return PathResult(lo[0], lo[1], lo[2], np.array(ratios), np.array(counts))
