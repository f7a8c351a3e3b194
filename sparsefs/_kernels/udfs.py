r"""UDFS, l2,1-norm regularised discriminative feature selection (Yang et al., IJCAI 2011).

Notation of the paper, with X of shape d x n there (this module takes n x d and transposes
in its formulas). For every sample :math:`x_i`, :math:`N_i = \{x_i\} \cup N_k(x_i)` is the
sample and its k nearest neighbours (in that order), :math:`X_i` their data and
:math:`H = I_{k+1} - \frac1{k+1}\mathbf 1\mathbf 1^\top`, :math:`\tilde X_i = X_i H`. The
selection matrix :math:`S_i \in \{0,1\}^{n \times (k+1)}` has :math:`(S_i)_{pq} = 1` iff sample
p is the q-th member of :math:`N_i`. With the ridge :math:`\lambda > 0` of the local total
scatter,

.. math::

    M = X \Big[\sum_{i=1}^n S_i H (\tilde X_i^\top \tilde X_i + \lambda I)^{-1} H S_i^\top\Big]
        X^\top
    \in \mathbb R^{d \times d},

and UDFS solves

.. math::

    \min_{W^\top W = I_c} \operatorname{Tr}(W^\top M W) + \gamma \|W\|_{2,1}

by the re-weighting of Nie et al. (2010): :math:`D = I`; repeat: W = the c eigenvectors of
:math:`M + \gamma D` with the smallest eigenvalues; :math:`D_{ii} = 1 / (2\|w^i\|)`. Features
are ranked by :math:`\|w^i\|_2`. :math:`\lambda` and :math:`\gamma` are distinct parameters
(``jundongl/scikit-feature#69`` reports them conflated, and S_i mis-indexed).

Implementation notes
--------------------
* :math:`H(\tilde X_i^\top\tilde X_i + \lambda I)^{-1}H
  = V(V^\top X_i^\top X_i V + \lambda I_k)^{-1}V^\top`
  with V an orthonormal basis of the range of H (exact, since H = VV^T); the k x k systems
  are solved in batches, and the n x n middle matrix :math:`\hat M` is sparse.
* Smoothing: :math:`D_{ii} = 1 / (2\sqrt{\|w^i\|^2 + \epsilon})` with
  :math:`\epsilon = 10^{-12}\max_i \|w^i\|^2`.
* **d > dense_max and n < d** (the usual microarray shape): M has rank r <= n. With
  :math:`\hat M = RR^\top` and :math:`U = X^\top R` (d x r),
  :math:`M + \gamma D = \Lambda + UU^\top`
  is diagonal plus low rank; its smallest eigenvectors come from the shift-inverted
  :math:`(\Lambda + UU^\top - \sigma I)^{-1}` applied by Woodbury's identity with an r x r
  capacitance matrix — O(nd) per product, never a d x d matrix: Lanczos (``eigsh``) for the
  first step, then a block Krylov solver warm-started from the previous W (about half the
  time of ``eigsh`` per step, the same iterates to ~1e-12). Otherwise M is formed and ``eigh``
  is used.
* **The first step is degenerate when d - rank(M) > c** (always when d > n + c): every
  c-frame in the null space of M minimises :math:`\operatorname{Tr}(W^\top (M + \gamma I) W)`
  and the paper does not say which to take; an eigensolver would pick one arbitrarily. This
  module takes the average over that eigenspace instead: the first D comes from
  :math:`\|w^i\|^2 = c\,(P_N)_{ii} / \dim N`, the expected row norms of a uniformly random
  orthonormal c-frame of the null space N (:math:`P_N` its projector). The result is then
  deterministic and independent of the eigensolver.
* X is divided by a power of two s near max|X| and :math:`\lambda` by :math:`s^2`, which
  leaves M unchanged and keeps values near 1e300 / 1e-300 representable.
"""

from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh

from sparsefs._kernels.centered import CenteredSparse, sparse_col_extrema
from sparsefs._kernels.columns import TINY, power_of_two_scale

__all__ = ["UDFSResult", "udfs", "udfs_local_matrix"]

