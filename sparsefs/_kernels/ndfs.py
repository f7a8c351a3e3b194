r"""NDFS, nonnegative discriminative feature selection (Li, Yang, Liu, Zhou & Lu, AAAI 2012).

With the normalised Laplacian :math:`\mathcal L` of a kNN sample graph, scaled cluster
indicators :math:`F \in \mathbb R_+^{n \times c}` and feature weights
:math:`W \in \mathbb R^{d \times c}` (sparsefs convention: X is n x d, the paper's
:math:`X^\top W` is ``X @ W``), NDFS solves

.. math::

    \min_{F, W} \operatorname{Tr}(F^\top \mathcal L F)
      + \alpha\big(\|XW - F\|_F^2 + \beta\|W\|_{2,1}\big)
    \quad \text{s.t. } F^\top F = I,\ F \ge 0,

with the orthogonality relaxed to the penalty :math:`\frac\gamma2\|F^\top F - I\|_F^2`
(:math:`\gamma` large). For fixed :math:`D = \mathrm{diag}(1/(2\|w^i\|))`, the optimal
:math:`W = (X^\top X + \beta D)^{-1}X^\top F`, and substituting it gives
:math:`\min_F \operatorname{Tr}(F^\top M F) + \frac\gamma2\|F^\top F - I\|^2` with
:math:`M = \mathcal L + \alpha(I - X(X^\top X + \beta D)^{-1}X^\top)`. Each iteration:

1. update F multiplicatively (below);
2. :math:`W = (X^\top X + \beta D)^{-1}X^\top F`;
3. :math:`D_{ii} = 1 / (2\sqrt{\|w^i\|^2 + \epsilon})`, :math:`\epsilon = 10^{-12}\max_i\|w^i\|^2`.

Features are ranked by :math:`\|w^i\|_2`.

The F update
------------
The paper's rule is
:math:`F_{ij} \leftarrow F_{ij}\,(\gamma F)_{ij} / (MF + \gamma FF^\top F)_{ij}`.
When the penalty dominates it maps :math:`F = sQ` (:math:`Q^\top Q = I`) to :math:`Q/s`, a
cycle of period two: the iterates never settle (measured: the objective alternates between
two values for the paper's :math:`\gamma = 10^8`). This module takes the square root of the
ratio, the update of orthogonal NMF (Ding, Li, Peng & Park, KDD 2006), which has the same
fixed points (the KKT conditions :math:`(MF - \gamma F + \gamma FF^\top F)_{ij}F_{ij} = 0`) and
maps :math:`sQ` to :math:`Q` at once; entries where :math:`(MF)_{ij} < 0` move their
magnitude to the numerator so that F stays nonnegative for any :math:`\gamma`:

.. math::

    F_{ij} \leftarrow F_{ij}
    \sqrt{\frac{(\gamma F + (MF)^-)_{ij}}{((MF)^+ + \gamma FF^\top F)_{ij}}}.

Implementation notes
--------------------
* **Small dimension.** With :math:`\Lambda = \beta D` and :math:`K = X\Lambda^{-1}X^\top`:
  :math:`I - X(X^\top X + \Lambda)^{-1}X^\top = (I + K)^{-1}` and
  :math:`W = \Lambda^{-1}X^\top (I + K)^{-1}F` (Woodbury / push-through). For
  ``n <= d`` one n x n Cholesky factor per iteration; for ``n > d`` one d x d factor of
  :math:`X^\top X + \Lambda`. M is never formed: only :math:`MF = \mathcal LF + \alpha(I+K)^{-1}F`.
* X is divided by a power of two s near max|X| and :math:`\beta` by s (exactly equivalent:
  W scales by s, reported back in the caller's units). W is carried as a scale times a
  direction V (largest row norm 1), the scale in logarithms: the re-weighting is
  scale-equivariant, :math:`D(cV) = D(V)/c`, so only :math:`\rho = c/\beta` enters the solves
  (:math:`\Lambda = D(V)/\rho`), and the iteration runs without overflow whatever the scale of X
  and :math:`\beta` (a huge :math:`\beta\,/\,\|X\|^2` gives :math:`\rho \to 0`, the exact
  ridge limit).
"""

from dataclasses import dataclass

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp

from sparsefs._kernels.columns import TINY, power_of_two_scale

__all__ = ["NDFSResult", "mean_square", "ndfs", "ndfs_initial_indicator"]

