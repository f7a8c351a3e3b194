r"""UFCM: unsupervised feature analysis with class-margin optimisation (Wang et al., 2015).

The model, in the library's orientation (``X`` is ``n_samples x n_features``, centred; feature
:math:`i` is row :math:`i` of :math:`W`), reconstructed in ``specs/ufcm.md`` from the paper's
prose (its equations are not in the available text; equation numbers below are the spec's):

.. math::

    \max_{W^\top W = I,\ G,\ U}\ J(W, U) = \operatorname{Tr}(W^\top S_t W)
        - \alpha\,\|X W - U G\|_F^2 - \beta\,\|W\|_{2,p}^p                        \quad (6)

with the total scatter :math:`S_t = X^\top X`, a hard cluster indicator :math:`U` (the
pseudo-labels), centroids :math:`G` and :math:`\|W\|_{2,p}^p = \sum_i \|w^i\|_2^p`. For fixed
:math:`U` the optimal centroids are the cluster means of :math:`Y = XW` (eq. 10), and the k-means
term becomes :math:`\operatorname{Tr}(W^\top X^\top L_U X W)` with the idempotent
:math:`L_U = I - U(U^\top U)^{-1}U^\top` (eq. 11), so with the re-weighting matrix
:math:`D = \operatorname{diag}(d_{ii})` of eq. 7, frozen at the previous :math:`W`, the W-step
(eqs. 12-13) is the top-:math:`d'` eigenproblem of

.. math::

    A = X^\top B X - \beta D, \qquad B = I - \alpha L_U = (1-\alpha) I + \alpha P_U,

:math:`P_U = U(U^\top U)^{-1}U^\top` the cluster-averaging projector. :math:`A` is never formed
when the data are wide: :func:`w_operator` applies it to a vector in :math:`O(nd)`
(``specs/performance-notes.md`` §8), and :func:`w_step` hands ARPACK's implicitly restarted
Lanczos method (``scipy.sparse.linalg.eigsh``) a matrix-free operator, warm-started from the
previous iterate. For wide data (``n < d``) that operator is the shift-inverted
:math:`(\sigma I - A)^{-1}`, applied by Woodbury's identity in :math:`O(nd + n^2)` per product
(:func:`w_inverse_operator`): the re-weighting drives rows of :math:`W` towards zero and their
weights :math:`\beta d_{ii}` towards :math:`\beta (p/2)\varepsilon^{(p-2)/2}`, spreading the
spectrum of :math:`A` over many orders of magnitude, which stalls plain Lanczos (thousands of
products per W-step) but not the inverted operator (tens). :func:`w_matrix` forms :math:`A` for
the dense path (small ``d``, tests).

Everything here is pure numpy/scipy. The U-step's candidate labellings are injected by the
caller through the ``propose`` callable of :func:`ufcm` (the estimator proposes runs of
:func:`kmeans`, a seeded numpy Lloyd's k-means sized for the ``n x d'`` projection).

The kernel is three modules: this one (data preparation, the correlation screen, the
l2,p penalty, the U-step's restart rule and the alternation), :mod:`~sparsefs._kernels.ufcm_wstep`
(the W-step: operators, shifts, eigensolvers) and :mod:`~sparsefs._kernels.ufcm_kmeans`
(centroids, k-means cost, Lloyd's k-means); every public name of the two is re-exported here.

References
----------
.. [1] S. Wang, F. Nie, X. Chang, L. Yao, X. Li and Q. Z. Sheng, "Unsupervised feature analysis
   with class margin optimization", ECML-PKDD 2015, LNCS 9284, pp. 383-398; arXiv:1506.01330.
.. [2] F. Nie, H. Huang, X. Cai and C. Ding, "Efficient and robust feature selection via joint
   l2,1-norms minimization", NIPS 2010 (the re-weighting lemma behind eq. 7).
.. [3] R. B. Lehoucq, D. C. Sorensen and C. Yang, *ARPACK Users' Guide*, SIAM, 1998.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from sparsefs._kernels.centered import CenteredSparse, center_sparse, sparse_col_extrema
from sparsefs._kernels.columns import SAFE_RANGE, power_of_two_exponent
from sparsefs._kernels.ufcm_kmeans import cluster_means, kmeans, kmeans_cost
from sparsefs._kernels.ufcm_wstep import (
    DENSE_MAX_FEATURES,
    DENSE_TALL_MAX_FEATURES,
    certified_shift,
    hinted_shift,
    inverse_shift,
    isometric_coordinates,
    resolve_solver,
    w_inverse_operator,
    w_matrix,
    w_operator,
    w_step,
)

__all__ = [
    "DENSE_MAX_FEATURES",
    "DENSE_TALL_MAX_FEATURES",
    "CenteredSparse",
    "UFCMResult",
    "best_candidate",
    "certified_shift",
    "cluster_means",
    "correlation_screen",
    "data_scale",
    "hinted_shift",
    "inverse_shift",
    "isometric_coordinates",
    "kmeans",
    "kmeans_cost",
    "l2p_penalty",
    "objective",
    "prepare_data",
    "resolve_solver",
    "reweight",
    "screened_columns",
    "smoothing_eps",
    "ufcm",
    "w_inverse_operator",
    "w_matrix",
    "w_operator",
    "w_step",
]

# Relative size of the smoothing epsilon of the l2,p weights (specs/ufcm.md B.4).
_EPS_REL = 1e-8
#: Relative accuracy of the Ritz values of the W-steps inside :func:`ufcm` (ARPACK's ``tol``;
#: 0 is machine precision). The objective depends on the subspace only to second order in the
#: residual, so 1e-8 leaves it unchanged to ~1e-12 relative (measured: the same objective to 10
#: digits and the same path at d = 10^4) with a third fewer products.
W_STEP_TOL = 1e-8
# Share of the random start vector mixed into the warm start (keeps Lanczos off breakdown).
_V0_NOISE = 1e-2


# --------------------------------------------------------------------------------------------
# Data, centroids, costs
# --------------------------------------------------------------------------------------------


def _prepare_sparse(X, standardize: bool) -> tuple[CenteredSparse, int, np.ndarray]:
    """:func:`prepare_data` for sparse X: the same scaling, centring kept implicit (the
    shared :func:`sparsefs._kernels.centered.center_sparse`, row access)."""
    X = sp.csr_array(X, dtype=np.float64)
    if not X.has_canonical_format:  # (a copy: the caller's X is not modified)
        X = X.copy()
        X.sum_duplicates()
    n, d = X.shape
    if n == 0:
        return CenteredSparse(X, np.zeros(d)), 0, np.zeros(d, dtype=bool)
    exponent = 0
    if not standardize:
        cmax, cmin = sparse_col_extrema(X)
        amax = float(max(np.abs(cmax).max(initial=0.0), np.abs(cmin).max(initial=0.0)))
        exponent = power_of_two_exponent(amax=amax, safe_range=SAFE_RANGE, above=True)
    Xc, _, _, constant = center_sparse(X, standardize=standardize, exponent=exponent,
                                       fmt="csr")
    return Xc, exponent, ~constant


def prepare_data(
    X: np.ndarray, *, standardize: bool = False
) -> tuple[np.ndarray, int, np.ndarray]:
    """Centre X (a float64 copy), rescale it by a power of two if needed, find constant columns.

    The objective is homogeneous, :math:`J(W; X/s, \\beta/s^2) = J(W; X, \\beta)/s^2`, and the
    estimator takes ``beta`` relative to the scatter (:func:`data_scale`), so the scale of X
    drops out. Data whose largest magnitude lies outside [1e-100, 1e100] (where scatter
    matrices overflow or underflow) are divided by :math:`s = 2^e`, exactly, before anything
    is squared; the caller multiplies the objective back by :math:`4^e`. Ordinary data are
    untouched (e = 0).

    With ``standardize=True`` every column is z-scored instead (divided by its largest
    magnitude first, so no square over- or underflows, then centred and divided by its
    standard deviation; ``exponent`` is 0): the fit then ignores the features' units.

    Sparse X (any scipy format) is never densified: the result is a :class:`CenteredSparse`,
    the scaled sparse data and their column means, with the centring kept implicit.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Finite values. Not modified.
    standardize : bool, default=False

    Returns
    -------
    Xc : ndarray of shape (n_samples, n_features), float64, or CenteredSparse
        ``(X - mean) / 2**exponent`` (or the z-scores); a new array.
    exponent : int
    varying : ndarray of bool, shape (n_features,)
        False for the columns that are exactly constant in X.
    """
    if sp.issparse(X):
        return _prepare_sparse(X, standardize)
    X = np.asarray(X)
    varying = (X.max(axis=0) != X.min(axis=0)) if X.shape[0] else np.zeros(X.shape[1], bool)
    Xc = np.array(X, dtype=np.float64, order="C", copy=True)
    if standardize:
        colmax = np.abs(Xc).max(axis=0) if Xc.shape[0] else np.ones(Xc.shape[1])
        Xc /= np.where(colmax > 0, colmax, 1.0)
        Xc -= Xc.mean(axis=0)
        std = np.sqrt(np.mean(Xc * Xc, axis=0)) if Xc.shape[0] else np.ones(Xc.shape[1])
        Xc /= np.where(varying & (std > 0), std, 1.0)
        Xc[:, ~varying] = 0.0
        return Xc, 0, varying
    amax = float(np.abs(Xc).max()) if Xc.size else 0.0
    exponent = power_of_two_exponent(amax=amax, safe_range=SAFE_RANGE, above=True)
    if exponent:
        Xc = np.ldexp(Xc, -exponent)
    Xc -= Xc.mean(axis=0)
    Xc[:, ~varying] = 0.0
    return Xc, exponent, varying



# correlation_screen works on column blocks of about this many float64 entries (32 MB)
_SCREEN_BLOCK_ENTRIES = 1 << 22
#: screened_columns keeps the features whose screen exceeds the median by this many robust
#: standard deviations (1.4826 x the median absolute deviation) ...
SCREEN_Z = 3.0
#: ... at least ``2 * n_clusters`` and at most this many of them
SCREEN_MAX_COLUMNS = 1000


def _col_sq_sums(Xc) -> np.ndarray:
    """The columns' sums of squares of the centred data (dense or :class:`CenteredSparse`)."""
    if isinstance(Xc, CenteredSparse):
        return Xc.col_sq_sums()
    return np.einsum("ij,ij->j", Xc, Xc)


