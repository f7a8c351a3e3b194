r"""Sparse KOS, the kernel layer: the feature-weighted Gaussian kernel, its centring, row
grouping for repeated rows, the Stabilization ridge and the bandwidth candidates.

Part of :mod:`sparsefs._kernels.sparse_kos` (notation there). Kernels are one GEMM of augmented
matrices (performance notes section 8: no distance temporaries).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

#: :func:`weighted_kernel` groups equal rows when at most this share of the rows is distinct
GROUP_RATIO = 0.75

# --------------------------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------------------------


def squared_distances(
    X: np.ndarray, Y: np.ndarray | None = None, weights: np.ndarray | None = None
) -> np.ndarray:
    r"""Pairwise :math:`\|w\circ x_i - w\circ y_j\|^2` by one GEMM (clipped at 0).

    Parameters
    ----------
    X : ndarray of shape (n, p)
    Y : ndarray of shape (m, p), optional
        Defaults to ``X`` (then the result is exactly symmetric with a zero diagonal).
    weights : ndarray of shape (p,), optional
        Feature weights :math:`w` (default 1).

    Returns
    -------
    D : ndarray of shape (n, m)
    """
    Xw = X if weights is None else X * weights
    same = Y is None
    Yw = Xw if same else (Y if weights is None else Y * weights)
    if same:
        D = Xw @ Xw.T
        sq = np.diag(D).copy()
    else:
        D = Xw @ Yw.T
        sq = np.einsum("ij,ij->i", Xw, Xw)
    sq_y = sq if same else np.einsum("ij,ij->i", Yw, Yw)
    D *= -2.0
    D += sq[:, None]
    D += sq_y[None, :]
    np.maximum(D, 0.0, out=D)
    if same:  # X @ X.T is computed symmetrically (SYRK), so D is exactly symmetric
        np.fill_diagonal(D, 0.0)
    return D


def gaussian_kernel(
    X: np.ndarray,
    sigma2: float,
    weights: np.ndarray | None = None,
    Y: np.ndarray | None = None,
) -> np.ndarray:
    r"""Weighted Gaussian kernel :math:`\exp(-\|w\circ x_i - w\circ y_j\|^2/\sigma^2)`.

    ONE GEMM of augmented matrices gives the exponent directly,
    :math:`[\sqrt{2}\tilde x_i, -h_i, 1]\cdot[\sqrt{2}\tilde y_j, 1, -h_j]
    = -\|\tilde x_i - \tilde y_j\|^2/\sigma^2` with :math:`\tilde x = w\circ x/\sigma`,
    :math:`h_i = \|\tilde x_i\|^2`; then one clipping pass and an in-place ``np.exp``
    (performance notes section 8: no distance temporaries). Features with :math:`w_l = 0` are
    dropped before the GEMM. For ``Y=None`` the diagonal is exactly 1.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    sigma2 : float
        Bandwidth :math:`\sigma^2 > 0` (the kernel divides by it, as in the paper).
    weights : ndarray of shape (p,), optional
    Y : ndarray of shape (m, p), optional
        Defaults to ``X``.

    Returns
    -------
    K : ndarray of shape (n, m)
    """
    scale = 1.0 / math.sqrt(sigma2)
    if weights is None:
        Xw = X * scale
        Yw = None if Y is None else Y * scale
    else:
        nz = np.flatnonzero(weights)
        f = weights[nz] * scale
        Xw = X[:, nz] * f
        Yw = None if Y is None else Y[:, nz] * f
    same = Yw is None
    Yw = Xw if same else Yw
    hx = np.einsum("ij,ij->i", Xw, Xw)
    hy = hx if same else np.einsum("ij,ij->i", Yw, Yw)
    s = Xw.shape[1]
    left = np.empty((Xw.shape[0], s + 2))
    left[:, :s] = Xw
    left[:, :s] *= math.sqrt(2.0)
    left[:, s] = -hx
    left[:, s + 1] = 1.0
    right = np.empty((Yw.shape[0], s + 2))
    right[:, :s] = Yw
    right[:, :s] *= math.sqrt(2.0)
    right[:, s] = 1.0
    right[:, s + 1] = -hy
    K = left @ right.T
    np.minimum(K, 0.0, out=K)
    np.exp(K, out=K)
    if same:
        np.fill_diagonal(K, 1.0)
    return K


def double_center(K: np.ndarray, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    r"""The doubly centred kernel :math:`M = CKC` (plus ``shift`` on the diagonal).

    Parameters
    ----------
    K : ndarray of shape (n, n), symmetric
    shift : float
        Added to the diagonal (a ready-to-factor :math:`M + sI`).

    Returns
    -------
    M : ndarray of shape (n, n)
    col_mean : ndarray of shape (n,)
        :math:`\bar k_i = \frac1n \sum_j K_{ji}`, needed by the projection (6).
    """
    K = np.asarray(K)
    col_mean = K.mean(axis=0)
    M = K - col_mean[None, :]
    M -= col_mean[:, None]
    M += col_mean.mean()
    if shift:
        M.flat[:: M.shape[0] + 1] += shift
    return M, col_mean


class GroupedKernel:
    r"""The kernel of ``n`` rows of which only ``m`` are distinct, kept as :math:`m \times m`.

    With the row-to-group map ``inv`` (a 0/1 matrix :math:`P`, n x m, :math:`P^\top 1 = c`, the
    group sizes), :math:`K = P K_u P^\top` **exactly**: equal rows of :math:`w \circ X` have
    equal kernel rows. Products cost :math:`O(m^2 + n)` per column instead of :math:`O(n^2)`,
    and the closed form (5) is solved at size ``m`` (:func:`kos_dual_coef` on
    :meth:`reduced_centered`). Duck-types the ndarray operations the algorithm uses
    (``K @ V``, ``K.mean(axis=0)``, ``K.shape``); ``np.asarray(K)`` expands the n x n matrix.

    Parameters
    ----------
    Ku : ndarray of shape (m, m)
        Kernel of the distinct rows.
    inv : ndarray of shape (n,)
        Group of each row.
    counts : ndarray of shape (m,)
        Group sizes (all positive).
    """

    def __init__(self, Ku: np.ndarray, inv: np.ndarray, counts: np.ndarray):
        self.Ku = Ku
        self.inv = np.asarray(inv, dtype=np.intp)
        self.counts = np.asarray(counts, dtype=np.float64)
        n, m = self.inv.shape[0], Ku.shape[0]
        self._sum = sp.csr_array((np.ones(n), (self.inv, np.arange(n))), shape=(m, n))

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, n)``, the shape of the full kernel."""
        return (self.inv.shape[0], self.inv.shape[0])

    ndim = 2
    dtype = np.dtype(np.float64)

    def group_sum(self, V: np.ndarray) -> np.ndarray:
        """:math:`P^\top V`: the rows of ``V`` summed per group."""
        return np.asarray(self._sum @ V)

    def __matmul__(self, V: np.ndarray) -> np.ndarray:
        return (self.Ku @ self.group_sum(V))[self.inv]

    def mean(self, axis: int = 0) -> np.ndarray:
        """Column (= row) means of the full kernel."""
        if axis not in (0, 1):
            raise ValueError("GroupedKernel.mean supports axis=0 or 1 only.")
        return (self.Ku @ self.counts)[self.inv] / self.inv.shape[0]

    def reduced_centered(self) -> np.ndarray:
        r""":math:`M_r = D^{1/2}(I - 1c^\top/n)K_u(I - c1^\top/n)D^{1/2}`, :math:`D =
        \mathrm{diag}(c)`: with :math:`U = PD^{-1/2}` (orthonormal columns),
        :math:`CKC = U M_r U^\top`."""
        n = self.inv.shape[0]
        kbar = self.Ku @ self.counts / n
        M = self.Ku - kbar[None, :]
        M -= kbar[:, None]
        M += float(self.counts @ kbar) / n
        sq = np.sqrt(self.counts)
        M *= sq[:, None]
        M *= sq[None, :]
        return M

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        full = self.Ku[np.ix_(self.inv, self.inv)]
        return full if dtype is None else full.astype(dtype, copy=False)


