r"""SMBA / SMRS: sparse self-representation of the features - the driver (:func:`smba`).

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

**Where the pieces live** (issue #34: one seam per module).

* :mod:`sparsefs._kernels.smba_setup` - the penalty scale :math:`\lambda_{max}`
  (:func:`lambda_max`), the dual of the trivial solution, the column block size, the
  representatives' prefix;
* :mod:`sparsefs._kernels.smba_admm` - the ADMM of the authors' code (spec A.4) with the Woodbury
  Z-step, in column blocks (q = 1) or on a working set of rows (q = 2);
* :mod:`sparsefs._kernels.smba_reduced` - the exact reduced solver for q = 2 (the default of
  :class:`~sparsefs.selection.SMBA`): a multi-task group lasso in the row space of X;
* shared with other methods: the l2,1 penalty, its prox and the group-lasso BCD solver in
  :mod:`sparsefs._kernels.group_lasso`, duplicated features in
  :mod:`sparsefs._kernels.columns` (:func:`merge_duplicate_rows`: copies get the mean row).

This module re-exports their public names, so ``sparsefs._kernels.smba`` stays the one way in.

References
----------
D. Nardone, A. Ciaramella, A. Staiano, "A sparse-modeling based approach for class specific
feature selection", PeerJ Computer Science 5:e237, 2019.
E. Elhamifar, G. Sapiro, R. Vidal, "See all by looking at a few: sparse modeling for finding
representative objects", CVPR 2012.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sparsefs._kernels import group_lasso as gl
from sparsefs._kernels.columns import duplicate_partition, merge_duplicate_rows
from sparsefs._kernels.group_lasso import group_lasso_bcd
from sparsefs._kernels.smba_admm import (
    ADMMBlockResult,
    admm_l1_columns,
    admm_l12_rows,
    admm_woodbury,
    prox_l1,
    prox_l12_rows,
    smba_working_set,
    woodbury_factors,
)
from sparsefs._kernels.smba_reduced import reduce_smba, smba_group_lasso
from sparsefs._kernels.smba_setup import (
    auto_block_size,
    lambda_max,
    representatives_prefix,
    zero_solution_dual,
)

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
            dual = merge_duplicate_rows(zero_solution_dual(X, q), groups)
            return SMBAResult(np.zeros(M), dual * (mu1 / mu2),
                              np.zeros((M, M)) if keep_coef else None, 0, True, np.zeros(0),
                              np.zeros(0), lam, lmax, mu1, mu2)
    if q == 2 and solver == "group_lasso":
        out = smba_group_lasso(X, lam, affine=affine, tol=tol, max_iter=max_iter)
        B = merge_duplicate_rows(out["B"], groups)
        G = merge_duplicate_rows(out["grad"], groups)
        V = B + G * (1.0 / (lam * mu2))  # the ADMM's Z + Lambda/mu2 at its fixed point
        dual = gl.row_norms(V, safe=False)
        coef = B @ out["W"].T if keep_coef else None
        row_norms = (out["row_norms"] if groups is None
                     else gl.row_norms(B, safe=False))
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
                row_norms = gl.row_norms(coef, safe=False)
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
        r = gl.row_norms(C, safe=False)
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