def _column_blocks(Xc, width: int, csc=None):
    """``(slice, dense block)`` over the columns of ``Xc``: views of dense data, centred
    dense copies of one block at a time for :class:`CenteredSparse` (``csc``: its CSC form)."""
    d = Xc.shape[1]
    for start in range(0, d, width):
        cols = slice(start, min(start + width, d))
        if csc is None:
            yield cols, Xc[:, cols]
        else:
            yield cols, csc[:, cols].toarray() - Xc.m[cols]


def _screen(Xc, csc=None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`correlation_screen` and the columns' sums of squares it divides by."""
    n, d = Xc.shape
    sq = _col_sq_sums(Xc)
    inv = np.zeros(d)
    np.divide(1.0, sq, out=inv, where=sq > 0.0)
    scores = np.zeros(d)
    if d == 0 or n == 0:
        return scores, sq
    if isinstance(Xc, CenteredSparse) and csc is None:
        csc = Xc.csc
    width = max(1, min(d, _SCREEN_BLOCK_ENTRIES // max(n, d)))
    if n < d:
        if csc is not None:
            gram = Xc.row_gram(inv)  # Z Z^T
        else:  # Z Z^T block by block: no scaled copy of X
            gram = np.zeros((n, n))
            for cols, block in _column_blocks(Xc, width):
                gram += (block * inv[cols]) @ block.T
        for cols, block in _column_blocks(Xc, width, csc):
            scores[cols] = np.einsum("ij,ij->j", block, gram @ block) * inv[cols]
    else:
        for cols, block in _column_blocks(Xc, width, csc):
            cross = Xc.T @ block  # x_k . x_j, d x block width
            scores[cols] = np.einsum("kj,kj,k->j", cross, cross, inv) * inv[cols]
    return scores, sq


def correlation_screen(Xc) -> np.ndarray:
    r"""Each feature's sum of squared correlations with all features, :math:`(C^2)_{jj}`.

    :math:`s_j = \sum_k r_{jk}^2` with :math:`r_{jk}` the Pearson correlation of columns j and k
    of the centred data (:math:`s_j \ge 1`, from :math:`r_{jj} = 1`). Without shared structure
    every :math:`s_j` is about :math:`1 + (d-1)/n`; a feature that moves with others - a block
    of features carrying the same cluster structure - stands out above that level. The statistic
    is scale-free: multiplying any column by a nonzero constant leaves every :math:`s_j`
    unchanged. :math:`s_j = z_j^\top Z Z^\top z_j` with the unit-norm columns :math:`Z`, so for
    wide data it is computed from the ``n x n`` Gram :math:`ZZ^\top` (:math:`O(n^2 d)`), for
    tall data from column blocks of :math:`Z^\top Z` (:math:`O(n d^2)`); memory is bounded by
    blocks of about :math:`2^{22}` entries besides the Gram. Zero columns score 0.

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features) or CenteredSparse
        Centred data (:func:`prepare_data`).

    Returns
    -------
    ndarray of shape (n_features,)
    """
    return _screen(Xc)[0]


def screened_columns(Xc, n_clusters: int) -> np.ndarray:
    r"""The features that stand out in :func:`correlation_screen`, as unit-norm dense columns.

    Keeps the features whose screen exceeds the median by ``SCREEN_Z`` robust standard
    deviations (:math:`1.4826\,\mathrm{MAD}`), the highest first, at least
    :math:`\min(2c, d)` and at most ``SCREEN_MAX_COLUMNS`` (ties by the lower index); returns
    them divided by their norms (``n x m``), so that k-means on them ignores the features'
    units. UFCM's ``init="screen"`` starts from k-means on these columns: in data with many
    independent noise features (d >> n), k-means on all features returns labels that the noise
    fits as well as any, and the alternation cannot leave them (``docs/methods/ufcm.md``).

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features) or CenteredSparse
        Centred data without constant columns.
    n_clusters : int

    Returns
    -------
    ndarray of shape (n_samples, m)
    """
    d = Xc.shape[1]
    csc = Xc.csc if isinstance(Xc, CenteredSparse) else None  # column access, once
    scores, sq = _screen(Xc, csc)
    med = float(np.median(scores))
    spread = 1.4826 * float(np.median(np.abs(scores - med)))
    m = int(np.count_nonzero(scores > med + SCREEN_Z * spread))
    m = min(max(m, 2 * n_clusters), SCREEN_MAX_COLUMNS, d)
    top = np.argsort(-scores, kind="stable")[:m]
    block = Xc[:, top] if csc is None else csc[:, top].toarray() - Xc.m[top]
    norms = np.sqrt(sq[top])
    return block / np.where(norms > 0.0, norms, 1.0)


def data_scale(Xc: np.ndarray) -> float:
    r"""The mean per-feature scatter :math:`\sigma = \|X_c\|_F^2 / d = \operatorname{Tr}(S_t)/d`.

    The unit in which :func:`ufcm` takes ``beta``: every data term of the objective (eq. 6) is
    quadratic in X, so :math:`A(cX, \beta\,\sigma(cX)) = c^2 A(X, \beta\,\sigma(X))` and the
    W-step, the U-step and the selection are the same for every :math:`c \neq 0`. For
    standardised features :math:`\sigma = n`. Returns 1.0 for all-zero data (nothing to scale).

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features)
        Centred data, within the safe range of :func:`prepare_data` (the squares are finite).
    """
    total = float(_col_sq_sums(Xc).sum())
    if Xc.shape[1] == 0 or not total > 0.0:
        return 1.0
    return total / Xc.shape[1]


# --------------------------------------------------------------------------------------------
# The l2,p penalty and its re-weighting
# --------------------------------------------------------------------------------------------


def smoothing_eps(n_features: int, n_components: int) -> float:
    r"""The smoothing :math:`\varepsilon = 10^{-8}\,\overline{\|w^i\|^2} = 10^{-8} d'/d`.

    Constant over the iterations (:math:`\|W\|_F^2 = d'` whenever :math:`W^\top W = I`), which
    keeps the re-weighting a true minorise-maximise step for the smoothed penalty.
    """
    return _EPS_REL * n_components / max(n_features, 1)


def l2p_penalty(W: np.ndarray, p: float, eps: float = 0.0) -> float:
    r""":math:`\sum_i (\|w^i\|_2^2 + \varepsilon)^{p/2}`; ``eps=0`` gives :math:`\|W\|_{2,p}^p`."""
    sq = np.einsum("ij,ij->i", W, W)
    if eps == 0.0:
        return float(np.sum(np.sqrt(sq) ** p))
    return float(np.sum((sq + eps) ** (p / 2)))


def reweight(W: np.ndarray, p: float, eps: float) -> np.ndarray:
    r"""Diagonal of the re-weighting matrix :math:`D` (eq. 7), smoothed.

    .. math::

        d_{ii} = \frac{p}{2}\,\bigl(\|w^i\|_2^2 + \varepsilon\bigr)^{(p-2)/2},

    which for :math:`\varepsilon = 0` is :math:`p / (2\|w^i\|_2^{2-p})`: then :math:`2DW` is the
    gradient of :math:`\sum_i \|w^i\|^p` and :math:`\operatorname{Tr}(W^\top D W) =
    (p/2)\sum_i\|w^i\|^p`. By concavity of :math:`t \mapsto (t + \varepsilon)^{p/2}` for
    :math:`0 < p \le 2`, :math:`\sum_i (\|\tilde w^i\|^2 + \varepsilon)^{p/2} \le
    \sum_i (\|w^i\|^2+\varepsilon)^{p/2} + \operatorname{Tr}(\tilde W^\top D \tilde W) -
    \operatorname{Tr}(W^\top D W)`, the inequality behind the monotone ascent (eq. 16).

    Parameters
    ----------
    W : ndarray of shape (n_features, n_components)
    p : float in (0, 2]
    eps : float >= 0
        Must be positive when ``p < 2`` and a row of W can be zero.

    Returns
    -------
    ndarray of shape (n_features,)
    """
    sq = np.einsum("ij,ij->i", W, W)
    return (p / 2.0) * (sq + eps) ** ((p - 2.0) / 2.0)


def objective(
    Xc: np.ndarray,
    W: np.ndarray,
    labels: np.ndarray,
    alpha: float,
    beta: float,
    p: float,
    eps: float = 0.0,
) -> float:
    r"""The UFCM objective (eq. 6) at :math:`(W, U)` with the optimal centroids.

    :math:`\|XW\|_F^2 - \alpha\,\mathrm{KM}(XW, U) - \beta \sum_i (\|w^i\|^2+\varepsilon)^{p/2}`;
    ``eps=0`` is eq. 6 itself, ``eps > 0`` its smoothed form that :func:`ufcm` increases
    monotonically. ``Xc`` must be centred.
    """
    Y = Xc @ W
    total = float(np.einsum("ij,ij->", Y, Y))
    km = kmeans_cost(Y, labels) if alpha else 0.0
    pen = l2p_penalty(W, p, eps) if beta else 0.0
    return total - alpha * km - beta * pen


# --------------------------------------------------------------------------------------------
# The U-step: the restart rule
# --------------------------------------------------------------------------------------------


def best_candidate(Y: np.ndarray, candidates: Sequence[np.ndarray]) -> tuple[int, np.ndarray]:
    r"""The candidate labelling with the lowest k-means cost on ``Y`` (eq. 14).

    :math:`U^* = \arg\min_j \|Y - U_j G_j\|_F^2`, each :math:`G_j` the cluster means of
    :math:`U_j`. Ties go to the lowest index, so a caller that lists the previous optimum first
    keeps it unless a candidate is strictly better - which makes the U-step monotone.

    Parameters
    ----------
    Y : ndarray of shape (n_samples, n_dims)
        The projected data :math:`XW`.
    candidates : sequence of ndarray of int, each of shape (n_samples,)

    Returns
    -------
    index : int
    costs : ndarray of shape (len(candidates),)
    """
    if len(candidates) == 0:
        raise ValueError("best_candidate needs at least one candidate labelling.")
    costs = np.array([kmeans_cost(Y, np.asarray(c)) for c in candidates])
    return int(np.argmin(costs)), costs


# --------------------------------------------------------------------------------------------
# The alternating optimisation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UFCMResult:
    """What :func:`ufcm` returns.

    Attributes
    ----------
    components : ndarray of shape (n_features, n_components)
        :math:`W`, orthonormal columns.
    labels : ndarray of shape (n_samples,)
        The final pseudo-labels :math:`U`.
    objective : ndarray of shape (n_iter + 1,)
        The smoothed objective after the initialisation and after each iteration.
    n_iter : int
        Outer iterations run (re-weighting, U-step, W-step, and the extrapolated W-step of
        ``accelerate`` where one was tried).
    converged : bool
        Whether the relative change fell to ``tol`` before ``max_iter``.
    eigenvalues : ndarray of shape (n_components,)
        Of the last W-step's matrix, decreasing.
    n_w_steps : int
        W-steps solved, rejected extrapolations included.
    abandoned : bool
        Whether ``abandon`` stopped the run (the result is then incomplete).
    """

    components: np.ndarray
    labels: np.ndarray
    objective: np.ndarray
    n_iter: int
    converged: bool
    eigenvalues: np.ndarray
    n_w_steps: int = 0
    abandoned: bool = False


#: Extrapolation (``accelerate``) starts once the labels have not changed for this many
#: U-steps (the three iterates it combines share one labelling).
_ACCEL_STABLE = 2
#: The SQUAREM step length is clipped to [-_ACCEL_MAX_STEP, -1].
_ACCEL_MAX_STEP = 16.0


def _squarem_weights(q0, q1, q2, p: float, eps: float) -> np.ndarray | None:
    r"""Re-weighting diagonal at the SQUAREM extrapolation of three successive squared row
    norms (Varadhan & Roland 2008, scheme S3), or None when there is nothing to extrapolate.

    :math:`r = q_1 - q_0`, :math:`v = q_2 - 2q_1 + q_0`, :math:`a = -\|r\|/\|v\|` (clipped to
    ``[-16, -1]``; -1 is the plain step), :math:`q = \max(q_0 - 2ar + a^2 v, 0)`, then
    :func:`reweight`'s formula at q.
    """
    r = q1 - q0
    v = q2 - 2.0 * q1 + q0
    nv = float(np.linalg.norm(v))
    if nv == 0.0 or not np.isfinite(nv):
        return None
    a = min(max(-float(np.linalg.norm(r)) / nv, -_ACCEL_MAX_STEP), -1.0)
    q = np.maximum(q0 - 2.0 * a * r + a * a * v, 0.0)
    return (p / 2.0) * (q + eps) ** ((p - 2.0) / 2.0)


def ufcm(
    Xc: np.ndarray,
    labels: np.ndarray,
    *,
    n_components: int,
    alpha: float,
    beta: float,
    p: float,
    propose: Callable[[np.ndarray, np.ndarray], Sequence[np.ndarray]],
    v0: np.ndarray,
    max_iter: int = 30,
    tol: float = 1e-5,
    solver: str = "auto",
    callback: Callable[[int, np.ndarray, np.ndarray], None] | None = None,
    factor: np.ndarray | None = None,
    accelerate: bool = True,
    abandon: Callable[[int, np.ndarray, np.ndarray, np.ndarray], bool] | None = None,
    w_step_tol: float = W_STEP_TOL,
) -> UFCMResult:
    r"""The UFCM alternating optimisation (specs/ufcm.md B.5-B.7).

    Initialisation: :math:`D = I`, :math:`U` = ``labels``, :math:`W` from the W-step. Then,
    until the relative change of the objective is at most ``tol`` or ``max_iter`` iterations:

    1. :math:`D` from :math:`W` (eq. 7, smoothed with :func:`smoothing_eps`);
    2. U-step (eq. 14): the candidates are the previous :math:`U` followed by
       ``propose(Y, U)`` (:math:`Y = XW`); :func:`best_candidate` keeps the cheapest, the
       previous one on ties;
    3. W-step (eq. 13) on :math:`A(U, D)`, Lanczos warm-started from the previous :math:`W`;
    4. the objective.

    Both steps cannot decrease the smoothed objective :math:`J_\varepsilon` (the U-step keeps
    the previous labels among its candidates and uses optimal centroids; the W-step maximises a
    minorant of :math:`J_\varepsilon` that touches it at the previous :math:`W`), so the recorded
    history is non-decreasing up to the eigensolver's rounding (eqs. 15-16).

    **Acceleration** (``accelerate``). With fixed labels the re-weighting is a fixed-point
    iteration on the squared row norms :math:`q_i = \|w^i\|^2`, linearly convergent and slow
    for :math:`p < 1` (relative gains of 1e-4 over tens of iterations at d = 10^4). Once the
    labels have held for two U-steps, the last three :math:`q` are extrapolated by SQUAREM
    (:func:`_squarem_weights`) and one W-step is solved with the re-weighting at the
    extrapolated point; that W replaces the iteration's own when its objective is at least
    as high (so the history stays non-decreasing; a rejected try costs one W-step). Measured
    (issue #33) on the design of ``benchmarks/bench_ufcm.py`` at 200 x 10^4, screen start:
    24 iterations instead of 48 to the stopping rule, and a higher final objective (3556.3
    against 3549.5, where the plain iteration stopped on its slow tail); on the embedded
    default the plain iteration stops at 251.5 with ``tol=1e-4`` and reaches 264.3 only with
    ``tol=1e-5`` (38 iterations), the accelerated one reaches 264.3 at ``tol=1e-4``.

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features)
        Centred data without constant columns (see :func:`prepare_data`).
    labels : ndarray of int, shape (n_samples,)
        Initial pseudo-labels (k-means on the data).
    n_components : int
        :math:`d'`.
    alpha, beta : float >= 0
        Weights of the k-means term and of the penalty (``beta`` in the scale of ``Xc``).
    p : float in (0, 2]
    propose : callable ``(Y, labels) -> sequence of label arrays``
        The candidate labellings of the U-step other than the previous one (the estimator
        returns the k-means refinement of ``labels`` and ``r`` fresh k-means runs on ``Y``).
    v0 : ndarray of shape (n_features,)
        Random start vector of the first Lanczos run; later runs start from the previous
        :math:`W` (its columns summed, plus 1% of ``v0``).
    max_iter : int, default=30
    tol : float, default=1e-5
        Stop when :math:`|J_t - J_{t-1}| \le` ``tol`` :math:`\cdot |J_{t-1}|`.
    solver : {"auto", "arpack", "dense"}, default="auto"
        See :func:`w_step`.
    callback : callable ``(iteration, W, labels)``, optional
        Called after the initialisation (iteration 0) and after every iteration.
    factor : ndarray, optional
        :func:`isometric_coordinates` of ``Xc`` if the caller has it; for wide data it is
        otherwise computed once here (the shift-invert W-steps reuse it).
    accelerate : bool, default=True
        Extrapolate the re-weighting (above).
    abandon : callable ``(iteration, history, W, labels) -> bool``, optional
        Asked after every iteration; True stops the run (``abandoned`` in the result): the
        estimator's rule for a start that cannot win (``sparsefs.selection.UFCM``).
    w_step_tol : float, default=W_STEP_TOL
        ARPACK's relative accuracy of the Ritz values (:func:`w_step`'s ``tol``).

    Returns
    -------
    UFCMResult
    """
    n_features = Xc.shape[1]
    eps = smoothing_eps(n_features, n_components)
    v0 = np.asarray(v0, dtype=np.float64)
    v0 = v0 / np.linalg.norm(v0)
    labels = np.asarray(labels)
    n_samples = Xc.shape[0]
    wide = n_samples < n_features
    if factor is None and wide and resolve_solver(solver, *Xc.shape, n_components) == "arpack":
        factor = isometric_coordinates(Xc)
    n_w_steps = 0

    def step(d_weights: np.ndarray, start: np.ndarray, hint=None) -> tuple[np.ndarray, np.ndarray]:
        nonlocal n_w_steps
        n_w_steps += 1
        return w_step(
            Xc, labels, alpha, beta * d_weights, n_components, solver=solver, v0=start,
            factor=factor if wide else None, shift_hint=hint, tol=w_step_tol,
        )

    def warm(W: np.ndarray) -> np.ndarray:
        start = W.sum(axis=1)
        size = float(np.linalg.norm(start))
        # the columns of W can cancel (sum 0): then the random start alone
        return start / size + _V0_NOISE * v0 if size > 0.0 else v0

    W, vals = step(np.ones(n_features), v0)
    history = [objective(Xc, W, labels, alpha, beta, p, eps)]
    if callback is not None:
        callback(0, W, labels)
    converged = abandoned = False
    n_iter = 0
    stable = 0  # U-steps since the labels last changed
    norms: list[np.ndarray] = []  # squared row norms of the iterates since then (last 3)
    while n_iter < max_iter:
        n_iter += 1
        d_weights = reweight(W, p, eps)
        Y = Xc @ W
        candidates = [labels, *propose(Y, labels)]
        best, _ = best_candidate(Y, candidates)
        labels = np.asarray(candidates[best])
        stable = stable + 1 if best == 0 else 0
        if best != 0:
            norms = []
        W, vals = step(d_weights, warm(W), vals)
        value = objective(Xc, W, labels, alpha, beta, p, eps)
        norms = [*norms, np.einsum("ij,ij->i", W, W)][-3:]
        settled = abs(value - history[-1]) <= tol * abs(history[-1])
        if accelerate and not settled and stable >= _ACCEL_STABLE and len(norms) == 3:
            # the extrapolated W-step; kept (as this iteration's W) only if it is not worse,
            # so the history stays non-decreasing
            d_acc = _squarem_weights(*norms, p, eps)
            norms = norms[-1:]
            if d_acc is not None:
                W_acc, vals_acc = step(d_acc, warm(W), vals)
                value_acc = objective(Xc, W_acc, labels, alpha, beta, p, eps)
                if value_acc >= value:
                    W, vals, value = W_acc, vals_acc, value_acc
                    norms = [np.einsum("ij,ij->i", W, W)]
        history.append(value)
        if callback is not None:
            callback(n_iter, W, labels)
        if abs(history[-1] - history[-2]) <= tol * abs(history[-2]):
            converged = True
            break
        if abandon is not None and abandon(n_iter, np.asarray(history), W, labels):
            abandoned = True
            break
    return UFCMResult(
        components=W,
        labels=labels,
        objective=np.asarray(history),
        n_iter=n_iter,
        converged=converged,
        eigenvalues=vals,
        n_w_steps=n_w_steps,
        abandoned=abandoned,
    )
