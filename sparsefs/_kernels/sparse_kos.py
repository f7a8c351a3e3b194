r"""Sparse kernel optimal scoring (Lapanowski & Gaynanova, AISTATS 2019): the math as arrays.

Samples are rows of ``X`` (n x p), classes are indices ``0..K-1``, ``q = K - 1`` score vectors.
Notation (sparsefs spec ``sparse-kos.md``):

* weighted Gaussian kernel :math:`(K_w)_{ij} = \exp(-\sum_l w_l^2 (x_{il}-x_{jl})^2/\sigma^2)`;
* centring :math:`C = I - 11^\top/n`, :math:`M_w = C K_w C`;
* scores :math:`Z = Y\Theta` (n x q) with :math:`1^\top Z = 0`, :math:`Z^\top Z/n = I_q`;
* objective (12) :math:`F(A, w) = \tfrac1n\|Z - M_w A\|_F^2
  + \gamma\,\mathrm{tr}\,A^\top(M_w + \varepsilon I)A + \lambda\|w\|_1`,
  :math:`w \in [-1, 1]^p`, :math:`\varepsilon = 10^{-5}`.

For ``K = 2`` (``q = 1``) every function reduces to the paper's binary formulas with
:math:`A = \alpha`. Nothing here imports scikit-learn; coordinate descent is compiled by numba
(``cache=True``); kernels, Jacobians and gradients are BLAS GEMMs (never a per-feature n x n loop).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from numba import njit

__all__ = [
    "EPS",
    "GROUP_RATIO",
    "FactoredQ",
    "GroupedKernel",
    "KOSFit",
    "KOSState",
    "coordinate_descent",
    "double_center",
    "gaussian_kernel",
    "kernel_jacobian",
    "kos_dual_coef",
    "kos_objective",
    "kos_state",
    "lambda_max",
    "optimal_scores",
    "project",
    "quadratic_model",
    "score_vectors",
    "sigma2_candidates",
    "sparse_kos",
    "sparse_kos_path",
    "squared_distances",
    "stabilization_ridge",
    "weight_gradient",
    "weighted_kernel",
]

#: the paper's stabilising constant in the ridge term :math:`\gamma A^\top (M + \varepsilon I) A`
EPS = 1e-5

#: :func:`weighted_kernel` groups equal rows when at most this share of the rows is distinct
GROUP_RATIO = 0.75

# (M + aI)^{-1}Z by conjugate gradients from this many rows, by Cholesky below: ~14 CG
# iterations of Python overhead cost more than an n^3/3 factorisation up to n ~ 350
# (one BLAS thread: 0.49 vs 0.91 ms at n = 200, 3.7 vs 3.3 ms at n = 400)
_DENSE_MIN_CG = 350

# --------------------------------------------------------------------------------------------
# optimal scores
# --------------------------------------------------------------------------------------------


def score_vectors(class_counts: np.ndarray) -> np.ndarray:
    r"""Helmert-type optimal scores :math:`\Theta` (K x (K-1)) for the class sizes ``n_c``.

    With :math:`N_l = n_1 + \dots + n_l`, column ``l`` (1-based) is
    :math:`\sqrt{n\,n_{l+1}/(N_l N_{l+1})}` on classes ``1..l``,
    :math:`-\sqrt{n N_l/(n_{l+1} N_{l+1})}` on class ``l+1`` and 0 after. The columns satisfy
    :math:`\Theta^\top D_\pi \Theta = I` and :math:`\pi^\top\Theta = 0` with
    :math:`D_\pi = \mathrm{diag}(n_c/n)`. For ``K = 2`` the single column is the paper's
    :math:`\hat\theta = (\sqrt{n_2/n_1}, -\sqrt{n_1/n_2})^\top`.

    Parameters
    ----------
    class_counts : ndarray of shape (K,)
        Positive class sizes.

    Returns
    -------
    theta : ndarray of shape (K, K - 1)
    """
    counts = np.asarray(class_counts, dtype=np.float64)
    if counts.ndim != 1 or counts.shape[0] < 2 or np.any(counts <= 0):
        raise ValueError(f"class_counts must hold at least 2 positive sizes; got {counts!r}.")
    n = counts.sum()
    k = counts.shape[0]
    cum = np.cumsum(counts)
    theta = np.zeros((k, k - 1))
    for l in range(k - 1):
        n_next, big_n, big_next = counts[l + 1], cum[l], cum[l + 1]
        theta[: l + 1, l] = math.sqrt(n * n_next / (big_n * big_next))
        theta[l + 1, l] = -math.sqrt(n * big_n / (n_next * big_next))
    return theta


def optimal_scores(y_idx: np.ndarray, n_classes: int) -> np.ndarray:
    r"""The score matrix :math:`Z = Y\Theta` (n x (K-1)) of :func:`score_vectors`.

    Parameters
    ----------
    y_idx : ndarray of shape (n,)
        Class indices ``0..n_classes-1``; every class must occur.
    n_classes : int

    Returns
    -------
    Z : ndarray of shape (n, n_classes - 1)
        :math:`1^\top Z = 0` and :math:`Z^\top Z / n = I`.
    """
    counts = np.bincount(y_idx, minlength=n_classes)
    return score_vectors(counts)[y_idx]


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


# --------------------------------------------------------------------------------------------
# KOS: closed form (5) and projection (6)
# --------------------------------------------------------------------------------------------


def _cholesky_solve(M: np.ndarray, shift: float, B: np.ndarray) -> np.ndarray:
    """Solve ``(M + shift I) X = B`` by Cholesky (M symmetric PSD, shift > 0)."""
    A = M.copy()
    A.flat[:: A.shape[0] + 1] += shift
    factor = sla.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
    return sla.cho_solve(factor, B, check_finite=False)


def _cg_solve(
    matvec,
    shift: float,
    B: np.ndarray,
    x0: np.ndarray | None,
    rtol: float,
    max_iter: int,
    mx0: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Conjugate gradients for ``(M + shift I) X = B``, one recursion per column of B.

    Returns ``X`` and ``M X`` (tracked by the recursion, so no extra product); ``mx0`` is
    ``M x0`` when the caller already has it.
    """
    if x0 is None:
        X, MX, R = np.zeros_like(B), np.zeros_like(B), B.copy()
    else:
        X = np.array(x0, dtype=np.float64, copy=True)
        MX = matvec(X) if mx0 is None else np.array(mx0, dtype=np.float64, copy=True)
        R = B - MX - shift * X
    P = R.copy()
    rr = np.einsum("ij,ij->j", R, R)
    stop = (rtol * np.linalg.norm(B, axis=0)) ** 2
    for _ in range(max_iter):
        if np.all(rr <= stop):
            break
        MP = matvec(P)
        AP = MP + shift * P
        pap = np.einsum("ij,ij->j", P, AP)
        step = np.divide(rr, pap, out=np.zeros_like(rr), where=pap > 0)
        X += P * step
        MX += MP * step
        R -= AP * step
        rr_new = np.einsum("ij,ij->j", R, R)
        P *= np.divide(rr_new, rr, out=np.zeros_like(rr), where=rr > 0)
        P += R
        rr = rr_new
    return X, MX


