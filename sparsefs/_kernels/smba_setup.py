r"""SMBA's problem setup: the penalty scale, the trivial solution's dual, block sizes, the
representatives. See :mod:`sparsefs._kernels.smba` for the problem.

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
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "BLOCK_BYTES",
    "SCAN_BYTES",
    "auto_block_size",
    "lambda_max",
    "representatives_prefix",
    "zero_solution_dual",
]

#: bytes of float64 workspace the automatic column block may take (budgeted as 3 M x B arrays:
#: the two iterates and a copy of the block's C)
BLOCK_BYTES = 256 * 2**20
#: bytes of an (M x B) scratch array used by the blockwise lambda_max scan
SCAN_BYTES = 32 * 2**20


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
    width = max(1, min(M, SCAN_BYTES // (8 * M)))
    best = 0.0
    for start in range(0, M, width):
        block = X.T @ X[:, start:start + width]
        block -= b[:, None]
        best = max(best, float(np.abs(block).max()))
    return best


# --------------------------------------------------------------------------------------------
# the trivial solution, block sizes, the representatives
# --------------------------------------------------------------------------------------------


def zero_solution_dual(X: np.ndarray, q: int) -> np.ndarray:
    """``||P_i||_{q*}`` for every row of P = X^T X (q* = inf for q = 1, 2 for q = 2)."""
    M = X.shape[1]
    if q == 2:
        return np.sqrt(np.maximum(_quad_form_cols(X, X @ X.T), 0.0))
    out = np.empty(M)
    width = max(1, min(M, SCAN_BYTES // (8 * M)))
    for start in range(0, M, width):
        out[start:start + width] = np.abs(X[:, start:start + width].T @ X).max(axis=1)
    return out


def auto_block_size(n_features: int, budget_bytes: int = BLOCK_BYTES) -> int:
    """Column block width keeping three (M x B) float64 arrays within ``budget_bytes``."""
    return max(1, min(n_features, budget_bytes // max(1, 24 * n_features)))


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