_EPS_REL = 1e-12
_LOG_CLIP = 690.0  # exp(690) ~ 1e300
#: offset added to the initial scaled indicator, relative to its mean non-zero entry
INIT_OFFSET = 0.2


@dataclass(frozen=True)
class NDFSResult:
    """Output of :func:`ndfs`.

    Attributes
    ----------
    W : ndarray of shape (n_features, n_clusters)
        In the caller's units (for X near 1e+-300 and extreme beta it may under/overflow).
    V : ndarray of shape (n_features, n_clusters)
        W divided by its largest row norm (always representable): rank features by its row
        norms.
    F : ndarray of shape (n_samples, n_clusters)
    n_iter : int
    converged : bool
    objective : ndarray of shape (n_iter,)
        :math:`\\operatorname{Tr}(F^\\top\\mathcal LF) + \\alpha(\\|XW-F\\|^2 + \\beta\\|W\\|_{2,1})
        + \\frac\\gamma2\\|F^\\top F - I\\|^2` after each iteration.
    """

    W: np.ndarray
    V: np.ndarray
    F: np.ndarray
    n_iter: int
    converged: bool
    objective: np.ndarray


def ndfs_initial_indicator(labels: np.ndarray, n_clusters: int) -> np.ndarray:
    r"""Initial F from cluster labels: :math:`G(G^\top G)^{-1/2}` plus a positive offset.

    The multiplicative update cannot move an entry that is exactly 0, so every entry gets
    ``INIT_OFFSET`` times the mean non-zero entry of the scaled indicator.
    """
    labels = np.asarray(labels)
    n = labels.shape[0]
    G = np.zeros((n, n_clusters))
    G[np.arange(n), labels] = 1.0
    counts = G.sum(axis=0)
    scale = np.divide(1.0, np.sqrt(counts), out=np.zeros_like(counts), where=counts > 0)
    F = G * scale
    level = scale[counts > 0].mean() if (counts > 0).any() else 1.0
    return F + INIT_OFFSET * level


def mean_square(X) -> float:
    """The mean of the squared entries of X (dense or sparse, never densified; 0 if empty)."""
    size = X.shape[0] * X.shape[1]
    if not size:
        return 0.0
    if sp.issparse(X):
        data = X.data
        return float(np.dot(data, data) / size)
    return float(np.mean(X * X))


def _d_from_rows(row_sq: np.ndarray) -> np.ndarray:
    eps = _EPS_REL * max(float(row_sq.max(initial=0.0)), TINY)
    return 0.5 / np.sqrt(row_sq + eps)