def _eigh_solve(M, Z, ng, eps, form):
    lam, U = np.linalg.eigh(M)
    lam = np.maximum(lam, 0.0)
    if form == "package":
        den = lam + ng
        filt = np.divide(1.0, den, out=np.zeros_like(lam), where=den > 0)
    else:
        den = lam * lam + ng * (lam + eps)
        filt = np.divide(lam, den, out=np.zeros_like(lam), where=den > 0)
    return U @ (filt[:, None] * (U.T @ Z))


def _check_solver(form: str, solver: str) -> None:
    if form not in ("paper", "package"):
        raise ValueError(f"form={form!r} is not one of ('paper', 'package').")
    if solver not in ("cholesky", "eigh", "cg"):
        raise ValueError(f"solver={solver!r} is not one of ('cholesky', 'eigh', 'cg').")
    if solver == "cg" and form == "paper":
        raise ValueError(
            "solver='cg' needs form='package': the paper's closed form (5) resolves eigenvalues "
            "of M near eps, far too ill-conditioned for conjugate gradients."
        )


def kos_dual_coef(
    M: np.ndarray,
    Z: np.ndarray,
    ridge: float,
    *,
    eps: float = EPS,
    form: str = "paper",
    solver: str = "cholesky",
    x0: np.ndarray | None = None,
    cg_rtol: float = 1e-10,
    cg_max_iter: int = 1000,
) -> np.ndarray:
    r"""The KOS dual coefficients: the minimiser of problem (4) in closed form.

    ``form="paper"``, equation (5), the stationarity condition of
    :math:`\tfrac1n\|Z - MA\|_F^2 + \gamma\,\mathrm{tr}\,A^\top(M + \varepsilon I)A`:

    .. math:: A = (M^2 + n\gamma(M + \varepsilon I))^{-1} M Z.

    With :math:`a + b = n\gamma`, :math:`ab = n\gamma\varepsilon` the matrix factors as
    :math:`(M + aI)(M + bI)`, and by partial fractions

    .. math:: A = \frac{a(M + aI)^{-1}Z - b(M + bI)^{-1}Z}{a - b}

    (``solver="cholesky"``: one Cholesky factorisation of :math:`M + bI`, :math:`b \approx
    \varepsilon`, and one of the well-conditioned :math:`M + aI`), or by one eigendecomposition
    :math:`M = U\Lambda U^\top`,
    :math:`A = U\,\mathrm{diag}(\lambda/(\lambda^2 + n\gamma(\lambda + \varepsilon)))\,
    U^\top Z` (``solver="eigh"``, also used when :math:`n\gamma \le 4\varepsilon`).

    ``form="package"`` (biClassify): :math:`(M + n\gamma I)A = Z`, the :math:`\varepsilon \to 0`
    form; it agrees with (5) on the eigenvectors of :math:`M` with eigenvalues well above
    :math:`\varepsilon` (equal fitted values :math:`MA` up to :math:`O(\varepsilon)`) and differs
    only in the numerical null space of :math:`M`. Solved by Cholesky, eigendecomposition, or
    warm-startable conjugate gradients (``solver="cg"``; :math:`M + n\gamma I` has condition
    number :math:`1 + \lambda_{\max}(M)/(n\gamma)`, typically below 2).

    Parameters
    ----------
    M : ndarray of shape (n, n)
        Doubly centred kernel.
    Z : ndarray of shape (n, q)
        Optimal scores.
    ridge : float
        :math:`\gamma > 0`.
    eps : float
        :math:`\varepsilon` (``form="paper"`` only).
    form : {"paper", "package"}
    solver : {"cholesky", "eigh", "cg"}
        ``"cg"`` only with ``form="package"``.
    x0 : ndarray of shape (n, q), optional
        Starting point of conjugate gradients.
    cg_rtol, cg_max_iter : float, int
        Conjugate-gradient stopping rule (relative residual per column).

    Returns
    -------
    A : ndarray of shape (n, q)
    """
    _check_solver(form, solver)
    ng = M.shape[0] * ridge
    if solver == "eigh":
        return _eigh_solve(M, Z, ng, eps, form)
    if form == "package":
        if solver == "cg":
            return _cg_solve(lambda V: M @ V, ng, Z, x0, cg_rtol, cg_max_iter)[0]
        return _cholesky_solve(M, ng, Z) if ng > 0 else _eigh_solve(M, Z, ng, eps, form)
    disc = ng * ng - 4.0 * ng * eps
    if disc <= 0:
        return _eigh_solve(M, Z, ng, eps, form)
    a = 0.5 * (ng + math.sqrt(disc))
    b = ng * eps / a
    return (a * _cholesky_solve(M, a, Z) - b * _cholesky_solve(M, b, Z)) / (a - b)


