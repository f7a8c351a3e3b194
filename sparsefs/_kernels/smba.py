r"""SMBA / SMRS: sparse self-representation of the features, solved by ADMM in Woodbury form.

Nardone, Ciaramella & Staiano (PeerJ CS 5:e237, 2019) apply the sparse-modeling representative
selection of Elhamifar, Sapiro & Vidal (CVPR 2012) to the **features**: with
:math:`X \in \mathbb{R}^{n \times M}` (samples x features, column :math:`x_j` a feature),

.. math::

    \min_C\ \tfrac12 \|X - XC\|_F^2 + \lambda \|C\|_{1,q}
    \quad\text{s.t. (optionally, "affine")}\quad \mathbf 1^\top C = \mathbf 1^\top,
    \qquad \|C\|_{1,q} = \textstyle\sum_i \|c^i\|_q ,

:math:`c^i` the i-th row of :math:`C \in \mathbb{R}^{M \times M}`; features are ranked by the row
norms :math:`\|c^i\|_q`. ``q = 2`` is the row-group penalty of the paper (and of SMRS); ``q = 1``
is the element-wise penalty of the authors' code, under which the columns decouple into
independent Lassos.

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

**Exact reduced solver (q = 2).** Every solution has its rows in the row space of X
(affine: of :math:`X - \bar y\mathbf 1^\top` plus :math:`\mathbf 1`), so
:math:`C = BW^\top` with an orthonormal M x k basis W (k <= n + 1) and B solves a multi-task
group lasso with an r x M design (:func:`reduce_smba`); :func:`smba_group_lasso` minimises its
variational form by L-BFGS-B (the affine constraint exact), certifies it by the duality gap and
polishes, if needed, by block coordinate descent (:func:`group_lasso_bcd`; affine: method of
multipliers). :math:`O(Mn^2)` per step, no M x M array.

**Regularisation scale.** :math:`\lambda = \lambda_{max}/\alpha`. Without the affine constraint,
:math:`C = 0` is optimal iff :math:`\lambda \ge \|X^\top X\|_{q^*}`-type dual norm of the gradient
at 0, i.e. ``"dual"``: :math:`\max_{ij}|P_{ij}| = \max_j\|x_j\|^2` (q = 1),
:math:`\max_i \|P_{i,:}\|_2` (q = 2). The authors' code (``"smba_code"``) uses the l2 row norm for
both q, which for q = 1 exceeds the true threshold by the ratio
:math:`\max_i\|P_{i,:}\|_2/\max_j\|x_j\|^2` (often 8-30 on microarray class blocks), so
:math:`C \equiv 0` whenever :math:`\alpha` is at or below that ratio (spec A.3, pitfall).
With the affine constraint :math:`C = 0` is infeasible and no finite threshold exists; the scale
is the same dual norm of the loss gradient at :math:`C_0 = \mathbf 1\mathbf 1^\top/M` (the
minimiser of the penalty that best fits the data): rows of :math:`X^\top R_0`,
:math:`R_0 = X - \bar y\mathbf 1^\top`, :math:`\bar y = X\mathbf 1/M` (SMRS's affine scale for
q = 2). Note that with ``q = 1`` and the affine constraint the problem is degenerate: every column
is solved by :math:`c_j = e_j` (zero loss, and :math:`\|c\|_1 \ge |\mathbf 1^\top c| = 1` is the
least penalty), so :math:`C = I` for every :math:`\lambda > 0`.

All quantities are computed through the n x n Gram :math:`G = XX^\top` (or blockwise), never by
forming :math:`P`.

References
----------
D. Nardone, A. Ciaramella, A. Staiano, "A sparse-modeling based approach for class specific
feature selection", PeerJ Computer Science 5:e237, 2019.
E. Elhamifar, G. Sapiro, R. Vidal, "See all by looking at a few: sparse modeling for finding
representative objects", CVPR 2012.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np
from numba import njit
from scipy.linalg import cho_factor, cho_solve
from scipy.linalg.blas import dgemm, dsyrk
from scipy.linalg.lapack import dpotri

from sparsefs._kernels.columns import duplicate_partition

__all__ = [
    "ADMMBlockResult",
    "SMBAResult",
    "admm_l1_columns",
    "admm_l12_rows",
    "admm_woodbury",
    "auto_block_size",
    "group_lasso_bcd",
    "lambda_max",
    "merge_duplicate_rows",
    "prox_l1",
    "prox_l12_rows",
    "reduce_smba",
    "representatives_prefix",
    "smba",
    "smba_group_lasso",
    "smba_working_set",
    "woodbury_factors",
]

#: bytes of float64 workspace the automatic column block may take (budgeted as 3 M x B arrays:
#: the two iterates and a copy of the block's C)
BLOCK_BYTES = 256 * 2**20
#: bytes of an (M x B) scratch array used by the blockwise lambda_max scan
_SCAN_BYTES = 32 * 2**20


# --------------------------------------------------------------------------------------------
# lambda_max
# --------------------------------------------------------------------------------------------


def _quad_form_cols(X: np.ndarray, G: np.ndarray) -> np.ndarray:
    """``x_j^T G x_j`` for every column j, in O(n^2 M) (G is n x n)."""
    return np.einsum("ij,ij->j", X, G @ X)


def lambda_max(X: np.ndarray, q: int, affine: bool, scale: str = "dual") -> float:
    r"""The penalty scale :math:`\lambda_{max}` (``lambda = lambda_max / alpha``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64
    q : {1, 2}
        The penalty's row norm.
    affine : bool
        Whether the constraint :math:`\mathbf 1^\top C = \mathbf 1^\top` is imposed.
    scale : {"dual", "smba_code"}
        ``"dual"``: the dual norm of the loss gradient at the trivial point, row-wise
        :math:`\ell_{q^*}`: :math:`\max_{ij}|(X^\top R)_{ij}|` (q = 1) or
        :math:`\max_i\|(X^\top R)_{i,:}\|_2` (q = 2), with :math:`R = X` (non-affine: then
        :math:`\lambda \ge \lambda_{max} \Leftrightarrow C = 0`, and for q = 1 the value is
        :math:`\max_j \|x_j\|^2`) or :math:`R = X - \bar y \mathbf 1^\top` (affine).
        ``"smba_code"``: the l2 row norm for both q (the authors' code and SMRS).

    Returns
    -------
    float
        0.0 when X is zero.
    """
    if q not in (1, 2):
        raise ValueError(f"q must be 1 or 2; got {q!r}.")
    if scale not in ("dual", "smba_code"):
        raise ValueError(f"scale must be 'dual' or 'smba_code'; got {scale!r}.")
    M = X.shape[1]
    if M == 0:
        return 0.0
    l2 = q == 2 or scale == "smba_code"
    if not affine:
        if l2:
            return float(np.sqrt(max(_quad_form_cols(X, X @ X.T).max(), 0.0)))
        return float(np.einsum("ij,ij->j", X, X).max())
    ybar = X.mean(axis=1)
    if l2:
        # R R^T = G - M ybar ybar^T, so ||x_j^T R||^2 = x_j^T (G - M ybar ybar^T) x_j
        G0 = X @ X.T - M * np.outer(ybar, ybar)
        return float(np.sqrt(max(_quad_form_cols(X, G0).max(), 0.0)))
    # max_ij |x_i^T (x_j - ybar)| = max_ij |P_ij - b_i|, scanned by column blocks of P
    b = X.T @ ybar
    width = max(1, min(M, _SCAN_BYTES // (8 * M)))
    best = 0.0
    for start in range(0, M, width):
        block = X.T @ X[:, start:start + width]
        block -= b[:, None]
        best = max(best, float(np.abs(block).max()))
    return best


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

    Returns the shrunk rows and the row norms :math:`\|v^i\|_2` (the dual certificate).
    """
    norms = np.sqrt(np.einsum("ij,ij->i", V, V))
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(norms > t, 1.0 - t / norms, 0.0)
    out = np.multiply(V, factor[:, None], out=out)
    return out, norms


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
    n, M = X.shape
    k = n + int(affine)
    U = np.empty((M, k))
    U[:, :n] = X.T
    if affine:
        U[:, n] = 1.0
    Q = U.T @ U
    Q[np.arange(n), np.arange(n)] += mu2 / mu1
    if affine:
        Q[n, n] += 1.0
    factor = cho_factor(Q, lower=True, check_finite=False)
    QinvUt = np.ascontiguousarray(cho_solve(factor, U.T, check_finite=False))
    return U, QinvUt


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


def _gradient_rows(X: np.ndarray, affine: bool, rows=None) -> np.ndarray:
    """``X^T R0`` restricted to ``rows`` (R0 = X, or X - ybar 1^T when affine)."""
    Xr = X if rows is None else X[:, rows]
    A = Xr.T @ X
    if affine:
        A -= (Xr.T @ X.mean(axis=1))[:, None]
    return A


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
    U = np.empty((M, k))
    U[:, :n] = X.T
    if affine:
        U[:, n] = 1.0
    # first S: the largest gradient rows at the trivial solution (blockwise, O(M B) memory)
    width = max(1, min(M, _SCAN_BYTES // (8 * M)))
    g0 = np.empty(M)
    for start in range(0, M, width):
        A = _gradient_rows(X, affine, slice(start, start + width))
        g0[start:start + width] = np.sqrt(np.einsum("ij,ij->i", A, A))
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
        Q = U_S.T @ U_S
        Q[np.arange(n), np.arange(n)] += mu2 / mu1
        if affine:
            Q[n, n] += 1.0
        factor = cho_factor(Q, lower=True, check_finite=False)
        Qinv_Ut = np.ascontiguousarray(cho_solve(factor, U.T, check_finite=False))
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
            gnorm[start:start + width] = np.sqrt(np.einsum("ij,ij->i", G, G))
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
    row_norms[rows] = np.sqrt(np.einsum("ij,ij->i", C, C))
    dual = gnorm / mu2
    dual[rows] = out["dual"]
    return {"rows": rows, "coef_rows": C, "row_norms": row_norms, "dual": dual,
            "n_iter": n_iter, "n_outer": n_outer, "converged": converged,
            "err1": np.concatenate(err1), "err2": np.concatenate(err2)}


# --------------------------------------------------------------------------------------------
# exact reduced solver for q = 2: multi-task group lasso in the row space, block coordinate
# descent on a working set, duality-gap stopping (affine: augmented Lagrangian)
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


def _group_gap(At_S, B_S, R, lam):
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
    gn = np.sqrt(np.einsum("ij,ij->i", G, G))
    bn = np.sqrt(np.einsum("ij,ij->i", B_S, B_S))
    rr = float(np.einsum("ij,ij->", R, R))
    theta = lam / max(lam, float(gn.max(initial=0.0)))
    pen = lam * float(bn.sum())
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
    obj = 0.5 * float(np.einsum("ij,ij->", R, R)) + lam * float(
        np.sqrt(np.einsum("ij,ij->i", B_ws, B_ws)).sum())
    obj_acc = 0.5 * float(np.einsum("ij,ij->", R_acc, R_acc)) + lam * float(
        np.sqrt(np.einsum("ij,ij->i", B_acc, B_acc)).sum())
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

    Each outer step computes the full duality gap (:func:`_group_gap`, one GEMM of
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
        gap, _, gn, _ = _group_gap(At, B, R, lam)
        if gaps:
            gaps[-1] = gap  # the full problem's gap at the last sweep's iterate
        if gap <= tol:
            converged = True
            break
        if n_sweeps >= max_sweeps:
            break
        bn = np.sqrt(np.einsum("ij,ij->i", B, B))
        support = bn > 0
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
                ws_gap, _, _, _ = _group_gap(At_ws, B[ws], R, lam)
                gaps.append(ws_gap)
                if ws_gap <= target:
                    break
    return {"coef": B, "residual": R, "grad_norms": gn, "gap": gap,
            "n_sweeps": n_sweeps, "converged": converged, "gaps": np.asarray(gaps),
            "ws_size": size}


def reduce_smba(X: np.ndarray, affine: bool, rcond: float | None = None) -> dict:
    r"""The reduced (row-space) form of the SMBA problem, q = 2.

    **Non-affine.** With the thin SVD :math:`X = U S V^\top` (rank r), every solution has its
    rows in the row space of X (projecting the rows of C onto it keeps :math:`X(I - C)VV^\top`,
    removes the non-negative :math:`\|XC(I - VV^\top)\|^2` and shrinks every row norm), so
    :math:`C = BV^\top` with :math:`\|c^i\| = \|b^i\|` and
    :math:`\|X - XC\|_F = \|S - AB\|_F`, :math:`A = SV^\top` (r x M): a multi-task group lasso
    with targets :math:`T = S` (r x r).

    **Affine.** Under :math:`\mathbf 1^\top C = \mathbf 1^\top` the loss is invariant to
    translating the features, :math:`X - XC = \tilde X - \tilde XC` with
    :math:`\tilde X = X - \bar y\mathbf 1^\top` (:math:`\bar y = X\mathbf 1/M`,
    so :math:`\tilde X\mathbf 1 = 0`). The same projection argument, onto
    :math:`\operatorname{span}\{\text{rows of }\tilde X, \mathbf 1\}` (which contains
    :math:`\mathbf 1`, so the constraint is kept), gives :math:`C = BW^\top` with the
    orthonormal basis :math:`W = [\tilde V, \mathbf 1/\sqrt M]` (M x (r+1); :math:`\tilde V
    \perp \mathbf 1`), loss :math:`\tfrac12\|[\tilde S, 0] - \tilde A B\|^2`,
    :math:`\tilde A = \tilde S\tilde V^\top`, and the k = r+1 linear constraints
    :math:`B^\top\mathbf 1 = W^\top\mathbf 1 = \sqrt M e_{r+1}`.

    Singular values at or below ``rcond * s_max`` are dropped (default
    ``rcond = max(n, M) * eps``, numpy's ``matrix_rank`` cutoff).

    Returns
    -------
    dict
        ``At`` (:math:`A^\top`, M x r), ``T`` (r x k), ``W`` (M x k), ``U`` (n x r),
        ``s`` (singular values kept), ``wbar`` (:math:`W^\top\mathbf 1`, affine), ``ybar``,
        ``scale`` (:math:`\tfrac12\|\tilde X\|_F^2`, the objective's natural scale).
    """
    n, M = X.shape
    ybar = X.mean(axis=1) if affine else np.zeros(n)
    Xt = X - ybar[:, None] if affine else X
    U, s, Vt = np.linalg.svd(Xt, full_matrices=False)
    if rcond is None:
        rcond = max(n, M) * np.finfo(np.float64).eps
    r = int(np.count_nonzero(s > rcond * (s[0] if s.size else 0.0)))
    U, s, V = U[:, :r], s[:r], Vt[:r].T
    At = np.ascontiguousarray(V * s[None, :])
    if affine:
        W = np.empty((M, r + 1))
        W[:, :r] = V
        W[:, r] = 1.0 / np.sqrt(M)
        T = np.zeros((r, r + 1))
        T[:, :r] = np.diag(s)
        wbar = np.zeros(r + 1)
        wbar[r] = np.sqrt(M)
    else:
        W = V
        T = np.diag(s)
        wbar = None
    return {"At": At, "T": T, "W": W, "U": U, "s": s, "wbar": wbar, "ybar": ybar,
            "scale": 0.5 * float(np.dot(s, s))}


class _GapReached(Exception):
    """Raised inside the L-BFGS-B objective once the duality gap is below the tolerance."""


#: L-BFGS-B evaluations of the eta stage before the projected Newton phase (or between two
#: tries of it while the free set is too large): enough to bring the free set near the support
#: (issue #33: BASEHOCK z-scored, 20-50 evaluations leave 1-1.3 x the final support).
ETA_LBFGS_EVALS = 30
#: The Newton phase runs while at most this many eta are free (its Hessian is free x free:
#: 2500 -> 50 MB, a Cholesky of ~5e9 flops).
ETA_NEWTON_MAX_FREE = 2500


def _diagonal_of(T: np.ndarray) -> np.ndarray | None:
    """The diagonal of a square diagonal matrix, else None."""
    if T.ndim != 2 or T.shape[0] != T.shape[1]:
        return None
    t = np.diagonal(T).copy()
    return t if np.count_nonzero(T) == np.count_nonzero(t) else None


@njit(cache=True)
def _symmetric_times_diag(low, t):  # pragma: no cover - compiled
    """``S diag(t)`` for the symmetric S whose lower triangle is ``low`` (one pass, C order;
    the upper triangle of ``low`` is ignored)."""
    k = low.shape[0]
    out = np.empty((k, k))
    for i in range(k):
        for j in range(i + 1):
            out[i, j] = low[i, j] * t[j]
        for j in range(i + 1, k):
            out[i, j] = low[j, i] * t[j]
    return out


def _eta_eval(Ap, Tp, e, p, lam, eta):
    r"""Everything about one eta of the variational group lasso (:func:`_eta_stage`).

    Returns ``(F, grad, gap, G, chol, Rp, d)``: the value :math:`F(\eta)`, its gradient, the
    duality gap of the B it defines, :math:`G = A'R'` (rows :math:`g_i`), the Cholesky factor
    of the small system :math:`H = E + A'^\top D A'` (lower), :math:`R'` and
    :math:`d = \eta/\lambda`. :func:`_eta_solve` then :func:`_eta_finish`.
    """
    return _eta_finish(Ap, p, lam, eta, *_eta_solve(Ap, Tp, e, lam, eta))


def _eta_solve(Ap, Tp, e, lam, eta):
    r"""The small system of one eta: ``(chol, Rp, d, nz)``, :math:`O(|nz| q^2 + q^3)`.

    :math:`H = E + A'^\top D A'` from the rows with :math:`\eta_i > 0` only (``nz``; the zero
    rows, most of them near the solution, add nothing), its Cholesky factor (lower),
    :math:`R' = H^{-1}T'` and :math:`d = \eta/\lambda`.
    """
    d = eta / lam
    nz = np.flatnonzero(d > 0.0)
    # a symmetric rank-k update (half a GEMM's flops): no M x M temporary
    Aw = (Ap * np.sqrt(d)[:, None] if nz.size == Ap.shape[0]
          else Ap[nz] * np.sqrt(d[nz])[:, None])
    if nz.size:
        H = dsyrk(1.0, Aw.T, trans=0, lower=1)  # Aw^T Aw, lower triangle (Fortran order)
    else:
        H = np.zeros((Ap.shape[1], Ap.shape[1]), order="F")
    diag = np.arange(Ap.shape[1])
    H[diag, diag] += e
    t_diag = _diagonal_of(Tp)
    try:
        chol = cho_factor(H, lower=True, check_finite=False)
        if t_diag is None:
            Rp = cho_solve(chol, Tp, check_finite=False)
        else:  # T' diagonal (always, from smba_group_lasso): R' = H^-1 diag(t), by potri
            inv, info = dpotri(chol[0], lower=1)
            if info != 0:  # pragma: no cover - factor of a singular H
                raise np.linalg.LinAlgError("dpotri failed")
            Rp = _symmetric_times_diag(inv, t_diag)
    except np.linalg.LinAlgError:  # pragma: no cover - singular (all eta = 0, affine)
        chol = None
        H = np.tril(H) + np.tril(H, -1).T
        Rp = np.linalg.lstsq(H, Tp, rcond=None)[0]
    return chol, Rp, d, nz


def _eta_finish(Ap, p, lam, eta, chol, Rp, d, nz):
    """The rest of :func:`_eta_eval` from :func:`_eta_solve`'s output: the M x q product
    :math:`G = A'R'` (the evaluation's main cost, :math:`2Mq^2` flops), F, its gradient and
    the duality gap."""
    G = Ap @ Rp
    gn2 = np.einsum("ij,ij->i", G, G)
    R = Rp[:p]
    rr = float(np.einsum("ij,ij->", R, R))
    gn = np.sqrt(gn2)
    theta = lam / max(lam, float(gn.max(initial=0.0)))
    gap = max(0.5 * (1.0 - theta) ** 2 * rr + lam * float(d @ gn) - theta * float(d @ gn2), 0.0)
    F = 0.5 * rr + float(eta @ gn2) / (2.0 * lam) + 0.5 * lam * float(eta.sum())
    grad = 0.5 * lam - gn2 / (2.0 * lam)
    return F, grad, gap, G, chol, Rp, d


def _eta_value(Ap, p, lam, eta, chol, Rp, d, nz):
    r""":math:`F(\eta)` alone from :func:`_eta_solve`'s output: only the rows ``nz`` of G
    (:math:`F` weighs :math:`\|g_i\|^2` by :math:`\eta_i`), :math:`2|nz|q^2` flops instead of
    :math:`2Mq^2` (the Newton phase's line search: a rejected trial point needs no more)."""
    Gz = Ap[nz] @ Rp
    R = Rp[:p]
    rr = float(np.einsum("ij,ij->", R, R))
    return (0.5 * rr + float(eta[nz] @ np.einsum("ij,ij->i", Gz, Gz)) / (2.0 * lam)
            + 0.5 * lam * float(eta.sum()))


def _eta_newton_hessian(Ap, G, chol, lam, free):
    r"""The Hessian of F on the free eta (:func:`_eta_stage`, phase 2), undamped.

    With :math:`K = A'H^{-1}A'^\top` and the rows :math:`g_i` of G, the Hessian of F is
    :math:`\nabla^2 F = K \circ (GG^\top)/\lambda^2` (positive semi-definite by Schur's
    product theorem; from :math:`\partial g_i/\partial\eta_j = -(K_{ij}/\lambda)\,g_j`).
    Returns it and its largest diagonal entry.
    """
    from scipy.linalg import solve_triangular

    Z = solve_triangular(chol[0], Ap[free].T, lower=True, check_finite=False)
    Gf = G[free]
    Hs = (Z.T @ Z) * (Gf @ Gf.T) / (lam * lam)
    return Hs, float(Hs.diagonal().max(initial=0.0))


def _eta_newton_direction(Hs, top, grad_free, mu):
    r"""The damped Newton step: :math:`(\nabla^2_{FF} F + \mu\,\max\operatorname{diag}\,I)
    s = -\nabla_F F` (``Hs`` from :func:`_eta_newton_hessian`, left unchanged), or None if
    the damped matrix is not positive definite. Only this :math:`O(|F|^3)` factorisation is
    repeated when the damping changes."""
    if not top > 0.0:
        return None
    Hd = Hs.copy()
    Hd[np.diag_indices_from(Hd)] += mu * top
    try:
        return -cho_solve(cho_factor(Hd, lower=True, check_finite=False, overwrite_a=True),
                          grad_free, check_finite=False)
    except np.linalg.LinAlgError:
        return None


def _eta_stage(Ap, Tp, e, p, lam, scale, abs_tol, max_eval, gaps):
    r"""Minimise the variational (eta) form of the group lasso: L-BFGS-B, then projected Newton.

    With :math:`\sum_i\|b^i\| = \min_{\eta > 0}\tfrac12\sum_i(\|b^i\|^2/\eta_i + \eta_i)` and
    :math:`D = \operatorname{diag}(\eta)/\lambda`, the minimisation over B for fixed eta is a
    ridge problem in closed form: :math:`b^i = d_i a_i'^\top R'`, where :math:`R'` solves the
    small SPD system :math:`(E + A'DA'^\top)R' = T'` (q x q, q = p or p+1; affine:
    :math:`A' = [\tilde A; \mathbf 1^\top]`, :math:`T' = [Y; \bar w^\top]`,
    :math:`E = \operatorname{diag}(I_p, 0)`, the last row of :math:`R'` is
    :math:`-\nu^\top`, the constraint holds exactly). The value function

    .. math::

        F(\eta) = \tfrac12\|R\|^2 + \tfrac1{2\lambda}\sum_i\eta_i\|g_i\|^2
        + \tfrac\lambda2\sum_i\eta_i, \qquad g_i = a_i'^\top R',

    is convex and smooth on :math:`\eta \ge 0` with :math:`\partial F/\partial\eta_i =
    \tfrac12(\lambda - \|g_i\|^2/\lambda)`; its minimiser has :math:`\eta_i = \|b^i\|` (so
    :math:`\eta_i = 0` exactly on the zero rows). One evaluation costs
    :math:`O(Mq^2 + Mqk)`. Every evaluation also computes the duality gap of its B
    (:func:`_group_gap`'s formula with :math:`g_i`) and the search stops as soon as it is at
    most ``abs_tol``.

    **Phase 1**: L-BFGS-B (bounds :math:`\eta \ge 0`) for :data:`ETA_LBFGS_EVALS` evaluations:
    it finds the support quickly but then converges linearly (issue #33: 800-900 evaluations
    from a relative gap of 1e-4 to 1e-8 on text data, ~O(M n^2) each, so the fit grew as
    n^2.8). **Phase 2**: projected Newton on the free variables (Bertsekas' epsilon-active
    set: variables at the bound whose gradient pushes them there are fixed at 0), with the
    exact Hessian :math:`K \circ (GG^\top)/\lambda^2` (:func:`_eta_newton_hessian`) and
    Levenberg-Marquardt damping (the Hessian is singular along directions that do not change
    B), updated by Nielsen's rule: after a step that passes Armijo's test the damping is
    multiplied by :math:`\max(1/3, 1 - (2\rho - 1)^3)`, :math:`\rho` the ratio of the actual
    to the model's decrease; after a failure by 2, 4, 8, ... (issue #33: the former
    tenfold up / tenfold down alternated between a failed and a passed step, 17 against 26
    Newton iterations at 1000 x 5000). A rejected trial point costs only F on its support
    (:func:`_eta_value`) and a re-factorisation of the damped Hessian; quadratic convergence
    once the support is identified: 15-30 Newton iterations to a relative gap of 1e-9 at
    n = 150-1000, M = 3000-5000. When more than :data:`ETA_NEWTON_MAX_FREE` variables are
    free, L-BFGS-B continues for another round first.

    Returns (eta, B, R', G, gap, n_eval) of the evaluation with the smallest gap.
    """
    from scipy.optimize import minimize

    best = {"gap": np.inf}
    count = [0]

    def record(eta, ev):
        count[0] += 1
        gap, G, Rp, d = ev[2], ev[3], ev[5], ev[6]
        gaps.append(gap / scale)
        if gap < best["gap"]:
            best.update(gap=gap, eta=eta.copy(), Rp=Rp, G=G, d=d)
        return gap <= abs_tol or count[0] >= max_eval

    def fg(eta):
        ev = _eta_eval(Ap, Tp, e, p, lam, eta)
        if record(eta, ev):
            raise _GapReached
        if count[0] >= lbfgs_budget:
            state["eta"], state["ev"] = eta.copy(), ev
            raise _GapReached
        return ev[0] / scale, ev[1] / scale

    M = Ap.shape[0]
    eta = np.full(M, 1.0 / np.sqrt(M))
    state = {}
    while True:
        # phase 1: a round of L-BFGS-B from eta
        lbfgs_budget = count[0] + ETA_LBFGS_EVALS
        state.clear()
        with contextlib.suppress(_GapReached):
            minimize(fg, eta, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * M,
                     options={"maxiter": max_eval, "maxfun": max_eval, "ftol": 1e-16,
                              "gtol": 0.0, "maxcor": 20})
        if best["gap"] <= abs_tol or count[0] >= max_eval or "eta" not in state:
            break  # converged, out of budget, or L-BFGS-B stopped by itself
        eta, ev = state["eta"], state["ev"]
        if _n_free(eta, ev[1]) <= ETA_NEWTON_MAX_FREE:
            break
    if best["gap"] > abs_tol and count[0] < max_eval:
        if "eta" not in state:  # L-BFGS-B stopped by itself: Newton from its best point
            eta = best["eta"]
            ev = _eta_eval(Ap, Tp, e, p, lam, eta)
            if record(eta, ev):
                eta = None
        if eta is not None and ev[4] is not None and _n_free(eta, ev[1]) <= ETA_NEWTON_MAX_FREE:
            _eta_newton(Ap, Tp, e, p, lam, eta, ev, record)
    d = best["d"]
    B = d[:, None] * best["G"]
    return best["eta"], B, best["Rp"], best["G"], best["gap"], count[0]


def _n_free(eta, grad) -> int:
    """Variables off the bound, or at it with a gradient pointing inside."""
    return int(np.count_nonzero((eta > 0) | (grad < 0)))


def _eta_newton(Ap, Tp, e, p, lam, eta, ev, record):
    """Phase 2 of :func:`_eta_stage` from ``eta`` (evaluated as ``ev``) until ``record``
    (which keeps the best evaluation) says to stop.

    The Hessian is formed once per accepted point (:func:`_eta_newton_hessian`); a rejected
    trial point costs a re-factorisation of the damped Hessian and :func:`_eta_value` (the
    rows of G on its support), and is not recorded (no gap: its full G is never formed).
    """
    mu = 1e-6
    nu = 2.0
    while True:
        F, grad, _, G, chol, _, _ = ev
        if chol is None:  # pragma: no cover - singular small system
            return
        # epsilon-active set: at (or within eps of) 0 with the gradient pushing there
        width = float(np.linalg.norm(eta - np.maximum(eta - grad, 0.0)))
        eps = min(1e-3 * float(eta.max(initial=0.0)), width)
        active = (eta <= eps) & (grad > 0.0)
        free = np.flatnonzero(~active)
        if free.size > ETA_NEWTON_MAX_FREE:  # pragma: no cover - guarded by the caller
            return
        Hs, top = _eta_newton_hessian(Ap, G, chol, lam, free)
        grad_free = grad[free]
        while True:
            step = _eta_newton_direction(Hs, top, grad_free, mu)
            if step is None:
                mu *= 10.0
                if mu > 1e6:
                    return
                continue
            new = np.zeros_like(eta)
            new[free] = np.maximum(eta[free] + step, 0.0)
            # the fixed ones by a gradient step, damped alike (the step shrinks to a descent
            # step of the whole eta as mu grows)
            new[active] = np.maximum(eta[active] - grad[active] / (top * (1.0 + mu)), 0.0)
            sol = _eta_solve(Ap, Tp, e, lam, new)
            F_new = _eta_value(Ap, p, lam, new, *sol)
            delta = new - eta
            lin = float(grad @ delta)
            if F_new <= F + 1e-4 * lin:
                ev_new = _eta_finish(Ap, p, lam, new, *sol)
                if record(new, ev_new):
                    return
                # Nielsen's update from the gain ratio rho = actual / predicted decrease
                # (the quadratic model on the free variables, the linear one elsewhere)
                dF = delta[free]
                pred = -(lin + 0.5 * float(dF @ (Hs @ dF)))
                rho = (F - F_new) / pred if pred > 0 else 0.0
                mu = max(mu * max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3), 1e-12)
                nu = 2.0
                break
            mu *= nu
            nu *= 2.0
            if mu > 1e6:
                return  # no descent left at this precision
        eta, ev = new, ev_new


def smba_group_lasso(
    X: np.ndarray,
    lam: float,
    *,
    affine: bool,
    tol: float = 1e-8,
    max_iter: int = 3000,
    rho: float | None = None,
    rcond: float | None = None,
    max_outer: int = 200,
    polish: bool = True,
) -> dict:
    r"""Exact reduced solver of the q = 2 SMBA problem: no M x M array, :math:`O(Mn^2)` per step.

    The problem is reduced to a multi-task group lasso in the row space of X
    (:func:`reduce_smba`: design :math:`A` of r x M, r = rank, k = r or r+1 tasks). Stage 1
    minimises its variational form over :math:`\eta \in \mathbb R^M_{\ge 0}` by L-BFGS-B
    (:func:`_eta_stage`, the affine constraint exact through one extra row of the small
    system), stopping at the duality-gap tolerance. If that stalls above it (L-BFGS-B stops
    when F no longer decreases in float64), stage 2 polishes with exact block coordinate
    descent (:func:`group_lasso_bcd`), warm.

    **Affine polish** (method of multipliers on :math:`B^\top\mathbf 1 = \bar w`): with
    multiplier :math:`\nu \in \mathbb R^k` (warm from stage 1) and penalty :math:`\rho`,

    .. math::

        \tfrac12\|Y - \tilde A B\|^2 + \tfrac\rho2\|B^\top\mathbf 1 - \bar w\|^2
        + \langle\nu, B^\top\mathbf 1 - \bar w\rangle
        = \tfrac12\Big\|\begin{bmatrix}Y\\ \sqrt\rho\,\bar w^\top - \nu^\top/\sqrt\rho
          \end{bmatrix} - \begin{bmatrix}\tilde A\\ \sqrt\rho\,\mathbf 1^\top\end{bmatrix}
          B\Big\|^2 - \tfrac{\|\nu\|^2}{2\rho},

    a group lasso with one more design row, solved warm to the gap tolerance; then
    :math:`\nu \leftarrow \nu + \rho(B^\top\mathbf 1 - \bar w)`.

    In both stages the group gradient :math:`g_i = \tilde a_i^\top R - \nu` is the full
    problem's :math:`x_i^\top(X - XC) - \nu_{full}^\top` in the basis W, so the KKT
    conditions of the full problem hold with :math:`\nu_{full}` (returned).

    Parameters
    ----------
    X : ndarray of shape (n, M)
    lam : float > 0
    affine : bool
    tol : float
        Relative duality gap: stop when the gap is at most ``tol`` times
        :math:`\tfrac12\|\tilde X\|_F^2` (the objective at C = 0, translated) and, in the
        affine polish, every column sum of C is within ``tol`` of 1 (stage 1 meets the
        constraint exactly).
    max_iter : int
        Budget: objective evaluations of stage 1 plus BCD sweeps of stage 2.
    rho : float, optional
        Augmented-Lagrangian penalty (affine polish); default :math:`\|\tilde X\|_F^2/M`.
    rcond : float, optional
        See :func:`reduce_smba`.
    max_outer : int
        Multiplier updates (affine polish).
    polish : bool
        Run stage 2 when stage 1 stops above the tolerance.

    Returns
    -------
    dict
        ``B`` (M x k), ``W`` (M x k: :math:`C = BW^\top`), ``row_norms``, ``grad`` (M x k: the
        :math:`g_i`), ``grad_norms``, ``nu`` (M: :math:`\nu_{full}`, zeros if not affine),
        ``n_iter`` (evaluations + sweeps), ``n_eval`` (stage 1), ``n_outer``, ``converged``,
        ``gap`` (relative gap per evaluation, then per checked sweep), ``violation``
        (max column-sum error of C per multiplier step of the polish), ``rank``.
    """
    red = reduce_smba(X, affine, rcond)
    At, W, scale = red["At"], red["W"], red["scale"]
    M, r = At.shape
    abs_tol = tol * scale
    gaps: list[float] = []
    if affine:
        Ap = np.empty((M, r + 1))
        Ap[:, :r] = At
        Ap[:, r] = 1.0
        Tp = np.vstack([red["T"], red["wbar"][None, :]])
        e = np.r_[np.ones(r), 0.0]
    else:
        Ap, Tp, e = At, red["T"], np.ones(r)
    _, B, Rp, G, gap, n_eval = _eta_stage(Ap, Tp, e, r, lam, scale, abs_tol,
                                          max(1, max_iter), gaps)
    B = np.ascontiguousarray(B)
    n_iter, n_outer, converged = n_eval, 0, gap <= abs_tol
    nu = -Rp[r].copy() if affine else None
    R = Rp[:r]
    viols: list[float] = []
    if not converged and polish and n_iter < max_iter:
        if not affine:
            out = group_lasso_bcd(At, red["T"], lam, B=B, tol=abs_tol,
                                  max_sweeps=max_iter - n_iter)
            B, R, G = out["coef"], out["residual"], At @ out["residual"]
            n_iter += out["n_sweeps"]
            converged = out["converged"]
            gaps.extend((out["gaps"] / scale).tolist())
            n_outer = 1
        else:
            if rho is None:
                rho = 2.0 * scale / M if scale > 0 else 1.0
            sr = np.sqrt(rho)
            Aa = Ap.copy()
            Aa[:, r] = sr
            T = np.zeros((r + 1, r + 1))
            T[:r] = red["T"]
            wbar = red["wbar"]
            ws = None
            for n_outer in range(1, max_outer + 1):  # noqa: B007 - the count is returned
                T[r] = sr * wbar - nu / sr
                out = group_lasso_bcd(Aa, T, lam, B=B, tol=abs_tol,
                                      max_sweeps=max_iter - n_iter, ws_size=ws)
                B = out["coef"]
                ws = out["ws_size"]
                n_iter += out["n_sweeps"]
                gaps.extend((out["gaps"] / scale).tolist())
                dv = B.sum(axis=0) - wbar
                nu = nu + rho * dv
                viol = float(np.abs(W @ dv).max(initial=0.0))
                viols.append(viol)
                if out["converged"] and viol <= tol:
                    converged = True
                    break
                if n_iter >= max_iter:
                    break
            R = out["residual"][:r]
            G = Aa @ out["residual"]  # = A~^T R_top - 1 nu_+^T
    # nu_full = W nu + R_full^T ybar, with R_full = U R W^T on the constraint
    nu_full = W @ (nu + R.T @ (red["U"].T @ red["ybar"])) if affine else np.zeros(M)
    return {"B": B, "W": W, "row_norms": np.sqrt(np.einsum("ij,ij->i", B, B)),
            "grad": G, "grad_norms": np.sqrt(np.einsum("ij,ij->i", G, G)), "nu": nu_full,
            "n_iter": n_iter, "n_eval": n_eval, "n_outer": n_outer,
            "converged": bool(converged), "gap": np.asarray(gaps),
            "violation": np.asarray(viols), "rank": r}


# --------------------------------------------------------------------------------------------
# the driver
# --------------------------------------------------------------------------------------------


def merge_duplicate_rows(A: np.ndarray, groups: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    r"""Replace the rows of ``A`` (indexed by feature) of every group of duplicated features
    by the group's mean row (a new array; ``A`` itself when ``groups`` is None).

    **Why this keeps a solution optimal** (merge and split). If features i and i' are equal,
    :math:`XC` depends on rows :math:`c^i, c^{i'}` only through their sum, so replacing both
    by their mean leaves the loss unchanged and, by the triangle inequality
    (:math:`2\|(c^i + c^{i'})/2\| \le \|c^i\| + \|c^{i'}\|`, any norm), does not raise the
    penalty; the affine constraint (column sums) is kept. The mean of an optimal C is optimal,
    and the copies get bit-identical rows, hence exactly equal scores.
    """
    if groups is None:
        return A
    inverse, counts = groups
    dup = np.flatnonzero(counts[inverse] > 1)
    out = np.array(A, dtype=np.float64, copy=True)
    gid = inverse[dup]
    uniq, local = np.unique(gid, return_inverse=True)
    sums = np.zeros((uniq.size, *A.shape[1:]))
    np.add.at(sums, local, out[dup])
    sums /= counts[uniq].reshape((-1, *(1,) * (A.ndim - 1)))
    out[dup] = sums[local]
    return out


def _zero_solution_dual(X: np.ndarray, q: int) -> np.ndarray:
    """``||P_i||_{q*}`` for every row of P = X^T X (q* = inf for q = 1, 2 for q = 2)."""
    M = X.shape[1]
    if q == 2:
        return np.sqrt(np.maximum(_quad_form_cols(X, X @ X.T), 0.0))
    out = np.empty(M)
    width = max(1, min(M, _SCAN_BYTES // (8 * M)))
    for start in range(0, M, width):
        out[start:start + width] = np.abs(X[:, start:start + width].T @ X).max(axis=1)
    return out


def auto_block_size(n_features: int, budget_bytes: int = BLOCK_BYTES) -> int:
    """Column block width keeping three (M x B) float64 arrays within ``budget_bytes``."""
    return max(1, min(n_features, budget_bytes // max(1, 24 * n_features)))


@dataclass
class SMBAResult:
    """Outcome of :func:`smba`.

    Attributes
    ----------
    row_norms : ndarray of shape (M,)
        :math:`r_i = \\|c^i\\|_q` (the ranking score).
    dual : ndarray of shape (M,)
        :math:`s_i = \\|v^i\\|_{q^*}`, V = Z + Lambda/mu2 at the last iterate; for every zero row
        :math:`s_i \\le 1/\\mu_2` (the row enters the support when it exceeds it).
    coef : ndarray of shape (M, M) or None
    n_iter : int
        Iterations run (the largest over column blocks).
    converged : bool
    err1, err2 : ndarray of shape (n_iter,)
        Global mean :math:`|Z - C|` and :math:`|1 - \\mathbf 1^\\top Z|` per iteration (a block
        that stopped contributes its final value).
    lambda_, lambda_max : float
    mu1, mu2 : float
    solver : str
        The solver that ran (``"admm"``, ``"working_set"``, ``"group_lasso"``).
    gap : ndarray or None
        ``"group_lasso"``: the relative duality gap per step (also in ``err1``; ``err2`` then
        holds the affine polish's column-sum error per multiplier step, often empty).
    nu : ndarray of shape (M,) or None
        ``"group_lasso"``: the affine multiplier :math:`\nu` of the KKT conditions
        :math:`X^\\top(X - XC) - \\mathbf 1\\nu^\\top \\in \\lambda\\,\\partial\\sum_i\\|c^i\\|`
        (zeros when not affine).
    """

    row_norms: np.ndarray
    dual: np.ndarray
    coef: np.ndarray | None
    n_iter: int
    converged: bool
    err1: np.ndarray
    err2: np.ndarray
    lambda_: float
    lambda_max: float
    mu1: float
    mu2: float
    solver: str = "admm"
    gap: np.ndarray | None = None
    nu: np.ndarray | None = None


def _pad_last(values: list[np.ndarray], length: int) -> np.ndarray:
    out = np.zeros(length)
    for v in values:
        if v.size:
            out[: v.size] += v
            out[v.size:] += v[-1]
    return out


def smba(
    X: np.ndarray,
    alpha: float,
    *,
    q: int = 2,
    affine: bool = True,
    lambda_scale: str = "dual",
    tol: float = 1e-8,
    max_iter: int = 3000,
    block_size: int | None = None,
    keep_coef: bool = False,
    solver: str = "admm",
) -> SMBAResult:
    r"""Solve the SMBA self-representation problem and return the row scores.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64
        Already preprocessed (centred / rescaled) as wanted; no column may be all-zero for the
        scale to be meaningful (zero columns just get zero rows).
    alpha : float > 0
        :math:`\lambda = \lambda_{max}/\alpha`; also the ADMM penalty :math:`\mu_2`.
    q : {1, 2}
    affine : bool
    lambda_scale : {"dual", "smba_code"}
        See :func:`lambda_max`.
    tol, max_iter
        Stopping rule of spec A.4 (at most ``max_iter`` iterations).
    block_size : int or None
        q = 1 only: column block width (None: :func:`auto_block_size`, the whole matrix when it
        fits in ~256 MB of workspace). Each block stops on its own criterion.
    keep_coef : bool
        Return C (M x M).
    solver : {"admm", "working_set", "group_lasso"}
        q = 2 only: the ADMM on all of C (:func:`admm_woodbury`), or on a growing set of rows
        certified by the optimality conditions (:func:`smba_working_set`; ``n_iter`` then sums
        the restricted solves), or the exact reduced solver (:func:`smba_group_lasso`: the
        row-space group lasso, ``tol`` is then a relative duality gap, ``n_iter`` counts its
        evaluations and sweeps, ``dual`` is :math:`\|c^i + g_i/(\lambda\mu_2)\|`, the
        ADMM's :math:`\|v^i\|` at its fixed point). ``"admm"`` and ``"working_set"`` are
        ignored for q = 1; ``"group_lasso"`` with q = 1 raises ``ValueError``.

    Returns
    -------
    SMBAResult
    """
    if alpha <= 0:
        raise ValueError(f"alpha must be > 0; got {alpha!r}.")
    if solver not in ("admm", "working_set", "group_lasso"):
        raise ValueError(f"solver must be 'admm', 'working_set' or 'group_lasso'; got {solver!r}.")
    if solver == "group_lasso" and q != 2:
        raise ValueError("solver='group_lasso' solves the row-group (q = 2, 'l1,2') penalty "
                         "only; use solver='admm' for q = 1 (column blocks).")
    X = np.ascontiguousarray(X, dtype=np.float64)
    M = X.shape[1]
    # exactly duplicated features: their rows of C are merged (mean) so copies tie exactly
    groups = duplicate_partition(X)
    lmax = lambda_max(X, q, affine, lambda_scale)
    if lmax <= 0.0:
        # no loss gradient at the trivial point (X = 0, or, affine, all features equal): every
        # feasible C of least penalty is optimal; take C = 0, or, affine, I (q = 1) or
        # 1 1^T / M (q = 2), whose row norms are the scores
        least = 1.0 if q == 1 else 1.0 / np.sqrt(max(M, 1))
        r = np.full(M, least) if affine else np.zeros(M)
        coef = None
        if keep_coef:
            coef = np.eye(M) if (affine and q == 1) else (
                np.full((M, M), 1.0 / max(M, 1)) if affine else np.zeros((M, M)))
        return SMBAResult(r, np.zeros(M), coef, 0, True, np.zeros(0), np.zeros(0),
                          0.0, 0.0, np.inf, float(alpha))
    lam = lmax / alpha
    mu1, mu2 = 1.0 / lam, float(alpha)
    if not affine:
        thr = lmax if lambda_scale == "dual" else lambda_max(X, q, False, "dual")
        if lam >= thr:
            # C = 0 is optimal (lambda above the zero threshold): the ADMM's fixed point is
            # C = Z = 0, Lambda = mu1 X^T X, so s_i = (mu1/mu2) ||P_i||_{q*}; no iteration
            dual = merge_duplicate_rows(_zero_solution_dual(X, q), groups)
            return SMBAResult(np.zeros(M), dual * (mu1 / mu2),
                              np.zeros((M, M)) if keep_coef else None, 0, True, np.zeros(0),
                              np.zeros(0), lam, lmax, mu1, mu2)
    if q == 2 and solver == "group_lasso":
        out = smba_group_lasso(X, lam, affine=affine, tol=tol, max_iter=max_iter)
        B = merge_duplicate_rows(out["B"], groups)
        G = merge_duplicate_rows(out["grad"], groups)
        V = B + G * (1.0 / (lam * mu2))  # the ADMM's Z + Lambda/mu2 at its fixed point
        dual = np.sqrt(np.einsum("ij,ij->i", V, V))
        coef = B @ out["W"].T if keep_coef else None
        row_norms = (out["row_norms"] if groups is None
                     else np.sqrt(np.einsum("ij,ij->i", B, B)))
        return SMBAResult(row_norms, dual, coef, out["n_iter"], out["converged"],
                          out["gap"], out["violation"], lam, lmax, mu1, mu2,
                          solver="group_lasso", gap=out["gap"], nu=out["nu"])
    if q == 2 and solver == "working_set":
        out = smba_working_set(X, lam, mu2, affine=affine, tol=tol, max_iter=max_iter)
        coef = None
        row_norms = out["row_norms"]
        if keep_coef:
            coef = np.zeros((M, M))
            coef[out["rows"]] = out["coef_rows"]
            if groups is not None:
                coef = merge_duplicate_rows(coef, groups)
                row_norms = np.sqrt(np.einsum("ij,ij->i", coef, coef))
        elif groups is not None:
            # C is not formed: the copies' row norms are averaged (equal to the norm of the
            # mean row at an exact optimum, where the copies' rows are parallel)
            row_norms = merge_duplicate_rows(row_norms, groups)
        dual = merge_duplicate_rows(out["dual"], groups)
        return SMBAResult(row_norms, dual, coef, out["n_iter"], out["converged"],
                          out["err1"], out["err2"], lam, lmax, mu1, mu2, solver="working_set")
    if q == 2:
        out = admm_woodbury(X, mu1, mu2, q=2, affine=affine, tol=tol, max_iter=max_iter)
        C = merge_duplicate_rows(out["coef"], groups)
        r = np.sqrt(np.einsum("ij,ij->i", C, C))
        dual = merge_duplicate_rows(out["dual"], groups)
        return SMBAResult(r, dual, C if keep_coef else None, out["n_iter"],
                          out["converged"], out["err1"], out["err2"], lam, lmax, mu1, mu2)
    U, QinvUt = woodbury_factors(X, mu1, mu2, affine)
    width = auto_block_size(M) if block_size is None else max(1, min(int(block_size), M))
    r = np.zeros(M)
    s = np.zeros(M)
    coef = np.empty((M, M)) if keep_coef else None
    sums, e2s, n_iter, converged = [], [], 0, True
    for start in range(0, M, width):
        cols = slice(start, min(start + width, M))
        res = admm_l1_columns(U, QinvUt, mu2, cols, affine=affine, tol=tol,
                              max_iter=max_iter, keep_coef=keep_coef, groups=groups)
        r += res.row_abs
        np.maximum(s, res.row_dual, out=s)
        if keep_coef:
            coef[:, cols] = res.coef
        sums.append(res.sum_abs_zc)
        e2s.append(res.err2 * (cols.stop - cols.start))
        n_iter = max(n_iter, res.n_iter)
        converged &= res.converged
    err1 = _pad_last(sums, n_iter) / float(M * M)
    err2 = _pad_last(e2s, n_iter) / float(M)
    s = merge_duplicate_rows(s, groups)
    return SMBAResult(r, s, coef, n_iter, bool(converged), err1, err2, lam, lmax, mu1, mu2)


# --------------------------------------------------------------------------------------------
# ranking helpers
# --------------------------------------------------------------------------------------------


def representatives_prefix(row_norms: np.ndarray, order: np.ndarray, eta: float) -> np.ndarray:
    r"""The shortest prefix of ``order`` whose cumulative score reaches :math:`\eta\sum_i r_i`.

    The index where the threshold is crossed is kept (the MATLAB SMRS convention, spec A.5).
    Empty when every score is zero.
    """
    vals = np.asarray(row_norms, dtype=np.float64)[order]
    cum = np.cumsum(vals)
    if cum.size == 0 or cum[-1] <= 0.0:
        return order[:0]
    k = int(np.searchsorted(cum, eta * cum[-1], side="left")) + 1
    return order[: min(k, order.size)]