def _row_groups(X: np.ndarray, act: np.ndarray):
    """Distinct rows of ``X[:, act]``: (first index, inverse, counts)."""
    if act.size == 0:
        n = X.shape[0]
        return np.zeros(1, dtype=np.intp), np.zeros(n, dtype=np.intp), np.array([n])
    _, first, inv, counts = np.unique(
        X[:, act], axis=0, return_index=True, return_inverse=True, return_counts=True
    )
    return first, inv.ravel(), counts


def weighted_kernel(
    X: np.ndarray,
    sigma2: float,
    weights: np.ndarray,
    *,
    group_ratio: float | None = None,
    cache: dict | None = None,
) -> np.ndarray | GroupedKernel:
    r"""The training kernel :math:`K_w`, as a :class:`GroupedKernel` when rows repeat.

    Rows equal on the features with :math:`w_l \ne 0` have equal kernel rows, so when at most
    ``group_ratio`` (default :data:`GROUP_RATIO`) of the ``n`` rows are distinct the kernel is
    kept as the m x m kernel of the distinct rows (exact; discrete or few selected features,
    e.g. the credit data once a few repayment-status codes remain). Otherwise the dense
    :func:`gaussian_kernel`.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    sigma2 : float
    weights : ndarray of shape (p,)
    group_ratio : float, optional
        0 disables grouping.
    cache : dict, optional
        Groupings by active set (they depend only on which weights are nonzero).

    Returns
    -------
    K : ndarray of shape (n, n) or GroupedKernel
    """
    ratio = GROUP_RATIO if group_ratio is None else float(group_ratio)
    n = X.shape[0]
    if ratio <= 0.0 or n < 4:
        return gaussian_kernel(X, sigma2, weights)
    act = np.flatnonzero(weights)
    key = act.tobytes()
    groups = None if cache is None else cache.get(key)
    if groups is None:
        groups = _row_groups(X, act)
        if cache is not None:
            cache[key] = groups
    first, inv, counts = groups
    if first.shape[0] > ratio * n:
        return gaussian_kernel(X, sigma2, weights)
    return GroupedKernel(gaussian_kernel(X[first], sigma2, weights), inv, counts)


