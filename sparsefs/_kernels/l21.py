r"""Shared machinery of the sparse linear selectors: designs, scores, penalty paths.

The selectors RFS, ls-l21, ll-l21 and the l1 / elastic-net logistic selectors all solve

.. math::

    \min_{W \in \mathbb{R}^{d \times c},\, b \in \mathbb{R}^c}
        f(XW + \mathbf{1} b^\top) + \lambda\,\Omega(W)

with a data fit :math:`f` (least squares, multinomial logistic, or the l2,1 "robust" loss of RFS)
and a row-sparse (:math:`\Omega = \|W\|_{2,1} = \sum_j \|w^j\|_2`) or entry-sparse (elastic net)
penalty. The data fits, the l2,1 penalty and the solvers (the working-set proximal gradient,
FISTA, the IRLS step of RFS) are the shared ones of :mod:`sparsefs._kernels.group_lasso` (also
SMBA's; the l2,1 penalty is re-exported here), the elastic-net penalty is in
:mod:`sparsefs._kernels.elastic_net`. This module holds the rest they share:

* the design preparation (centring and scaling without overflow; sparse X as an implicitly
  centred operator, never densified) and the selection scores of a row-sparse solution;
* a penalty path search that reaches a requested number of nonzero rows.

No scikit-learn import, no global state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from sparsefs._kernels.centered import CenteredSparse, center_sparse
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
    "PathResult",
    "PreparedX",
    "group_soft_threshold",
    "l21_norm",
    "nonzero_rows",
    "path_to_n_nonzero",
    "prepare_design",
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
    if sp.issparse(X):  # the same arithmetic on the stored values, column access
        return PreparedX(*center_sparse(X, standardize=standardize, center=center, fmt="csc"))
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