def _dual_coef_from_kernel(
    K: np.ndarray,
    Z: np.ndarray,
    ridge: float,
    eps: float,
    form: str,
    solver: str,
    x0: np.ndarray | None = None,
    mx0: np.ndarray | None = None,
    cg_rtol: float = 1e-8,
    cg_max_iter: int = 1000,
) -> tuple[np.ndarray, np.ndarray]:
    r""":func:`kos_dual_coef` from the uncentred kernel, at least cost; returns ``A`` and ``MA``.

    ``package`` + ``cg`` never forms :math:`CKC` (matrix-free products, warm start ``x0`` with
    ``mx0 = M x0``, relative residual ``cg_rtol`` = 1e-8: far below the outer tolerance).
    ``paper`` + ``cholesky`` factors only :math:`M + bI`; the
    well-conditioned :math:`(M + aI)^{-1}Z` is solved by conjugate gradients to a relative
    residual of 1e-13 when :math:`\mathrm{tr}(M)/a < 10^3` (a bound on its condition number),
    else by Cholesky too.
    """
    _check_solver(form, solver)
    n = K.shape[0]
    ng = n * ridge
    if form == "package" and solver == "cg":
        return _cg_solve(
            lambda V: _centered_product(K, V), ng, Z, x0, cg_rtol, cg_max_iter, mx0
        )
    if isinstance(K, GroupedKernel):
        return _grouped_dual_coef(K, Z, ng, eps, form, solver, cg_max_iter)
    M, _ = double_center(K)
    disc = ng * ng - 4.0 * ng * eps
    if form == "package" or solver == "eigh" or disc <= 0:
        A = kos_dual_coef(M, Z, ridge, eps=eps, form=form, solver=solver)
        return A, M @ A
    A = _paper_partial_fractions(M, Z, ng, eps, cg_max_iter, min_cg_size=_DENSE_MIN_CG)
    return A, _centered_product(K, A)


def _paper_partial_fractions(M, Z, ng, eps, cg_max_iter, min_cg_size=0):
    r"""(5) as (a(M + aI)^{-1}Z - b(M + bI)^{-1}Z)/(a - b); overwrites ``M``.

    :math:`(M + aI)^{-1}Z` by conjugate gradients when ``M`` has at least ``min_cg_size`` rows
    and :math:`\mathrm{tr}(M)/a < 10^3`, else by Cholesky.
    """
    a = 0.5 * (ng + math.sqrt(ng * ng - 4.0 * ng * eps))
    b = ng * eps / a
    if M.shape[0] >= min_cg_size and float(np.trace(M)) / a < 1e3:
        u_a = _cg_solve(lambda V: M @ V, a, Z, None, 1e-13, cg_max_iter)[0]
    else:
        u_a = _cholesky_solve(M, a, Z)
    M.flat[:: M.shape[0] + 1] += b
    factor = sla.cho_factor(M, lower=True, overwrite_a=True, check_finite=False)
    u_b = sla.cho_solve(factor, Z, check_finite=False)
    return (a * u_a - b * u_b) / (a - b)


def _grouped_dual_coef(K: GroupedKernel, Z, ng, eps, form, solver, cg_max_iter):
    r"""The closed form at size m for a :class:`GroupedKernel` (exact, not an approximation).

    :math:`CKC = UM_rU^\top` with :math:`U = PD^{-1/2}` (orthonormal columns), so for
    (5), whose spectral filter :math:`f(\lambda) = \lambda/(\lambda^2 + n\gamma(\lambda +
    \varepsilon))` vanishes at 0, :math:`A = Uf(M_r)U^\top Z`; for the package form
    :math:`A = U(M_r + n\gamma I)^{-1}U^\top Z + (I - UU^\top)Z/(n\gamma)`. Same solvers as
    the dense path, with :math:`n\gamma` kept (``n`` is the number of rows, not ``m``).
    """
    m = K.Ku.shape[0]
    sq = np.sqrt(K.counts)[:, None]
    Mr = K.reduced_centered()
    Zr = K.group_sum(Z) / sq
    disc = ng * ng - 4.0 * ng * eps
    if form == "package" or solver == "eigh" or disc <= 0:
        Ar = kos_dual_coef(Mr, Zr, ng / m, eps=eps, form=form, solver=solver)
    else:
        # small m: two Cholesky factorisations beat ~13 CG iterations of Python overhead
        Ar = _paper_partial_fractions(Mr, Zr, ng, eps, cg_max_iter, min_cg_size=1000)
    A = (Ar / sq)[K.inv]
    if form == "package":
        A += (Z - (Zr / sq)[K.inv]) / ng
    return A, _centered_product(K, A)


def project(K_new: np.ndarray, col_mean: np.ndarray, A: np.ndarray) -> np.ndarray:
    r"""Projection (6) of new points onto the discriminant(s).

    .. math:: P(x) = \langle \Phi(x) - \bar\Phi, \hat f\rangle
              = (k_x - K1/n)^\top C A,

    with :math:`(k_x)_i = k(x, x_i)`. On the training points :math:`P(x_i) = (MA)_i`.

    Parameters
    ----------
    K_new : ndarray of shape (m, n)
        Kernel between the new points and the training points (same weights).
    col_mean : ndarray of shape (n,)
        Column means of the training kernel (:func:`double_center`).
    A : ndarray of shape (n, q)

    Returns
    -------
    P : ndarray of shape (m, q)
    """
    CA = A - A.mean(axis=0)
    return K_new @ CA - col_mean @ CA


def kos_objective(
    M: np.ndarray,
    Z: np.ndarray,
    A: np.ndarray,
    weights: np.ndarray,
    ridge: float,
    alpha: float,
    *,
    eps: float = EPS,
) -> float:
    r"""The sparse KOS objective (12)/(13) :math:`F(A, w)` (with :math:`M = M_w`)."""
    n = M.shape[0]
    MA = M @ A
    loss = float(np.sum((Z - MA) ** 2)) / n
    pen = ridge * (float(np.sum(A * MA)) + eps * float(np.sum(A * A)))
    return loss + pen + alpha * float(np.abs(weights).sum())


# --------------------------------------------------------------------------------------------
# linearisation (Algorithm 1, steps 1-3) and the exact gradient
# --------------------------------------------------------------------------------------------