def ndfs(
    X: np.ndarray,
    laplacian,
    F0: np.ndarray,
    *,
    alpha: float,
    beta: float,
    gamma: float,
    max_iter: int = 300,
    tol: float = 1e-6,
    relative_beta: bool = False,
) -> NDFSResult:
    r"""Run NDFS on dense or sparse X.

    Parameters
    ----------
    X : ndarray or scipy.sparse array of shape (n_samples, n_features)
        Sparse X is never densified: K, W and XW come from sparse products.
    laplacian : scipy.sparse array or ndarray of shape (n_samples, n_samples)
        Normalised graph Laplacian :math:`\mathcal L`.
    F0 : ndarray of shape (n_samples, n_clusters)
        Nonnegative initial indicator (:func:`ndfs_initial_indicator`).
    alpha, beta, gamma : float
        :math:`\alpha > 0` (regression), :math:`\beta > 0` (l2,1), :math:`\gamma > 0`
        (orthogonality penalty).
    max_iter : int
    tol : float
        Stop when the objective changes by at most ``tol`` times its magnitude.
    relative_beta : bool, default=False
        Take ``beta`` in units of the root-mean-square entry of X,
        :math:`r = \|X\|_F/\sqrt{nd}`, i.e. use :math:`\beta r`. The objective is then
        invariant to :math:`X \to cX` (W scales by :math:`1/c`, and :math:`\beta r\|W\|_{2,1}`
        with it), so the selection is the same at every scale; :math:`\beta r` is formed in
        logarithms, so it never overflows. The start :math:`D = I` then becomes
        :math:`D = rI` (the re-weighting scales with X), so the whole iteration is invariant.
    """
    n, d = X.shape
    c = F0.shape[1]
    sparse = sp.issparse(X)
    s = power_of_two_scale(X)
    Xs = sp.csr_array(X / s, dtype=np.float64) if sparse else X / s
    log_beta = float(np.log(beta) - np.log(s))  # beta_s = beta / s, kept in logs
    rms = float(np.sqrt(mean_square(Xs)))
    relative_beta = relative_beta and rms > 0
    if relative_beta:  # beta * rms(X), i.e. beta_s = beta * rms(X / s)
        log_beta = float(np.log(beta) + np.log(rms))
    F = np.array(F0, dtype=np.float64, copy=True)
    gram = None
    if n > d:  # d x d, smaller than X
        gram = (Xs.T @ Xs).toarray() if sparse else Xs.T @ Xs
    eye_c = np.eye(c)
    # W (in units of X / s) is stored as c_w * V with max row norm of V = 1, because the
    # re-weighting is scale-equivariant, D(c V) = D(V) / c: Lambda = beta_s D = D(V) / rho with
    # rho = c_w / beta_s. Keeping log(rho) lets the iteration run at any scale of X and beta
    # (values near 1e300 / 1e-300 included) without overflow.
    d_hat = np.ones(d)
    # D = I in the caller's units is D = I / s for W in units of X / s (W scales by s); with
    # a relative beta the start is D = rms(X) I instead (scale-covariant, as D(W) is: the
    # paper's D = I in units where the rms entry of X is 1), i.e. D = rms(X / s) I here
    log_rho = (-float(np.log(rms)) if relative_beta else float(np.log(s))) - log_beta
    V = np.zeros((d, c))
    log_cw = -np.inf
    history, converged = [], False
    for _ in range(max_iter):
        log_rho = float(np.clip(log_rho, -_LOG_CLIP, _LOG_CLIP))
        rho = float(np.exp(log_rho))
        if n <= d:
            if sparse:  # X D^-1 on the stored values, the n x n K from a sparse product
                Xl = Xs.copy()
                Xl.data /= d_hat[Xl.indices]
                K = (Xl @ Xs.T).toarray()
            else:
                Xl = Xs / d_hat  # X D^-1
                K = Xl @ Xs.T
            chol = la.cho_factor(np.eye(n) + rho * K, lower=True)

            def reduced(B, chol=chol):  # (I + K)^{-1} B
                return la.cho_solve(chol, B)

            def direction(B, chol=chol, Xl=Xl):  # W / rho = D^-1 X^T (I + K)^{-1} B
                return Xl.T @ la.cho_solve(chol, B)

        else:
            chol = la.cho_factor(rho * gram + np.diag(d_hat), lower=True)

            def direction(B, chol=chol):  # W / rho = (rho X^T X + D)^{-1} X^T B
                return la.cho_solve(chol, Xs.T @ B)

            def reduced(B, direction=direction, rho=rho):  # (I + K)^{-1} B = B - X W
                return B - rho * (Xs @ direction(B))

        MF = laplacian @ F + alpha * reduced(F)
        num = gamma * F + np.maximum(-MF, 0.0)
        den = np.maximum(MF, 0.0) + gamma * (F @ (F.T @ F))
        F = F * np.sqrt(np.divide(num, den, out=np.ones_like(num), where=den > 0))
        U = direction(F)
        big = float(np.max(np.abs(U), initial=0.0))
        if big == 0.0 or not np.isfinite(big):
            V, log_cw = np.zeros((d, c)), -np.inf
            break
        U = U / big  # row norms without under/overflow of the squares
        norms = np.sqrt(np.einsum("ij,ij->i", U, U))
        top = float(norms.max())
        V = U / top
        row = norms / top  # row norms of V (the largest is 1)
        # W = rho * U_original = (rho * big * top) * V
        log_cw = log_rho + float(np.log(big)) + float(np.log(top))
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            resid = np.exp(log_cw) * (Xs @ V) - F
            penalty = float(np.exp(log_beta + log_cw) * row.sum())  # beta_s * ||W||_{2,1}
        history.append(
            float(np.einsum("ij,ij->", F, laplacian @ F))
            + alpha * (float(np.sum(resid * resid)) + penalty)
            + 0.5 * gamma * float(np.sum((F.T @ F - eye_c) ** 2))
        )
        d_hat = _d_from_rows(row * row)  # D(V); D(W) = d_hat / c_w
        log_rho = log_cw - log_beta
        if len(history) > 1 and abs(history[-1] - history[-2]) <= tol * max(
            abs(history[-2]), TINY
        ):
            converged = True
            break
    with np.errstate(over="ignore", under="ignore"):
        W = V * np.exp(log_cw - np.log(s))  # in the caller's units (may under/overflow)
    return NDFSResult(
        W=W, V=V, F=F, n_iter=len(history), converged=converged,
        objective=np.asarray(history),
    )