#: Above this many features (and with fewer samples than features) the low-rank path is used.
DENSE_MAX_FEATURES = 1000
_BLOCK_ELEMENTS = 1 << 22
_EPS_REL = 1e-12
_SHIFT = 0.99
#: Residual tolerance (relative to a bound on ||A||: ARPACK's shift-invert test, 1000x stricter
#: than the 1e-10 eigsh runs with), round limit and Krylov depth of the warm block solver.
_BLOCK_TOL = 1e-13
_BLOCK_MAX_ITER = 30
_BLOCK_DEPTH = 3


@dataclass(frozen=True)
class UDFSResult:
    """Output of :func:`udfs`.

    Attributes
    ----------
    W : ndarray of shape (n_features, n_clusters)
        Orthonormal columns; features are ranked by the row norms.
    n_iter : int
        Number of W updates (eigen-solves).
    converged : bool
    objective : ndarray of shape (n_iter,)
        :math:`\\operatorname{Tr}(W^\\top M W) + \\gamma\\|W\\|_{2,1}` after each update.
    degenerate_start : bool
        Whether the first step used the null-space average (see module notes).
    """

    W: np.ndarray
    n_iter: int
    converged: bool
    objective: np.ndarray
    degenerate_start: bool


def _contrast_basis(m: int) -> np.ndarray:
    """An orthonormal m x (m-1) basis of the vectors orthogonal to the ones vector."""
    H = np.eye(m) - 1.0 / m
    Q, _ = np.linalg.qr(H[:, : m - 1])
    return Q