def kernel_jacobian(
    K: np.ndarray, X: np.ndarray, A: np.ndarray, weights: np.ndarray, sigma2: float
) -> np.ndarray:
    r"""The matrices :math:`T_c` (n x p), one per score vector: the derivative of
    :math:`M_w a_c` along each :math:`w_l` (spec 2.7 step 2).

    .. math::

        T_c[:, l] = C\,\frac{\partial K_w}{\partial w_l}\,C a_c
        = -\frac{2 w_l}{\sigma^2}\, C\big[x_l^2\circ(K u) - 2x_l\circ(K(x_l\circ u))
        + K(x_l^2\circ u)\big],\qquad u = C a_c,

    so :math:`M_w A \approx M_{w_0}A + \sum_l (w_l - w_{0l}) T[:, :, l]`. All columns come
    from ONE product :math:`K[u, X\circ u, X^2\circ u]` over the active features (no n x n x p
    tensor, no per-feature n x n loop). Columns with :math:`w_l = 0` are exactly zero.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        :math:`K_w` at the linearisation point.
    X : ndarray of shape (n, p)
        Unweighted (standardised) data.
    A : ndarray of shape (n, q)
    weights : ndarray of shape (p,)
    sigma2 : float

    Returns
    -------
    T : ndarray of shape (q, n, p)
    """
    n, p = X.shape
    q = A.shape[1]
    T = np.zeros((q, n, p))
    act = np.flatnonzero(weights)
    s = act.shape[0]
    if s == 0:
        return T
    Xa = X[:, act]
    Xa2 = Xa * Xa
    U = A - A.mean(axis=0)
    B = np.empty((n, q * (2 * s + 1)))
    for c in range(q):
        u = U[:, c : c + 1]
        base = c * (2 * s + 1)
        B[:, base] = u[:, 0]
        B[:, base + 1 : base + 1 + s] = Xa * u
        B[:, base + 1 + s : base + 1 + 2 * s] = Xa2 * u
    KB = K @ B
    scale = -2.0 * weights[act] / sigma2
    for c in range(q):
        base = c * (2 * s + 1)
        Ku = KB[:, base : base + 1]
        Tc = Xa2 * Ku
        Tc -= 2.0 * Xa * KB[:, base + 1 : base + 1 + s]
        Tc += KB[:, base + 1 + s : base + 1 + 2 * s]
        Tc -= Tc.mean(axis=0)
        Tc *= scale
        T[c][:, act] = Tc
    return T


def quadratic_model(
    T: np.ndarray,
    residual: np.ndarray,
    A: np.ndarray,
    weights: np.ndarray,
    ridge: float,
    *,
    factored: bool | None = False,
) -> tuple[np.ndarray | FactoredQ, np.ndarray]:
    r"""The quadratic model (14)-(15) of :math:`F` in :math:`w` at fixed :math:`A`.

    .. math::

        \min_{w \in [-1,1]^p} w^\top Q w - 2\beta^\top w + \lambda\|w\|_1,\qquad
        Q = \frac1n\sum_c T_c^\top T_c,

        \beta = \frac1n\sum_c T_c^\top\big(Z_c - M_{w_0}a_c + T_c w_0\big)
                - \frac\gamma2\sum_c T_c^\top a_c .

    For ``q = 1`` this is the paper's (14)-(15). The model's gradient at :math:`w_0`,
    :math:`2Qw_0 - 2\beta`, is the exact gradient of :math:`F` in :math:`w`
    (:func:`weight_gradient`).

    Parameters
    ----------
    T : ndarray of shape (q, n, p)
        :func:`kernel_jacobian`.
    residual : ndarray of shape (n, q)
        :math:`Z - M_{w_0}A`.
    A : ndarray of shape (n, q)
    weights : ndarray of shape (p,)
        :math:`w_0`.
    ridge : float
    factored : bool or None, default=False
        Return :math:`Q` as :class:`FactoredQ` (never formed); ``None``: when the active
        features outnumber the rows of the stacked Jacobian (``s > n q``), where the factored
        form is the cheaper one.

    Returns
    -------
    Q : ndarray of shape (p, p) or FactoredQ
    beta : ndarray of shape (p,)
    """
    q, n, p = T.shape
    if factored is None:
        factored = int(np.count_nonzero(weights)) > n * q
    if factored:
        return _factored_quadratic_model(T, residual, A, weights, ridge)
    Q = np.zeros((p, p))
    lin = np.zeros(p)
    for c in range(q):
        Tc = T[c]
        Q += Tc.T @ Tc
        lin += Tc.T @ (residual[:, c] / n - 0.5 * ridge * A[:, c])
    Q /= n
    beta = lin + Q @ weights
    return Q, beta


@dataclass
class FactoredQ:
    r"""The matrix :math:`Q = \frac1n\sum_c T_c^\top T_c` of the quadratic model (14), kept as
    its factor: the rows of ``Tt`` are the active columns of :math:`[T_1; \dots; T_q]`.

    With ``s`` active features and ``n q`` rows of the stacked Jacobian, forming :math:`Q`
    costs :math:`O(nqs^2)` time and :math:`s^2` memory (406 MB at s = 7129), and a
    coordinate-descent update :math:`O(s)`; kept factored, an update reads one row of
    ``Tt`` (:math:`O(nq)`) and :math:`Q` is never formed. :func:`quadratic_model` returns
    this form when ``s > n q`` (many features, few samples: microarrays); both forms define
    the same model (tested to rounding).

    Attributes
    ----------
    Tt : ndarray of shape (s, n q)
        Row ``j``: :math:`(T_1[:, l_j], \dots, T_q[:, l_j])` for the active feature
        :math:`l_j`.
    index : ndarray of shape (s,)
        The active features :math:`l_j` (increasing).
    n : int
        The number of samples (the :math:`1/n` of :math:`Q`).
    n_features : int
        ``p``.
    """

    Tt: np.ndarray
    index: np.ndarray
    n: int
    n_features: int

    def diagonal(self) -> np.ndarray:
        """:math:`Q_{kk}` for every feature (0 off the active set)."""
        d = np.zeros(self.n_features)
        d[self.index] = np.einsum("ij,ij->i", self.Tt, self.Tt) / self.n
        return d

    def matvec(self, w: np.ndarray) -> np.ndarray:
        """:math:`Qw` (0 off the active set)."""
        out = np.zeros(self.n_features)
        out[self.index] = self.Tt @ (self.Tt.T @ w[self.index]) / self.n
        return out

    def toarray(self) -> np.ndarray:
        """The dense :math:`Q` (for tests and small problems)."""
        Q = np.zeros((self.n_features, self.n_features))
        Q[np.ix_(self.index, self.index)] = self.Tt @ self.Tt.T / self.n
        return Q


def _factored_quadratic_model(T, residual, A, weights, ridge):
    """:func:`quadratic_model` with :math:`Q` kept as :class:`FactoredQ`."""
    q, n, p = T.shape
    index = np.flatnonzero(weights)
    Tt = np.ascontiguousarray(T[:, :, index].transpose(2, 0, 1).reshape(index.size, q * n))
    v = (residual / n - 0.5 * ridge * A).T.reshape(q * n)
    Qf = FactoredQ(Tt, index, n, p)
    beta = np.zeros(p)
    beta[index] = Tt @ v
    beta += Qf.matvec(weights)
    return Qf, beta


