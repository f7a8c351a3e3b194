r"""SMBA's ADMM (spec A.4) with the Woodbury Z-step, and its working-set variant (q = 2).

The problem and the notation are those of :mod:`sparsefs._kernels.smba`.

**ADMM** (spec A.4, the authors' and SMRS's scaling). Split :math:`C` into :math:`Z` (data term) and
:math:`C` (penalty), :math:`\mu_1 = 1/\lambda`, :math:`\mu_2 = \alpha`, affine flag
:math:`a \in \{0, 1\}`, scaled duals :math:`L = \Lambda/\mu_2`, :math:`\ell = \lambda_3/\mu_2`:

.. math::

    Z &\leftarrow K^{-1}\big[\mu_1 P + \mu_2 C - \Lambda + a(\mu_2 \mathbf 1\mathbf 1^\top
         + \mathbf 1 \lambda_3^\top)\big],\\
    K &= \mu_1 P + \mu_2 I + a\mu_2 \mathbf 1\mathbf 1^\top, \qquad P = X^\top X,\\
    C &\leftarrow \operatorname{prox}_{\|\cdot\|_{1,q}/\mu_2}(Z + L), \qquad
    L \leftarrow L + Z - C, \qquad \ell \leftarrow \ell + (\mathbf 1 - Z^\top \mathbf 1)\ (a = 1),

stopped when :math:`\mathrm{err}_1 = \operatorname{mean}|Z - C| \le \delta` (and, affine,
:math:`\mathrm{err}_2 = \operatorname{mean}|\mathbf 1 - Z^\top\mathbf 1| \le \delta`).

**Woodbury form** (spec A.6). :math:`K = \mu_2 I + U S U^\top` with :math:`U = [X^\top, a\mathbf 1]`
(M x (n+a)), :math:`S = \operatorname{diag}(\mu_1 I_n, \mu_2)`, so
:math:`K^{-1} = \mu_2^{-1}(I - U Q^{-1} U^\top)`, :math:`Q = \mu_2 S^{-1} + U^\top U` — a small
(n+a) x (n+a) SPD matrix, factored once by Cholesky. With :math:`W = C - L + a\mathbf 1\ell^\top`
the Z-step is

.. math::

    Z = W + U\,\big(Q^{-1}U^\top - (Q^{-1}U^\top)\,W\big),

two GEMMs with inner dimension n+a, about :math:`4(n+1)M^2` flops per iteration; only
:math:`U` and :math:`Q^{-1}U^\top` are stored, never an M x M inverse or an M x M system. Every
column block of the Z-step needs only the same column block of :math:`C, L, \ell`, so for
``q = 1`` (element-wise prox) whole blocks of columns are solved independently
(:func:`admm_l1_columns`) in :math:`O(MB + Mn)` memory. The prox, the dual updates, the error
and the next W are one fused numba pass per row, and only two M x M arrays live during the
iteration (see :func:`_admm_loop`). For q = 2, :func:`smba_working_set` runs the same iteration
on a growing set of rows certified by the optimality conditions.

References
----------
D. Nardone, A. Ciaramella, A. Staiano, "A sparse-modeling based approach for class specific
feature selection", PeerJ Computer Science 5:e237, 2019.
E. Elhamifar, G. Sapiro, R. Vidal, "See all by looking at a few: sparse modeling for finding
representative objects", CVPR 2012.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit
from scipy.linalg import cho_factor, cho_solve
from scipy.linalg.blas import dgemm

from sparsefs._kernels import group_lasso as gl
from sparsefs._kernels.columns import merge_duplicate_rows
from sparsefs._kernels.smba_setup import SCAN_BYTES

__all__ = [
    "ADMMBlockResult",
    "admm_l1_columns",
    "admm_l12_rows",
    "admm_woodbury",
    "prox_l1",
    "prox_l12_rows",
    "smba_working_set",
    "woodbury_factors",
]


# --------------------------------------------------------------------------------------------
# proximal operators
# --------------------------------------------------------------------------------------------


def prox_l1(V: np.ndarray, t: float, out: np.ndarray | None = None) -> np.ndarray:
    r"""Element-wise soft thresholding :math:`\operatorname{sign}(v)\max(|v| - t, 0)`.

    Computed as :math:`v - \operatorname{clip}(v, -t, t)` (two passes, no temporary).
    ``out`` may not be ``V`` itself.
    """
    out = np.clip(V, -t, t, out=out)
    np.subtract(V, out, out=out)
    return out


def prox_l12_rows(
    V: np.ndarray, t: float, out: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    r"""Row-group shrinkage :math:`c^i = v^i \max(\|v^i\|_2 - t, 0)/\|v^i\|_2`.

    The shared l2,1 prox (:func:`~sparsefs._kernels.group_lasso.group_soft_threshold`) with
    the plain row norms (SMBA's X is scaled to a safe range). Returns the shrunk rows and the
    row norms :math:`\|v^i\|_2` (the dual certificate).
    """
    norms = gl.row_norms(V, safe=False)
    return gl.group_soft_threshold(V, t, out=out, norms=norms), norms


# --------------------------------------------------------------------------------------------
# Woodbury factors and the iteration
# --------------------------------------------------------------------------------------------


def woodbury_factors(
    X: np.ndarray, mu1: float, mu2: float, affine: bool
) -> tuple[np.ndarray, np.ndarray]:
    r"""``U = [X^T, a 1]`` and ``Q^{-1} U^T`` for the Z-step (spec A.6).

    :math:`Q = \mu_2 S^{-1} + U^\top U` with :math:`S = \operatorname{diag}(\mu_1 I_n, \mu_2)`,
    i.e. :math:`Q = \begin{bmatrix} G + (\mu_2/\mu_1) I & X\mathbf 1\\ \mathbf 1^\top X^\top &
    1 + M\end{bmatrix}` (affine) or :math:`G + (\mu_2/\mu_1) I`, factored once by Cholesky.

    Returns
    -------
    U : ndarray of shape (M, n + a), C-contiguous
    QinvUt : ndarray of shape (n + a, M), C-contiguous
    """
    U = _woodbury_U(X, affine)
    return U, _woodbury_solve(U, U, X.shape[0], mu1, mu2, affine)


def _woodbury_U(X: np.ndarray, affine: bool) -> np.ndarray:
    """``U = [X^T, a 1]`` (M x (n + a))."""
    n, M = X.shape
    U = np.empty((M, n + int(affine)))
    U[:, :n] = X.T
    if affine:
        U[:, n] = 1.0
    return U


def _woodbury_solve(U_S: np.ndarray, U: np.ndarray, n: int, mu1: float, mu2: float,
                    affine: bool) -> np.ndarray:
    r"""``Q_S^{-1} U^T`` (C-contiguous), :math:`Q_S = \mu_2 S^{-1} + U_S^\top U_S` by Cholesky."""
    Q = U_S.T @ U_S
    Q[np.arange(n), np.arange(n)] += mu2 / mu1
    if affine:
        Q[n, n] += 1.0
    factor = cho_factor(Q, lower=True, check_finite=False)
    return np.ascontiguousarray(cho_solve(factor, U.T, check_finite=False))


def _add_U_times(U: np.ndarray, T: np.ndarray, Z: np.ndarray) -> None:
    """``Z += U @ T`` in place (BLAS gemm with beta=1 on the transposed, Fortran views)."""
    if Z.flags.c_contiguous and U.flags.c_contiguous and T.flags.c_contiguous:
        out = dgemm(1.0, T.T, U.T, beta=1.0, c=Z.T, overwrite_c=True)
        if np.shares_memory(out, Z):
            return
        Z[...] = out.T  # pragma: no cover - scipy copied c
        return
    Z += U @ T  # pragma: no cover - non-contiguous input


@njit(cache=True)
def _fused_update_l1(Y, L, ell, t, vmax, colsum):  # pragma: no cover - compiled
    """One pass of the q = 1 prox and dual updates, fused row by row.

    On entry ``Y = Z - 1 ell^T`` (Z the new Z-iterate) and ``L = Lambda/mu2``; with
    ``V = Z + L`` and ``C = prox(V)`` on exit ``L = V - C`` and ``Y = 2C - V``, i.e. the next
    ``W`` less its ``1 ell^T`` term, ``vmax[i] = max_j |V_ij|`` and ``colsum`` (zeroed here)
    the column sums of Z. C itself is not stored (``C = Y + L``, exact where C is 0).
    Returns sum |Z - C|.
    """
    s, m = Y.shape
    err = 0.0
    colsum[:] = 0.0
    for i in range(s):
        mx = 0.0
        for j in range(m):
            z = Y[i, j] + ell[j]
            colsum[j] += z
            v = L[i, j] + z
            a = abs(v)
            if a > mx:
                mx = a
            if v > t:
                c = v - t
            elif v < -t:
                c = v + t
            else:
                c = 0.0
            err += abs(z - c)
            L[i, j] = v - c
            Y[i, j] = 2.0 * c - v
        vmax[i] = mx
    return err


@njit(cache=True)
def _fused_update_l12(Y, L, ell, t, norms, colsum):  # pragma: no cover - compiled
    """As :func:`_fused_update_l1` for the row-group prox; ``norms[i] = ||v^i||_2``."""
    s, m = Y.shape
    err = 0.0
    colsum[:] = 0.0
    for i in range(s):
        nrm = 0.0
        for j in range(m):
            z = Y[i, j] + ell[j]
            colsum[j] += z
            v = L[i, j] + z
            L[i, j] = v
            nrm += v * v
        nrm = np.sqrt(nrm)
        norms[i] = nrm
        f = 1.0 - t / nrm if nrm > t else 0.0
        for j in range(m):
            v = L[i, j]
            c = f * v
            err += abs(Y[i, j] + ell[j] - c)
            L[i, j] = v - c
            Y[i, j] = 2.0 * c - v
    return err


def _admm_loop(U, QinvUt, QinvUt_J, mu2, q, affine, tol, max_iter, C, L, ell):
    r"""The ADMM of spec A.4 (Woodbury Z-step, fused updates) on the given state, in place.

    Two M x M buffers only: C's buffer holds ``Y = Z - 1 ell^T`` during the iteration (the
    rank-one ``1 ell^T`` part of W goes through the Z-step algebraically:
    :math:`Q^{-1}U^\top \mathbf 1 \ell^\top`), and C = Y + L at the end.

    Returns (C, n_iter, converged, err1 list, err2 list, sum|Z-C| list, dual vector).
    """
    s, m = C.shape
    t = 1.0 / mu2
    shift = ell if affine else np.zeros(m)
    colsum = np.zeros(m)
    q1 = QinvUt.sum(axis=1) if affine else None  # Q^{-1} U^T 1
    Y = np.subtract(C, L, out=C)  # W less its 1 ell^T term
    dual = np.zeros(s)
    fused = _fused_update_l1 if q == 1 else _fused_update_l12
    err1, err2, sums = [], [], []
    converged = False
    n_iter = 0
    size = float(s * m) if s * m else 1.0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        T = QinvUt @ Y
        np.subtract(QinvUt_J, T, out=T)
        if affine:
            T -= np.outer(q1, shift)
        _add_U_times(U, T, Y)  # Y = Z - 1 shift^T
        total = float(fused(Y, L, shift, t, dual, colsum))
        e2 = 0.0
        if affine:
            r3 = 1.0 - colsum
            shift += r3
            e2 = float(np.abs(r3).mean()) if m else 0.0
        e1 = total / size
        err1.append(e1)
        err2.append(e2)
        sums.append(total)
        if e1 <= tol and (not affine or e2 <= tol):
            converged = True
            break
    Y += L  # C
    return Y, n_iter, converged, err1, err2, sums, dual


@dataclass
class ADMMBlockResult:
    """Outcome of :func:`admm_l1_columns` on one block of columns.

    Attributes
    ----------
    row_abs : ndarray of shape (M,)
        :math:`\\sum_{j \\in J} |C_{ij}|`, this block's share of the row scores.
    row_dual : ndarray of shape (M,)
        :math:`\\max_{j \\in J} |V_{ij}|`, V = Z + L at the last iterate (this block's share of
        the dual certificate :math:`\\|v^i\\|_\\infty`).
    coef : ndarray of shape (M, len(cols)) or None
        The block of C (``keep_coef=True``).
    n_iter : int
    converged : bool
    err1 : ndarray of shape (n_iter,)
        Per-iteration block mean of :math:`|Z - C|`.
    err2 : ndarray of shape (n_iter,)
        Per-iteration block mean of :math:`|1 - \\mathbf 1^\\top Z|` (zeros when not affine).
    sum_abs_zc : ndarray of shape (n_iter,)
        Per-iteration block sum of :math:`|Z - C|` (to combine blocks into the global err1).
    """

    row_abs: np.ndarray
    row_dual: np.ndarray
    coef: np.ndarray | None
    n_iter: int
    converged: bool
    err1: np.ndarray
    err2: np.ndarray
    sum_abs_zc: np.ndarray = field(repr=False)


def admm_l1_columns(
    U: np.ndarray,
    QinvUt: np.ndarray,
    mu2: float,
    cols,
    *,
    affine: bool,
    tol: float = 1e-8,
    max_iter: int = 3000,
    keep_coef: bool = False,
    groups: tuple[np.ndarray, np.ndarray] | None = None,
) -> ADMMBlockResult:
    r"""Run the q = 1 ADMM (spec A.4, Woodbury Z-step) on one block of columns of C.

    With the element-wise penalty every step acts column by column (the affine multiplier is
    per column), so a block :math:`J` of columns is an independent problem: memory
    :math:`O(M |J| + M n)`, cost :math:`4(n+1)M|J|` flops per iteration. This is the unit of work
    to distribute (e.g. one Dask task per block): it needs only ``U`` and ``QinvUt`` from
    :func:`woodbury_factors`, which are shared by all blocks.

    Parameters
    ----------
    U, QinvUt : ndarray
        From :func:`woodbury_factors` (the affine flag must match).
    mu2 : float
        The ADMM penalty :math:`\mu_2 = \alpha` (the prox threshold is :math:`1/\mu_2`).
    cols : slice or ndarray of int
        The columns of C to solve.
    affine : bool
    tol : float, default=1e-8
        Stop when the block mean of :math:`|Z - C|` (and, affine, of
        :math:`|1 - \mathbf 1^\top Z|`) is at most ``tol``; ``tol=0`` runs exactly ``max_iter``
        iterations (what a global stopping rule needs: run every block for the same count).
    max_iter : int, default=3000
    keep_coef : bool, default=False
        Return the block of C.
    groups : tuple, optional
        :func:`~sparsefs._kernels.columns.duplicate_partition` of X: the rows of duplicated
        features are replaced by their mean at the end (:func:`merge_duplicate_rows`), so
        copies score exactly alike.

    Returns
    -------
    ADMMBlockResult
    """
    M = U.shape[0]
    QinvUt_J = np.ascontiguousarray(QinvUt[:, cols])
    B = QinvUt_J.shape[1]
    C = np.zeros((M, B))
    L = np.zeros((M, B))
    ell = np.zeros(B) if affine else None
    C, n_iter, converged, err1, err2, sums, row_dual = _admm_loop(
        U, QinvUt, QinvUt_J, mu2, 1, affine, tol, max_iter, C, L, ell)
    C = merge_duplicate_rows(C, groups)
    row_abs = np.abs(C).sum(axis=1)
    return ADMMBlockResult(
        row_abs=row_abs,
        row_dual=row_dual,
        coef=C if keep_coef else None,
        n_iter=n_iter,
        converged=converged,
        err1=np.asarray(err1),
        err2=np.asarray(err2),
        sum_abs_zc=np.asarray(sums),
    )


def admm_woodbury(
    X: np.ndarray,
    mu1: float,
    mu2: float,
    *,
    q: int,
    affine: bool,
    tol: float = 1e-8,
    max_iter: int = 3000,
) -> dict:
    r"""The full (all columns at once) ADMM of spec A.4 with the Woodbury Z-step.

    Needed for q = 2 (the row-group prox couples the columns); for q = 1 it equals
    :func:`admm_l1_columns` on all columns.

    Returns
    -------
    dict
        ``coef`` (C, M x M), ``dual`` (:math:`\|v^i\|_{q^*}`, V = Z + L at the last iterate),
        ``n_iter``, ``converged``, ``err1``, ``err2`` (per-iteration arrays), ``L`` (the scaled
        dual :math:`\Lambda/\mu_2`), ``ell`` (:math:`\lambda_3/\mu_2`, or None).
    """
    if q not in (1, 2):
        raise ValueError(f"q must be 1 or 2; got {q!r}.")
    U, QinvUt = woodbury_factors(X, mu1, mu2, affine)
    if q == 1:
        res = admm_l1_columns(U, QinvUt, mu2, slice(None), affine=affine, tol=tol,
                              max_iter=max_iter, keep_coef=True)
        return {"coef": res.coef, "dual": res.row_dual, "n_iter": res.n_iter,
                "converged": res.converged, "err1": res.err1, "err2": res.err2}
    out = admm_l12_rows(U, QinvUt, QinvUt, mu2, affine=affine, tol=tol, max_iter=max_iter)
    out.pop("L")
    out.pop("ell")
    return out


def admm_l12_rows(
    U_S: np.ndarray,
    Qinv_USt: np.ndarray,
    Qinv_Ut: np.ndarray,
    mu2: float,
    *,
    affine: bool,
    tol: float = 1e-8,
    max_iter: int = 3000,
    C: np.ndarray | None = None,
    L: np.ndarray | None = None,
    ell: np.ndarray | None = None,
) -> dict:
    r"""The q = 2 ADMM on the rows S of C (all rows: the full problem), Woodbury Z-step.

    Restricting C to the rows S (the others fixed at 0) gives the same iteration with
    :math:`U_S` = the rows S of U and :math:`Q_S = \mu_2 S^{-1} + U_S^\top U_S`:
    :math:`Z_S = W_S + U_S(Q_S^{-1}U^\top - Q_S^{-1}U_S^\top W_S)` (|S| x M, cost
    :math:`4(n+1)|S|M` per iteration). With S = all rows it is the ADMM of spec A.4.

    Parameters
    ----------
    U_S : ndarray of shape (s, k)
    Qinv_USt : ndarray of shape (k, s)
        :math:`Q_S^{-1}U_S^\top`.
    Qinv_Ut : ndarray of shape (k, M)
        :math:`Q_S^{-1}U^\top`.
    mu2 : float
    affine : bool
    tol, max_iter
        As in :func:`admm_l1_columns` (err1 is the mean over the s x M entries).
    C, L, ell : ndarray, optional
        Warm start (updated in place): C_S, the scaled dual :math:`\Lambda_S/\mu_2` and
        :math:`\lambda_3/\mu_2`; zeros by default.

    Returns
    -------
    dict
        ``coef``, ``dual`` (:math:`\|v^i\|_2` at the last iterate), ``n_iter``, ``converged``,
        ``err1``, ``err2``, ``L``, ``ell``.
    """
    s, M = U_S.shape[0], Qinv_Ut.shape[1]
    C = np.zeros((s, M)) if C is None else C
    L = np.zeros((s, M)) if L is None else L
    if affine and ell is None:
        ell = np.zeros(M)
    if not affine:
        ell = None
    C, n_iter, converged, err1, err2, _, norms = _admm_loop(
        U_S, Qinv_USt, Qinv_Ut, mu2, 2, affine, tol, max_iter, C, L, ell)
    return {"coef": C, "dual": norms, "n_iter": n_iter, "converged": converged,
            "err1": np.asarray(err1), "err2": np.asarray(err2), "L": L, "ell": ell}


def smba_working_set(
    X: np.ndarray,
    lam: float,
    mu2: float,
    *,
    affine: bool,
    tol: float = 1e-8,
    max_iter: int = 3000,
    initial_size: int | None = None,
    kkt_tol: float = 1e-6,
    max_outer: int = 50,
) -> dict:
    r"""q = 2: the ADMM on a growing set of rows S, certified by the optimality conditions.

    The solution of the row-sparse problem has few non-zero rows. The ADMM of
    :func:`admm_l12_rows` is run on the rows S only (C = 0 elsewhere); then every other row is
    checked: row i = 0 is optimal iff :math:`\|g_i\|_2 \le 1` with
    :math:`g_i = \mu_1 x_i^\top R + a\lambda_3^\top`, :math:`R = X - X_S C_S` (the scaled
    dual :math:`\Lambda_i` the full ADMM converges to). Violators (largest first, at most as
    many as S holds) join S and the ADMM restarts warm; it ends when no row violates
    :math:`\|g_i\| \le 1 + \text{kkt\_tol}`. Then C solves the full problem to the ADMM's
    tolerance. Cost per inner iteration :math:`4(n+1)|S|M` instead of :math:`4(n+1)M^2`, plus
    :math:`2nM^2` per check (column blocks, no M x M array is ever held).

    Parameters
    ----------
    X : ndarray of shape (n, M)
    lam, mu2 : float
        :math:`\lambda` and the ADMM penalty (:math:`\mu_1 = 1/\lambda`).
    affine : bool
    tol, max_iter
        Per restricted solve.
    initial_size : int, optional
        Rows of the first S, the largest :math:`\|(X^\top R_0)_i\|_2` (the gradient at the
        trivial solution); default ``max(2 (n + 1), 50)``.
    kkt_tol : float
    max_outer : int

    Returns
    -------
    dict
        ``rows`` (S), ``coef_rows`` (C_S, |S| x M), ``row_norms`` (M,), ``dual`` (M,:
        :math:`\|v^i\|_2` for i in S, :math:`\|g_i\|/\mu_2` outside), ``n_iter`` (summed over
        restricted solves), ``n_outer``, ``converged``, ``err1``, ``err2`` (concatenated).
    """
    n, M = X.shape
    mu1 = 1.0 / lam
    k = n + int(affine)
    U = _woodbury_U(X, affine)
    # first S: the largest gradient rows at the trivial solution (blockwise, O(M B) memory)
    width = max(1, min(M, SCAN_BYTES // (8 * M)))
    g0 = np.empty(M)
    for start in range(0, M, width):
        Xr = X[:, start:start + width]
        A = Xr.T @ X  # X^T R0 on these rows (R0 = X, or X - ybar 1^T when affine)
        if affine:
            A -= (Xr.T @ X.mean(axis=1))[:, None]
        g0[start:start + width] = gl.row_norms(A, safe=False)
    size0 = max(2 * k, 50) if initial_size is None else int(initial_size)
    rows = np.sort(np.argsort(-g0, kind="stable")[: min(M, size0)])
    C = np.zeros((rows.size, M))
    L = np.zeros((rows.size, M))
    ell = np.zeros(M) if affine else None
    err1, err2, n_iter, converged = [], [], 0, False
    gnorm = np.zeros(M)
    out = None
    for n_outer in range(1, max_outer + 1):  # noqa: B007 - the count is returned
        U_S = U[rows]
        Qinv_Ut = _woodbury_solve(U_S, U, n, mu1, mu2, affine)
        Qinv_USt = np.ascontiguousarray(Qinv_Ut[:, rows])
        out = admm_l12_rows(U_S, Qinv_USt, Qinv_Ut, mu2, affine=affine, tol=tol,
                            max_iter=max_iter, C=C, L=L, ell=ell)
        C, L, ell = out["coef"], out["L"], out["ell"]
        n_iter += out["n_iter"]
        err1.append(out["err1"])
        err2.append(out["err2"])
        # optimality of the rows outside S: ||mu1 x_i^T R + a lambda3|| <= 1
        R = X - X[:, rows] @ C
        shift = mu2 * ell if affine else None
        for start in range(0, M, width):
            G = X[:, start:start + width].T @ R
            G *= mu1
            if affine:
                G += shift[None, :]
            gnorm[start:start + width] = gl.row_norms(G, safe=False)
        outside = np.ones(M, dtype=bool)
        outside[rows] = False
        cand = np.flatnonzero(outside & (gnorm > 1.0 + kkt_tol))
        if cand.size == 0:
            converged = bool(out["converged"])
            break
        add = cand[np.argsort(-gnorm[cand], kind="stable")[: max(rows.size, 1)]]
        new_rows = np.sort(np.concatenate([rows, add]))
        pos = np.searchsorted(new_rows, rows)
        C_new = np.zeros((new_rows.size, M))
        L_new = np.zeros((new_rows.size, M))
        C_new[pos] = C
        L_new[pos] = L
        rows, C, L = new_rows, C_new, L_new
    row_norms = np.zeros(M)
    row_norms[rows] = gl.row_norms(C, safe=False)
    dual = gnorm / mu2
    dual[rows] = out["dual"]
    return {"rows": rows, "coef_rows": C, "row_norms": row_norms, "dual": dual,
            "n_iter": n_iter, "n_outer": n_outer, "converged": converged,
            "err1": np.concatenate(err1), "err2": np.concatenate(err2)}