def udfs_local_matrix(X: np.ndarray, neighbors: np.ndarray, ridge: float) -> sp.csr_array:
    r"""The sparse n x n matrix :math:`\hat M`.

    :math:`\hat M = \sum_i S_i H(\tilde X_i^\top\tilde X_i + \lambda I)^{-1}H S_i^\top`.

    Parameters
    ----------
    X : ndarray, scipy.sparse array or CenteredSparse of shape (n_samples, n_features)
        Sparse X: the local Gram matrices come from products of its sparse rows.
    neighbors : ndarray of shape (n_samples, k)
        The k nearest neighbours of each sample (not the sample itself).
    ridge : float
        :math:`\lambda > 0`.
    """
    n = X.shape[0]
    members = np.column_stack([np.arange(n), neighbors])  # N_i: the sample first
    m = members.shape[1]
    V = _contrast_basis(m)
    rows, cols, vals = [], [], []
    sparse = _is_sparse(X)
    if sparse:  # the raw rows: V is orthogonal to 1, so V^T G V ignores the centring
        R = X.csr if isinstance(X, CenteredSparse) else sp.csr_array(X)
        block = max(1, (1 << 16) // (m * m))
    else:
        block = max(1, _BLOCK_ELEMENTS // max(m * X.shape[1], 1))
    for start in range(0, n, block):
        idx = members[start : start + block]
        if sparse:
            left, right = np.repeat(idx, m, axis=1).ravel(), np.tile(idx, (1, m)).ravel()
            gram = np.asarray(R[left].multiply(R[right]).sum(axis=1)).reshape(-1, m, m)
        else:
            Xi = X[idx]  # (b, m, d)
            gram = np.einsum("bpf,bqf->bpq", Xi, Xi)
        reduced = np.einsum("pa,bpq,qc->bac", V, gram, V)
        reduced = 0.5 * (reduced + np.swapaxes(reduced, 1, 2))
        ev, Q = np.linalg.eigh(reduced + ridge * np.eye(m - 1))
        top = ev.max(axis=1, keepdims=True)
        inv = np.divide(1.0, ev, out=np.zeros_like(ev), where=ev > top * 1e-14)
        local = np.einsum("pa,bac,bc,bec,qe->bpq", V, Q, inv, Q, V, optimize=True)
        rows.append(np.repeat(idx, m, axis=1).ravel())
        cols.append(np.tile(idx, (1, m)).ravel())
        vals.append(local.ravel())
    Mhat = sp.csr_array(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )
    Mhat.sum_duplicates()
    return Mhat


def _d_from_rows(row_sq: np.ndarray) -> np.ndarray:
    eps = _EPS_REL * max(float(row_sq.max(initial=0.0)), TINY)
    return 0.5 / np.sqrt(row_sq + eps)


def _null_space_rows(basis: np.ndarray, n_features: int, n_clusters: int) -> np.ndarray | None:
    """Expected squared row norms of a random c-frame of the complement of span(basis)."""
    dim_null = n_features - basis.shape[1]
    if dim_null <= n_clusters:
        return None
    lev = 1.0 - np.einsum("ij,ij->i", basis, basis)
    return n_clusters * np.maximum(lev, 0.0) / dim_null


def udfs(
    X: np.ndarray,
    neighbors: np.ndarray,
    n_clusters: int,
    *,
    gamma: float,
    ridge: float,
    max_iter: int = 300,
    tol: float = 1e-6,
    dense_max: int = DENSE_MAX_FEATURES,
) -> UDFSResult:
    r"""Run UDFS on dense or sparse X.

    Parameters
    ----------
    X : ndarray, scipy.sparse array or CenteredSparse of shape (n_samples, n_features)
        Sparse X (or the implicitly centred
        :class:`~sparsefs._kernels.centered.CenteredSparse`)
        is never densified: M comes from sparse products (d <= dense_max), or, in the low-rank
        path, :math:`U = X^\top R` is only applied (never formed) and the n x n row Gram
        gives the capacitance matrices.
    neighbors : ndarray of shape (n_samples, k)
        k nearest neighbours of each sample (euclidean, self excluded).
    n_clusters : int
        c, at most n_features.
    gamma : float
        :math:`\gamma > 0`, weight of :math:`\|W\|_{2,1}`.
    ridge : float
        :math:`\lambda > 0`, ridge of the local scatter.
    max_iter : int
    tol : float
        Stop when the objective changes by at most ``tol`` times its magnitude.
    dense_max : int
        Largest d handled by forming M (see the module notes).
    """
    n, d = X.shape
    c = int(n_clusters)
    if not 1 <= c <= d:
        raise ValueError(f"n_clusters={c} must be in [1, n_features] = [1, {d}].")
    sparse = _is_sparse(X)
    if sparse:
        if not isinstance(X, CenteredSparse):  # column access, as prepare_design's
            X = CenteredSparse(sp.csc_array(X), np.zeros(d))
        s = _centered_scale(X)
        Xs = CenteredSparse(X.S / s, X.m / s)
    else:
        s = power_of_two_scale(X)
        Xs = X / s
    with np.errstate(over="ignore", under="ignore"):
        ridge_s = float(np.float64(ridge) / s / s)
    # ridge_s underflows to 0 only for X near 1e300 (the lambda -> 0 limit, a pseudo-inverse,
    # is what udfs_local_matrix computes then) and overflows only for X near 1e-300 (then
    # M = X Mhat X^T is below the smallest float: exactly 0).
    inf_ridge = np.isinf(ridge_s)
    Mhat = sp.csr_array((n, n)) if inf_ridge else udfs_local_matrix(Xs, neighbors, ridge_s)
    low_rank = d > dense_max and n < d
    if low_rank:
        mu, Q = la.eigh(Mhat.toarray())
        keep = mu > mu.max(initial=0.0) * 1e-12
        if sparse:  # U = X^T R applied, never formed
            U = _ImplicitU(Xs, Q[:, keep] * np.sqrt(mu[keep]))
            start_rows = _null_space_rows_implicit(U, max(d, n), d, c)
        else:
            U = Xs.T @ (Q[:, keep] * np.sqrt(mu[keep]))  # M = U U^T, shape (d, r)
            basis = _range_basis(U, max(d, n))

        def trace_term(W):
            return float(np.sum((U.T @ W) ** 2))

        def solve(dvec, W_prev):
            return _lowrank_smallest(gamma * dvec, U, c, W_prev)

    else:
        M = _sparse_m(Xs, Mhat) if sparse else Xs.T @ (Mhat @ Xs)
        M = 0.5 * (M + M.T)
        ev, Q = la.eigh(M)
        basis = Q[:, ev > ev.max(initial=0.0) * max(d, n) * np.finfo(float).eps]

        def trace_term(W):
            return float(np.einsum("ij,ij->", W, M @ W))

        def solve(dvec, W_prev):
            A = M + np.diag(gamma * dvec)
            return la.eigh(A, subset_by_index=[0, c - 1])[1]

    if not (sparse and low_rank):
        start_rows = _null_space_rows(basis, d, c)
    degenerate = start_rows is not None
    dvec = _d_from_rows(start_rows) if degenerate else np.ones(d)
    history, W, converged = [], None, False
    for _ in range(max_iter):
        W = solve(dvec, W)
        row_sq = np.einsum("ij,ij->i", W, W)
        history.append(trace_term(W) + gamma * float(np.sqrt(row_sq).sum()))
        dvec = _d_from_rows(row_sq)
        if len(history) > 1 and abs(history[-1] - history[-2]) <= tol * max(
            abs(history[-2]), TINY
        ):
            converged = True
            break
    return UDFSResult(
        W=W, n_iter=len(history), converged=converged, objective=np.asarray(history),
        degenerate_start=degenerate,
    )


def _range_basis(U: np.ndarray, size: int) -> np.ndarray:
    """An orthonormal basis of the column space of U (d x r, r small), from its r x r Gram."""
    if U.shape[1] == 0:
        return np.zeros((U.shape[0], 0))
    ev, O = la.eigh(U.T @ U)  # squared singular values: the same rank rule as for M = U U^T
    keep = ev > ev.max(initial=0.0) * size * np.finfo(float).eps
    return (U @ O[:, keep]) / np.sqrt(ev[keep])


def _start_vector(W_prev, d: int) -> np.ndarray:
    if W_prev is not None:
        return W_prev.sum(axis=1) + 1e-3
    return np.cos(np.arange(d) * 0.7) + 1.5  # fixed: the result is deterministic


def _lowrank_smallest(lam: np.ndarray, U: np.ndarray, c: int, W_prev) -> np.ndarray:
    r"""The c smallest eigenvectors of :math:`\mathrm{diag}(lam) + UU^\top` (lam > 0).

    Lanczos on the inverse, applied by Woodbury:
    :math:`(\Lambda + UU^\top)^{-1}
    = \Lambda^{-1} - \Lambda^{-1}U(I + U^\top\Lambda^{-1}U)^{-1}U^\top\Lambda^{-1}`.
    """
    d, r = U.shape
    if isinstance(U, _ImplicitU):
        return _lowrank_smallest_implicit(lam, U, c, W_prev)
    if r == 0:  # M = 0: coordinate vectors of the smallest diagonal entries (ties: lower index)
        W = np.zeros((d, c))
        W[np.argsort(lam, kind="stable")[:c], np.arange(c)] = 1.0
        return W
    # shift-invert just below the spectrum (lambda_min(A) >= min(lam) > sigma): the wanted
    # eigenvalues become the largest and best separated of (A - sigma I)^{-1}
    sigma = _SHIFT * float(lam.min())
    inv = 1.0 / (lam - sigma)
    Ul = U * inv[:, None]
    # The r x r capacitance matrix C = I + U^T Ul has every eigenvalue >= 1, so its explicit
    # inverse (from its Cholesky factor) is as accurate as triangular solves, and a product
    # with the operator is three matrix products (no per-call checks of cho_solve).
    Cinv = la.cho_solve(la.cho_factor(np.eye(r) + U.T @ Ul, lower=True), np.eye(r),
                        check_finite=False)

    def apply(v):
        v = np.asarray(v).reshape(d, -1)
        return inv[:, None] * v - Ul @ (Cinv @ (Ul.T @ v))

    if c >= d - 1:  # eigsh needs k < d: tiny problems go dense
        A = np.diag(lam) + U @ U.T
        return la.eigh(A, subset_by_index=[0, c - 1])[1]
    return _lowrank_finish(lam, U, c, W_prev, apply, d)


def _lowrank_finish(lam, U, c, W_prev, apply, d):
    """Warm block Krylov, else ARPACK, with the shift-inverted operator ``apply``."""
    if W_prev is not None:
        W = _block_smallest(lam, U, W_prev, apply)
        if W is not None:
            return W
    op = LinearOperator((d, d), matvec=apply, matmat=apply, dtype=np.float64)
    v0 = _start_vector(W_prev, d)
    _, vecs = eigsh(op, k=c, which="LA", v0=v0, ncv=min(d, max(2 * c + 1, 20)), tol=1e-10)
    return vecs


def _block_smallest(lam, U, W_prev, apply, *, tol=_BLOCK_TOL, max_iter=_BLOCK_MAX_ITER):
    r"""The c smallest eigenvectors of :math:`A = \mathrm{diag}(lam) + UU^\top`, warm-started
    from ``W_prev``: restarted block Krylov with the shift-inverted operator ``apply`` (T).

    The re-weighting changes D a little between UDFS steps, so the previous W spans nearly the
    wanted subspace. A block V of ``b = c + extra`` orthonormal vectors (W_prev and fixed extra
    directions) is extended to the block Krylov space
    :math:`\mathrm{span}\{V, TV, \dots, T^{depth}V\}` (orthonormalised after each product),
    A is projected on it (Rayleigh-Ritz) and its b smallest Ritz vectors restart the next
    round. Each round is a few products of d x r matrices with narrow blocks; ARPACK restarts
    from one vector and makes ~25 single-vector products, each with Python-level overhead.

    Stops when every wanted Ritz pair has :math:`\|Av - \theta v\| \le` ``tol``
    :math:`\cdot s`, :math:`s = \max(lam) + \|U\|_F^2 \ge \|A\|`: ARPACK's own test in
    shift-invert mode (its ``tol`` bounds :math:`\|Ty - \mu y\| \le tol\,|\mu|`, i.e.
    :math:`\|(A - \theta)y\| \le tol\,\|A - \sigma I\|`; eigsh runs with 1e-10), here at
    1e-13, near the rounding floor of A's products. A test relative to the wanted eigenvalues
    instead is below that floor once D has large entries (pruned features) and is not reached.
    Returns None when the test fails after ``max_iter`` rounds (the caller then runs ARPACK).
    Only the subspace matters to UDFS (its row norms are invariant to a rotation of W): both
    routes give the same iterates to ~1e-12 (tested).
    """
    d, c = W_prev.shape
    extra = min(d - c, max(c, 2))
    b = c + extra
    depth = max(1, min(_BLOCK_DEPTH, (d - 1) // b - 1))
    t = np.arange(d)[:, None] * (0.7 + 0.3 * np.arange(extra))[None, :]
    V, _ = la.qr(np.concatenate([W_prev, np.cos(t) + 0.1], axis=1), mode="economic",
                 check_finite=False)
    scale = float(lam.max()) + _frob2(U)
    for _ in range(max_iter):
        K = V
        for _ in range(depth):  # block Krylov space span{V, TV, ..., T^depth V}
            K, _ = la.qr(np.concatenate([K, apply(K[:, -b:])], axis=1), mode="economic",
                         check_finite=False)
        AK = lam[:, None] * K + U @ (U.T @ K)
        H = K.T @ AK
        theta, S = la.eigh(0.5 * (H + H.T), check_finite=False)
        V = K @ S[:, :b]
        R = AK @ S[:, :c] - V[:, :c] * theta[:c]
        if float(np.sqrt(np.einsum("ij,ij->j", R, R)).max()) <= tol * scale:
            return V[:, :c]
    return None


# --------------------------------------------------------------------------------------------
# sparse X: the same iteration with U = X^T R applied, never formed
# --------------------------------------------------------------------------------------------


def _is_sparse(X) -> bool:
    return isinstance(X, CenteredSparse) or sp.issparse(X)


def _centered_scale(X: CenteredSparse) -> float:
    """:func:`power_of_two_scale` of the implicit :math:`S - 1m^\\top` (from column extremes)."""
    n = X.shape[0]
    if n == 0 or X.shape[1] == 0:
        return 1.0
    hi, lo = sparse_col_extrema(X.S)
    amax = np.maximum(np.abs(hi - X.m), np.abs(lo - X.m))
    return power_of_two_scale(amax)


def _sparse_m(Xs: CenteredSparse, Mhat) -> np.ndarray:
    r""":math:`X^\top\hat MX` of :math:`X = S - 1m^\top` (d x d) from sparse products."""
    S, m = Xs.S, Xs.m
    MS = sp.csc_array(Mhat @ S)
    M = np.asarray((S.T @ MS).toarray())
    u = Mhat @ np.ones(S.shape[0])  # Mhat 1 (0 up to rounding)
    M -= np.multiply.outer(S.T @ u, m) + np.multiply.outer(m, np.asarray(MS.sum(axis=0)).ravel())
    M += float(u.sum()) * np.multiply.outer(m, m)
    return M


class _ImplicitU(LinearOperator):
    r""":math:`U = X^\top R` (d x r) of a :class:`CenteredSparse` X, by its products only
    (``U @ Z = X^T (R Z)``, ``U.T @ K = R^T (X K)``)."""

    def __init__(self, X: CenteredSparse, R: np.ndarray):
        super().__init__(np.float64, (X.shape[1], R.shape[1]))
        self.X, self.R = X, R
        self.gram = X.row_gram()  # n x n: X X^T
        self._t = None

    def _matmat(self, Z):
        return self.X.T @ (self.R @ Z)

    def _rmatmat(self, K):
        return self.R.T @ (self.X @ K)

    def _transpose(self):
        # U.T, built once (the block solver takes it every round), calling _rmatmat directly:
        # scipy's generic transpose conjugates (copies) both sides of every product
        if self._t is None:
            self._t = LinearOperator(self.shape[::-1], matvec=self._rmatmat,
                                     matmat=self._rmatmat, rmatvec=self._matmat,
                                     rmatmat=self._matmat, dtype=np.float64)
        return self._t

    def weighted_gram(self, w: np.ndarray) -> np.ndarray:
        r""":math:`U^\top\mathrm{diag}(w)U = R^\top X\mathrm{diag}(w)X^\top R` (r x r)."""
        return self.R.T @ (self.X.row_gram(w) @ self.R)

    def dense(self) -> np.ndarray:
        return self @ np.eye(self.shape[1])


def _frob2(U) -> float:
    if isinstance(U, _ImplicitU):
        return float(np.einsum("ij,ij->", U.R, U.gram @ U.R))
    return float(np.einsum("ij,ij->", U, U))


def _null_space_rows_implicit(U: _ImplicitU, size: int, n_features: int, n_clusters: int):
    """:func:`_null_space_rows` of :func:`_range_basis` (U), the basis applied in blocks."""
    r = U.shape[1]
    if r == 0:
        rank, lev = 0, np.zeros(n_features)
    else:
        ev, O = la.eigh(U.R.T @ (U.gram @ U.R))  # U^T U
        keep = ev > ev.max(initial=0.0) * size * np.finfo(float).eps
        rank = int(keep.sum())
        T = U.R @ (O[:, keep] / np.sqrt(ev[keep]))  # basis = X^T T
        lev = np.empty(n_features)
        block = max(1, (_BLOCK_ELEMENTS >> 3) // max(rank, 1))  # 4 MB blocks of the basis
        for start in range(0, n_features, block):
            cols = np.arange(start, min(n_features, start + block))
            B = U.X[:, cols].T @ T
            lev[cols] = np.einsum("ij,ij->i", B, B)
    dim_null = n_features - rank
    if dim_null <= n_clusters:
        return None
    return n_clusters * np.maximum(1.0 - lev, 0.0) / dim_null


def _lowrank_smallest_implicit(lam: np.ndarray, U: _ImplicitU, c: int, W_prev) -> np.ndarray:
    """:func:`_lowrank_smallest` with U applied through X (Woodbury, r x r capacitance)."""
    d, r = U.shape
    if r == 0 or c >= d - 1:
        return _lowrank_smallest(lam, U.dense(), c, W_prev)
    sigma = _SHIFT * float(lam.min())
    inv = 1.0 / (lam - sigma)
    Cinv = la.cho_solve(la.cho_factor(np.eye(r) + U.weighted_gram(inv), lower=True), np.eye(r),
                        check_finite=False)

    def apply(v):
        v = np.asarray(v).reshape(d, -1)
        iv = inv[:, None] * v
        return iv - inv[:, None] * (U @ (Cinv @ (U.T @ iv)))

    return _lowrank_finish(lam, U, c, W_prev, apply, d)