def weight_gradient(
    K: np.ndarray,
    X: np.ndarray,
    A: np.ndarray,
    residual: np.ndarray,
    weights: np.ndarray,
    sigma2: float,
    ridge: float,
) -> np.ndarray:
    r"""Exact gradient in :math:`w` of the smooth part of :math:`F` at fixed :math:`A`.

    With :math:`R = Z - M_wA` the smooth part changes by :math:`\langle G, dK\rangle`,
    :math:`G = C(-\tfrac2n RA^\top + \gamma AA^\top)C`, and
    :math:`\partial K/\partial w_l = -\tfrac{2w_l}{\sigma^2} D_l\circ K`,
    :math:`(D_l)_{ij} = (x_{il} - x_{jl})^2`. For :math:`H = \mathrm{sym}(G)\circ K`, the
    performance notes' one-GEMM identity (section 8) gives all ``p`` sums at once:

    .. math::

        \sum_{ij} H_{ij}(x_{il}-x_{jl})^2 = 2\big[(H1)^\top(X\circ X)
        - 1^\top((HX)\circ X)\big]_l .

    Independent of :func:`kernel_jacobian` (used to cross-check it).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        :math:`K_w`.
    X : ndarray of shape (n, p)
    A, residual : ndarray of shape (n, q)
    weights : ndarray of shape (p,)
    sigma2, ridge : float

    Returns
    -------
    grad : ndarray of shape (p,)
    """
    n = K.shape[0]
    U = A - A.mean(axis=0)
    V = -2.0 / n * (residual - residual.mean(axis=0)) + ridge * U
    H = V @ U.T
    H += H.T
    H *= 0.5
    H *= K
    sums = 2.0 * (H.sum(axis=1) @ (X * X) - np.einsum("ij,ij->j", H @ X, X))
    return -2.0 * weights / sigma2 * sums


# --------------------------------------------------------------------------------------------
# coordinate descent (Algorithm 1, step 4, update (16))
# --------------------------------------------------------------------------------------------


@njit(cache=True)
def _cd_box_lasso(Q, beta, w, alpha, tol, max_sweeps, active, tiny, lo, hi):  # pragma: no cover
    p = w.shape[0]
    g = np.zeros(p)
    for j in range(p):
        wj = w[j]
        if wj != 0.0:
            for i in range(p):
                g[i] += Q[i, j] * wj
    half = 0.5 * alpha
    for sweep in range(1, max_sweeps + 1):
        change2 = 0.0
        for k in range(p):
            if not active[k]:
                continue
            qkk = Q[k, k]
            old = w[k]
            b = beta[k] - g[k] + qkk * old
            if qkk > tiny:
                z = abs(b) - half
                if z <= 0.0:
                    new = 0.0
                elif b > 0.0:
                    new = z / qkk
                else:
                    new = -z / qkk
            elif 2.0 * abs(b) > alpha:
                new = hi[k] if b > 0.0 else lo[k]
            else:
                new = 0.0
            # the 1-D problem is convex: clipping its minimiser to [lo, hi] is exact
            if new > hi[k]:
                new = hi[k]
            elif new < lo[k]:
                new = lo[k]
            if new != old:
                d = new - old
                for i in range(p):
                    g[i] += Q[i, k] * d
                w[k] = new
                change2 += d * d
        if math.sqrt(change2) < tol:
            return sweep, True
    return max_sweeps, False


@njit(cache=True)
def _cd_box_lasso_factored(Tt, inv_n, beta, w, alpha, tol, max_sweeps, active, tiny, lo,
                           hi):  # pragma: no cover
    s, m = Tt.shape
    r = np.zeros(m)  # the stacked T w
    diag = np.zeros(s)
    for j in range(s):
        acc = 0.0
        for i in range(m):
            acc += Tt[j, i] * Tt[j, i]
        diag[j] = acc * inv_n
        wj = w[j]
        if wj != 0.0:
            for i in range(m):
                r[i] += Tt[j, i] * wj
    half = 0.5 * alpha
    for sweep in range(1, max_sweeps + 1):
        change2 = 0.0
        for k in range(s):
            if not active[k]:
                continue
            qkk = diag[k]
            old = w[k]
            gk = 0.0
            for i in range(m):
                gk += Tt[k, i] * r[i]
            b = beta[k] - gk * inv_n + qkk * old
            if qkk > tiny:
                z = abs(b) - half
                if z <= 0.0:
                    new = 0.0
                elif b > 0.0:
                    new = z / qkk
                else:
                    new = -z / qkk
            elif 2.0 * abs(b) > alpha:
                new = hi[k] if b > 0.0 else lo[k]
            else:
                new = 0.0
            if new > hi[k]:
                new = hi[k]
            elif new < lo[k]:
                new = lo[k]
            if new != old:
                d = new - old
                for i in range(m):
                    r[i] += Tt[k, i] * d
                w[k] = new
                change2 += d * d
        if math.sqrt(change2) < tol:
            return sweep, True
    return max_sweeps, False