def _centered_product(K: np.ndarray, V: np.ndarray) -> np.ndarray:
    """:math:`CKCV` without forming :math:`CKC` (one pass over K)."""
    KU = K @ (V - V.mean(axis=0))
    KU -= KU.mean(axis=0)
    return KU


def stabilization_ridge(M: np.ndarray, *, max_shrinkage: float = 1.0 - 1e-8) -> tuple[float, float]:
    r"""The ridge :math:`\hat\gamma` by "Stabilization" (Lancewicki 2017, spec 2.9 item 2).

    .. math::

        \tilde t = \frac{n\,(\sum_i M_{ii}^2 - \|M\|_F^2/n)}{(n-2)\,\|M\|_F^2},\qquad
        \hat t = \min(\max(0, \tilde t), 1 - 10^{-8}),\qquad
        \hat\gamma = \hat t/(1 - \hat t),

    the Ledoit-Wolf-type shrinkage intensity of the feature-space covariance, computed from the
    centred kernel :math:`M = CK_1C` at :math:`w = 1`. The packages never clip
    :math:`\tilde t`; the clip (and the cap below 1) keeps :math:`\hat\gamma` finite and
    non-negative.

    Parameters
    ----------
    M : ndarray of shape (n, n)
        Doubly centred, unweighted kernel of the training data; needs ``n >= 3``.
    max_shrinkage : float
        Cap on :math:`\hat t` (guards :math:`\hat t = 1`).

    Returns
    -------
    ridge : float
        :math:`\hat\gamma`.
    shrinkage : float
        :math:`\hat t`.
    """
    n = M.shape[0]
    fro2 = float(np.einsum("ij,ij->", M, M))
    if n < 3 or fro2 <= 0.0:
        return 0.0, 0.0
    diag2 = float(np.dot(np.diag(M), np.diag(M)))
    t = n * (diag2 - fro2 / n) / ((n - 2) * fro2)
    t = min(max(t, 0.0), max_shrinkage)
    return t / (1.0 - t), t


def sigma2_candidates(
    X: np.ndarray,
    y_idx: np.ndarray,
    quantiles=(0.05, 0.1, 0.2, 0.3, 0.5),
    rule: str = "paper",
) -> np.ndarray:
    r"""Bandwidth candidates: quantiles of the between-class distances (spec 2.9 item 1).

    ``rule="paper"``: quantiles of :math:`\{\|x_i - x_j\|^2 : y_i \ne y_j\}` (squared).
    ``rule="package"``: quantiles of the unsquared distances, used directly as :math:`\sigma^2`
    (what the R packages compute). Quantiles are numpy's default (linear interpolation) over
    every pair ``i < j`` from different classes. A non-positive quantile (duplicated points)
    is replaced by the smallest positive between-class value (1 if there is none).

    Parameters
    ----------
    X : ndarray of shape (n, p)
        The (standardised) training data.
    y_idx : ndarray of shape (n,)
    quantiles : sequence of float in [0, 1]
    rule : {"paper", "package"}

    Returns
    -------
    sigma2 : ndarray of shape (len(quantiles),)
    """
    if rule not in ("paper", "package"):
        raise ValueError(f"rule={rule!r} is not one of ('paper', 'package').")
    D = squared_distances(X)
    mask = np.triu(y_idx[:, None] != y_idx[None, :], 1)
    vals = D[mask]
    del D
    if rule == "package":
        np.sqrt(vals, out=vals)
    if vals.size == 0:
        return np.ones(len(quantiles))
    out = np.quantile(vals, np.asarray(quantiles, dtype=np.float64))
    bad = ~(out > 0)
    if bad.any():
        pos = vals[vals > 0]
        out[bad] = pos.min() if pos.size else 1.0
    return out