def coordinate_descent(
    Q: np.ndarray,
    beta: np.ndarray,
    w0: np.ndarray,
    alpha: float,
    *,
    tol: float = 1e-6,
    max_sweeps: int = 10_000,
    active: np.ndarray | None = None,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
) -> tuple[np.ndarray, int, bool]:
    r"""Cyclic coordinate descent for :math:`\min_{w\in[-1,1]^p} w^\top Qw - 2\beta^\top w
    + \lambda\|w\|_1` (update (16)).

    Coordinate ``k``: :math:`b_k = \beta_k - \sum_{j\ne k} Q_{kj}w_j`,
    :math:`w_k \leftarrow \Pi_{[-1,1]}(S_{\lambda/2}(b_k)/Q_{kk})` with the soft threshold
    :math:`S_\tau(z) = \mathrm{sign}(z)\max(|z|-\tau, 0)` (exact: the 1-D problem is convex).
    A coordinate with :math:`Q_{kk} \le 10^{-14}\max(1, \max_j Q_{jj})` has a linear 1-D
    problem: :math:`w_k = \mathrm{sign}(b_k)` if :math:`2|b_k| > \lambda`, else 0. Inactive
    coordinates (default: :math:`w_{0k} = 0`, which the linearised kernel makes absorbing) are
    skipped. Stops when a full sweep moves :math:`w` by less than ``tol`` (Euclidean norm).
    Compiled by numba; one sweep costs O(p^2).

    Parameters
    ----------
    Q : ndarray of shape (p, p) or FactoredQ
        Symmetric positive semi-definite; a :class:`FactoredQ` (from
        :func:`quadratic_model`) runs the same update on the factor, :math:`O(nq)` per
        coordinate instead of :math:`O(p)`, on its active features (every active coordinate
        must be one of them).
    beta : ndarray of shape (p,)
    w0 : ndarray of shape (p,)
        Starting point (not modified).
    alpha : float
        :math:`\lambda \ge 0`.
    tol : float
    max_sweeps : int
    active : ndarray of bool, optional
    lower, upper : ndarray of shape (p,), optional
        Per-coordinate box (default [-1, 1]); used by the region line search of
        :func:`sparse_kos`. Each 1-D minimiser is clipped to it (exact for a convex 1-D problem).

    Returns
    -------
    w : ndarray of shape (p,)
    n_sweeps : int
    converged : bool
    """
    w = np.array(w0, dtype=np.float64, copy=True)
    act = (w != 0.0) if active is None else np.asarray(active, dtype=np.bool_)
    p = w.shape[0]
    lo = -np.ones(p) if lower is None else np.asarray(lower, dtype=np.float64)
    hi = np.ones(p) if upper is None else np.asarray(upper, dtype=np.float64)
    if isinstance(Q, FactoredQ):
        idx = Q.index
        outside = act.copy()
        outside[idx] = False
        if outside.any():
            raise ValueError("a FactoredQ holds the active features only; an active feature "
                             "outside its index has no row in the model.")
        diag = Q.diagonal()
        tiny = 1e-14 * max(1.0, float(diag.max()) if diag.size else 1.0)
        ws = np.ascontiguousarray(w[idx])
        sweeps, ok = _cd_box_lasso_factored(
            Q.Tt, 1.0 / Q.n, np.ascontiguousarray(beta[idx], dtype=np.float64), ws,
            float(alpha), float(tol), int(max_sweeps), np.ascontiguousarray(act[idx]), tiny,
            np.ascontiguousarray(lo[idx]), np.ascontiguousarray(hi[idx]),
        )
        w[idx] = ws
        return w, int(sweeps), bool(ok)
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    diag = np.diag(Q)
    tiny = 1e-14 * max(1.0, float(diag.max()) if diag.size else 1.0)
    sweeps, ok = _cd_box_lasso(
        Q, np.ascontiguousarray(beta, dtype=np.float64), w, float(alpha), float(tol),
        int(max_sweeps), act, tiny, lo, hi,
    )
    return w, int(sweeps), bool(ok)


# --------------------------------------------------------------------------------------------
# the alternating algorithm (Algorithm 1)
# --------------------------------------------------------------------------------------------


@dataclass
class KOSState:
    """Everything known at one weight vector: kernel, KOS fit and objective parts."""

    weights: np.ndarray
    K: np.ndarray | GroupedKernel
    """Dense, or grouped when rows repeat on the active features (:func:`weighted_kernel`)."""
    col_mean: np.ndarray
    dual_coef: np.ndarray
    fitted: np.ndarray
    smooth: float
    """:math:`\tfrac1n\\|Z-MA\\|^2 + \\gamma\\,\\mathrm{tr}A^\top(M+\varepsilon I)A`."""


@dataclass
class KOSFit:
    """A light record of one fit along a path (no n x n matrices)."""

    alpha: float
    weights: np.ndarray
    dual_coef: np.ndarray
    col_mean: np.ndarray
    fitted: np.ndarray
    objective: np.ndarray
    n_iter: int
    converged: bool

    @classmethod
    def from_state(
        cls,
        state: KOSState,
        alpha: float,
        objective=None,
        n_iter: int = 0,
        converged: bool = True,
    ) -> KOSFit:
        """The light record of ``state`` (arrays shared, weights copied)."""
        return cls(
            alpha=float(alpha),
            weights=state.weights.copy(),
            dual_coef=state.dual_coef,
            col_mean=state.col_mean,
            fitted=state.fitted,
            objective=np.array([state.smooth]) if objective is None else np.asarray(objective),
            n_iter=n_iter,
            converged=converged,
        )


def _smooth_value(K, Z, A, ridge, eps, form, MA=None) -> tuple[float, np.ndarray]:
    """The smooth part of F at (K, A) and the fitted values :math:`MA = CKCA`."""
    if MA is None:
        MA = _centered_product(K, A)
    ridge_term = float(np.sum(A * MA))
    if form == "paper":
        ridge_term += eps * float(np.sum(A * A))
    return float(np.sum((Z - MA) ** 2)) / K.shape[0] + ridge * ridge_term, MA


def kos_state(
    X: np.ndarray,
    Z: np.ndarray,
    sigma2: float,
    ridge: float,
    weights: np.ndarray,
    *,
    eps: float = EPS,
    form: str = "paper",
    solver: str = "cholesky",
    x0: np.ndarray | None = None,
    K: np.ndarray | GroupedKernel | None = None,
    mx0: np.ndarray | None = None,
    group_ratio: float | None = None,
    groups: dict | None = None,
) -> KOSState:
    """Kernel and the KOS closed form at ``weights`` (Algorithm 1, step 5).

    ``K``: the kernel at these weights, when already computed (dense or
    :class:`GroupedKernel`); otherwise :func:`weighted_kernel` (``group_ratio``, ``groups``:
    its grouping threshold and cache). ``x0`` (and ``mx0`` = :math:`M x_0`): a warm start for
    conjugate gradients.
    """
    w = np.array(weights, dtype=np.float64, copy=True)
    if K is None:
        K = weighted_kernel(X, sigma2, w, group_ratio=group_ratio, cache=groups)
    if not w.any() and form == "paper":
        A, MA = np.zeros_like(Z), np.zeros_like(Z)  # M = 0: (5) gives A = 0
    else:
        A, MA = _dual_coef_from_kernel(K, Z, ridge, eps, form, solver, x0, mx0)
    smooth, MA = _smooth_value(K, Z, A, ridge, eps, form, MA)
    return KOSState(w, K, K.mean(axis=0), A, MA, smooth)


def lambda_max(
    X: np.ndarray, Z: np.ndarray, sigma2: float, ridge: float, state: KOSState
) -> float:
    r"""The smallest :math:`\lambda` that zeroes the first linearised step from ``state``
    (Lemma 1 of the supplement): :math:`\lambda_{\max} = 2\|\beta\|_\infty`.

    At :math:`w = 0` the subgradient condition of (14) is :math:`|2\beta_k| \le \lambda` for all
    ``k``. Evaluated at :math:`w^{(0)} = 1` and :math:`A^{(0)}` it anchors the
    :math:`\lambda` grid; it guarantees :math:`w = 0` only for that first step.
    """
    T = kernel_jacobian(state.K, X, state.dual_coef, state.weights, sigma2)
    _, beta = quadratic_model(T, Z - state.fitted, state.dual_coef, state.weights, ridge,
                              factored=None)
    return 2.0 * float(np.abs(beta).max()) if beta.size else 0.0


def sparse_kos(
    X: np.ndarray,
    Z: np.ndarray,
    sigma2: float,
    ridge: float,
    alpha: float,
    *,
    state: KOSState | None = None,
    weights_init: np.ndarray | None = None,
    max_iter: int = 100,
    tol: float = 1e-5,
    cd_tol: float = 1e-6,
    cd_max_sweeps: int = 10_000,
    max_halvings: int = 10,
    line_search: str = "region",
    eps: float = EPS,
    form: str = "paper",
    solver: str = "cholesky",
    group_ratio: float | None = None,
    factored: bool | None = None,
    acceleration: str = "extrapolate",
) -> tuple[KOSState, np.ndarray, int, bool]:
    r"""Algorithm 1: alternate the linearised weight update and the closed form (5).

    Each outer iteration linearises :math:`K_w` at the current :math:`w`
    (:func:`kernel_jacobian`), builds the quadratic model (:func:`quadratic_model`), runs
    :func:`coordinate_descent` from the current :math:`w` (the paper's full step, tried
    first), and refits :math:`A` by (5) at the new :math:`w`.

    Safeguard (the paper suggests a line search on :math:`w` when :math:`F` increases). A trial
    :math:`w'` is accepted when :math:`F(A_{\rm old}, w') \le F^{(t-1)}` (one kernel, no solve;
    then the refit gives :math:`F(A_{\rm new}, w') \le F(A_{\rm old}, w')`, so :math:`F` never
    increases). Otherwise the step is shortened, at most ``max_halvings`` times:
    ``line_search="region"`` (default) halves a box radius :math:`r` around :math:`w` and
    re-minimises the quadratic model in :math:`[-1,1]^p \cap [w - r, w + r]` (cheap, O(p^2) per
    sweep); ``"scale"`` (spec 2.7 step 6) halves :math:`\eta` in
    :math:`w + \eta(w_{\rm cd} - w)`. The region variant follows the model's own minimiser
    and needs about a third fewer outer iterations on the credit data. If no trial decreases
    :math:`F`, the old point is kept and the run stops.

    Acceleration (``acceleration="extrapolate"``, default). Near a solution the alternation
    converges linearly, with step ratios of 0.6-0.97 on small designs (hundreds of outer
    iterations per :math:`\lambda` at the top of that range). After two accepted steps in the
    same direction the run tries Aitken's jump :func:`_extrapolated_point` (one kernel and one
    closed form) and keeps it only when :math:`F` decreases, so :math:`F` still never
    increases and the support changes only by the weight step; a run then needs 2-5 times
    fewer linearisations and stops nearer the stationary point (``"none"``: the paper's plain
    Algorithm 1).

    Stops when :math:`|F^{(t)} - F^{(t-1)}| <` ``tol``, when the step moves :math:`w` by less
    than ``cd_tol`` (then nothing changes), when :math:`w = 0` (absorbing), or after
    ``max_iter`` outer iterations.

    Parameters
    ----------
    X : ndarray of shape (n, p)
    Z : ndarray of shape (n, q)
    sigma2, ridge, alpha : float
        :math:`\sigma^2`, :math:`\gamma`, :math:`\lambda`.
    state : KOSState, optional
        Warm start (from the previous :math:`\lambda` of a path). Default: :math:`w = 1`
        (or ``weights_init``).
    weights_init : ndarray of shape (p,), optional
    max_iter, tol, cd_tol, cd_max_sweeps, max_halvings, line_search
        See above.
    acceleration : {"extrapolate", "none"}, default="extrapolate"
        See above.
    eps, form, solver
        See :func:`kos_dual_coef`.
    group_ratio : float, optional
        Kernels with at most this share of distinct rows (on the active features) are kept
        grouped (:func:`weighted_kernel`; exact, default :data:`GROUP_RATIO`; 0: never).
    factored : bool or None, default=None
        Keep :math:`Q` of the weight step factored (:class:`FactoredQ`); None: when the active
        features outnumber the rows of the stacked Jacobian (``s > n q``, microarrays), where
        it avoids the :math:`O(nqs^2)` product and the :math:`s^2` matrix. The same model, so
        the same path up to rounding (tested).

    Returns
    -------
    state : KOSState
        At the final :math:`w`.
    objective : ndarray
        :math:`F` at the start and after every accepted step (non-increasing).
    n_iter : int
        Outer iterations (linearisations) performed.
    converged : bool
    """
    if line_search not in ("region", "scale", "none"):
        raise ValueError(
            f"line_search={line_search!r} is not one of ('region', 'scale', 'none')."
        )
    if acceleration not in ("extrapolate", "none"):
        raise ValueError(
            f"acceleration={acceleration!r} is not one of ('extrapolate', 'none')."
        )
    groups: dict = {}
    solve_kw = {"eps": eps, "form": form, "solver": solver, "group_ratio": group_ratio,
                "groups": groups}
    if state is None:
        w0 = np.ones(X.shape[1]) if weights_init is None else weights_init
        state = kos_state(X, Z, sigma2, ridge, w0, **solve_kw)
    f_prev = state.smooth + alpha * float(np.abs(state.weights).sum())
    history = [f_prev]
    converged = False
    n_iter = 0
    step_before = None
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - n_iter reported after the loop
        w = state.weights
        if not w.any():
            converged = True
            break
        T = kernel_jacobian(state.K, X, state.dual_coef, w, sigma2)
        Q, beta = quadratic_model(T, Z - state.fitted, state.dual_coef, w, ridge,
                                  factored=factored)
        cd_kw = {"tol": cd_tol, "max_sweeps": cd_max_sweeps}
        w_try, _, _ = coordinate_descent(Q, beta, w, alpha, **cd_kw)
        step = w_try - w
        if math.sqrt(float(step @ step)) < cd_tol:
            converged = True
            break
        accepted = None
        radius, eta = float(np.abs(step).max()), 1.0
        for _ in range(max_halvings + 1):
            l1 = alpha * float(np.abs(w_try).sum())
            K = weighted_kernel(X, sigma2, w_try, group_ratio=group_ratio, cache=groups)
            f_fix, m_old = _smooth_value(K, Z, state.dual_coef, ridge, eps, form)
            # strict decrease: a step that only flips signs (K depends on w^2) changes nothing
            if line_search == "none" or f_fix + l1 < f_prev:
                accepted = kos_state(
                    X, Z, sigma2, ridge, w_try, x0=state.dual_coef, K=K, mx0=m_old, **solve_kw
                )
                break
            del K
            if line_search == "region":
                radius *= 0.5
                bounds = {"lower": np.maximum(w - radius, -1.0),
                          "upper": np.minimum(w + radius, 1.0)}
                w_try, _, _ = coordinate_descent(Q, beta, w, alpha, **cd_kw, **bounds)
            else:
                eta *= 0.5
                w_try = w + eta * step
        if accepted is None:  # no decrease along the step: stationary for this scheme
            converged = True
            break
        f_new = accepted.smooth + alpha * float(np.abs(accepted.weights).sum())
        if acceleration == "extrapolate":
            step_now = accepted.weights - w
            ext = _extrapolated_point(step_before, step_now, accepted.weights)
            step_before = step_now
            if ext is not None:
                trial = kos_state(X, Z, sigma2, ridge, ext, x0=accepted.dual_coef, **solve_kw)
                f_ext = trial.smooth + alpha * float(np.abs(ext).sum())
                if f_ext < f_new:
                    accepted, f_new = trial, f_ext
                    step_before = None  # two fresh steps before the next jump
        state = accepted
        history.append(f_new)
        if abs(f_prev - f_new) < tol:
            converged = True
            break
        f_prev = f_new
    return state, np.asarray(history), n_iter, converged


def _extrapolated_point(
    step_before: np.ndarray | None,
    step: np.ndarray,
    w: np.ndarray,
    max_factor: float = 50.0,
) -> np.ndarray | None:
    r"""A jump towards the limit of a linearly converging run of Algorithm 1, or None.

    When two consecutive steps :math:`d_{t-1}, d_t` point the same way (cosine
    :math:`\ge 0.9` on the support) and shrink by :math:`r = \|d_t\|/\|d_{t-1}\| < 0.995`,
    the remaining steps of a linear rate :math:`r` sum to :math:`d_t\,r/(1-r)` (Aitken's
    extrapolation along the step). The jump is :math:`w + \tau d_t`, :math:`\tau =
    \min(r/(1-r),` ``max_factor``), on the support only, shortened so that no weight reaches
    or crosses zero (zeros are absorbing in Algorithm 1: only the weight step may create
    them) and clipped to :math:`[-1, 1]`. The caller accepts it only when :math:`F` decreases.
    """
    if step_before is None:
        return None
    on = w != 0
    if not on.any() or np.any((step_before != 0) & ~on):
        return None  # the support changed: no common direction
    a, b = step_before[on], step[on]
    na, nb = math.sqrt(float(a @ a)), math.sqrt(float(b @ b))
    if na == 0.0 or nb == 0.0 or float(a @ b) < 0.9 * na * nb or nb >= 0.995 * na:
        return None
    r = nb / na
    tau = min(r / (1.0 - r), max_factor)
    wo = w[on]
    toward = wo * b < 0
    if toward.any():  # stop at half the distance to zero of the first weight to reach it
        tau = min(tau, 0.5 * float(np.min(-wo[toward] / b[toward])))
    if tau <= 1e-3:
        return None
    ext = w.copy()
    ext[on] = np.clip(wo + tau * b, -1.0, 1.0)
    return ext


def sparse_kos_path(
    X: np.ndarray,
    Z: np.ndarray,
    sigma2: float,
    ridge: float,
    alphas: np.ndarray,
    *,
    state: KOSState | None = None,
    warm_start: bool = True,
    **kwargs,
) -> list[KOSFit]:
    r"""Sparse KOS along increasing :math:`\lambda` values, warm-started (spec 2.9 item 4).

    The first :math:`\lambda` starts from ``state`` (default :math:`w = 1`); each next one from
    the previous solution. Zero weights are absorbing, so once :math:`w = 0` the remaining
    :math:`\lambda` values get the same all-zero fit without computation. With
    ``warm_start=False`` every :math:`\lambda` starts from :math:`w = 1` (the packages' cold
    refit; see the spec's pitfall: it can return :math:`w = 0` where the path does not).

    Parameters
    ----------
    X, Z, sigma2, ridge
        As in :func:`sparse_kos`.
    alphas : ndarray of shape (L,)
        Non-decreasing :math:`\lambda` values.
    state : KOSState, optional
        State at :math:`w = 1` (reused, not recomputed).
    warm_start : bool
    **kwargs
        Passed to :func:`sparse_kos`.

    Returns
    -------
    list of KOSFit
        One per :math:`\lambda`.
    """
    alphas = np.asarray(alphas, dtype=np.float64)
    solve_kw = {k: kwargs[k] for k in ("eps", "form", "solver", "group_ratio") if k in kwargs}
    if state is None:
        state = kos_state(X, Z, sigma2, ridge, np.ones(X.shape[1]), **solve_kw)
    start = state
    fits: list[KOSFit] = []
    for lam in alphas:
        if warm_start and fits and not state.weights.any():
            fits.append(KOSFit.from_state(state, lam))
            continue
        state, hist, n_iter, ok = sparse_kos(
            X, Z, sigma2, ridge, lam, state=state if warm_start else start, **kwargs
        )
        fits.append(KOSFit.from_state(state, lam, hist, n_iter, ok))
    return fits
