r"""UFCM's W-step: the top-:math:`d'` eigenproblem of :math:`A = X^\top B X - \beta D` (eq. 13).

Part of the UFCM kernel (:mod:`sparsefs._kernels.ufcm`, Wang et al., 2015; the model and the
notation are in that module's docstring). With :math:`B = (1-\alpha) I + \alpha P_U`
(:math:`P_U` the cluster-averaging projector) and the re-weighting diagonal :math:`D`, the
W-step maximises :math:`\operatorname{Tr}(W^\top A W)` over :math:`W^\top W = I`: the
eigenvectors of the :math:`d'` largest eigenvalues of :math:`A` (Ky Fan).

* :func:`w_operator`: :math:`A` matrix-free, :math:`O(nd)` per product;
* :func:`w_inverse_operator`: the shift-inverted :math:`(\sigma I - A)^{-1}` by Woodbury's
  identity, :math:`O(nd + n^2)` per product (wide data), with the shift from
  :func:`inverse_shift` (Weyl) or :func:`hinted_shift` proved by :func:`certified_shift`;
* :func:`w_matrix`: :math:`A` formed (the dense path, small d, tests);
* :func:`w_step`: ARPACK's Lanczos (``eigsh``) or LAPACK's ``eigh``, chosen by
  :func:`resolve_solver`;
* :func:`isometric_coordinates`: the ``n x n`` factor :math:`R` with :math:`RR^\top = XX^\top`
  that the shift-invert reuses (and k-means on the samples).

Dense data or the implicitly centred sparse data
(:class:`~sparsefs._kernels.centered.CenteredSparse`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from sparsefs._kernels.centered import CenteredSparse
from sparsefs._kernels.ufcm_kmeans import cluster_means

__all__ = [
    "DENSE_MAX_FEATURES",
    "DENSE_TALL_MAX_FEATURES",
    "certified_shift",
    "hinted_shift",
    "inverse_shift",
    "isometric_coordinates",
    "resolve_solver",
    "w_inverse_operator",
    "w_matrix",
    "w_operator",
    "w_step",
]

#: ``solver="auto"`` uses the dense eigendecomposition up to this many (non-constant) features
#: and Lanczos on the matrix-free operator above it. Below ~500 features forming the d x d
#: matrix costs nothing and LAPACK's ``eigh`` is robust for any d'; above, the O(d^3)
#: decomposition loses to O(n d) matrix-vector products (performance-notes.md §8).
DENSE_MAX_FEATURES = 500
#: ... and, for tall data (``n_features <= n_samples``), up to this many: there the low-rank
#: structure that makes the matrix-free shift-invert cheap is absent, and a dense top-d'
#: ``eigh`` at d = 2000 takes about 0.3 s (performance-notes.md §8).
DENSE_TALL_MAX_FEATURES = 2000
# Smallest Lanczos basis on A itself: more vectors than ARPACK's default 20 cut the products by
# a third to a half when the d'-th eigenvalue sits in the cluster of -beta*d_ii values.
_NCV_MIN = 40
# Smallest Lanczos basis on the shift-inverted operator: its wanted eigenvalues are well
# separated, and a warm-started W-step converges within 2 d' + 1 vectors; the basis is the
# least number of products ARPACK makes (a basis of 20: 21 products per W-step at d = 10^4;
# 10: 15, issue #33).
_NCV_INVERTED_MIN = 10


def isometric_coordinates(Xc: np.ndarray) -> np.ndarray:
    r"""Coordinates of the samples in their own span: the same pairwise distances, n columns.

    For ``n_features > n_samples``: :math:`R = V\Lambda^{1/2}` from the eigendecomposition
    :math:`XX^\top = V \Lambda V^\top`, so :math:`RR^\top = XX^\top` - the rows of ``R``
    (``n x n``) have the inner products, hence the distances, of the rows of ``Xc``: k-means on
    them is k-means on ``Xc`` at ``n/d`` of the cost, and :func:`inverse_shift` reuses ``R``.
    Otherwise ``Xc`` itself is returned.
    """
    n_samples, n_features = Xc.shape
    if n_features <= n_samples:
        return Xc
    gram = Xc.row_gram() if isinstance(Xc, CenteredSparse) else Xc @ Xc.T
    vals, vecs = linalg.eigh(gram, check_finite=False)
    return vecs * np.sqrt(np.clip(vals, 0.0, None))


def _averaging(labels: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """``Z -> P_U Z``: replace every row by the mean of its cluster (O(n k))."""
    labels = np.asarray(labels)
    k = int(labels.max()) + 1
    counts = np.bincount(labels, minlength=k).astype(np.float64)
    inv = np.divide(1.0, counts, out=np.zeros_like(counts), where=counts > 0)

    def apply(Z: np.ndarray) -> np.ndarray:
        if Z.ndim == 1:
            return (np.bincount(labels, weights=Z, minlength=k) * inv)[labels]
        sums = np.zeros((k, Z.shape[1]))
        np.add.at(sums, labels, Z)
        return (sums * inv[:, None])[labels]

    return apply


def w_operator(
    Xc: np.ndarray, labels: np.ndarray, alpha: float, beta_d: np.ndarray
) -> LinearOperator:
    r"""The W-step matrix as a matrix-free symmetric operator (eq. 13).

    :math:`A = X^\top((1-\alpha)I + \alpha P_U)X - \operatorname{diag}(\beta d)`.

    Each product costs two passes over ``Xc`` (:math:`O(nd)` flops, :math:`O(n + d)` extra
    memory); the ``d x d`` matrix is never formed.

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features)
        Centred data.
    labels : ndarray of int, shape (n_samples,)
    alpha : float
    beta_d : ndarray of shape (n_features,)
        :math:`\beta\,d_{ii}`, the penalty weight times the re-weighting diagonal.

    Returns
    -------
    scipy.sparse.linalg.LinearOperator of shape (n_features, n_features)
    """
    n_features = Xc.shape[1]
    average = _averaging(labels)
    beta_d = np.asarray(beta_d, dtype=np.float64)

    def matmat(V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=np.float64)
        Z = Xc @ V
        BZ = (1.0 - alpha) * Z + alpha * average(Z) if alpha else Z
        out = Xc.T @ BZ
        return out - (beta_d[:, None] * V if V.ndim == 2 else beta_d * V)

    return LinearOperator(
        (n_features, n_features), matvec=matmat, matmat=matmat, rmatvec=matmat,
        dtype=np.float64,
    )


def _apply_b(labels: np.ndarray, alpha: float) -> Callable[[np.ndarray], np.ndarray]:
    """``Z -> B Z = (1 - alpha) Z + alpha P_U Z`` (n-dimensional, O(n k))."""
    average = _averaging(labels)

    def apply(Z: np.ndarray) -> np.ndarray:
        return (1.0 - alpha) * Z + alpha * average(Z) if alpha else Z

    return apply


def inverse_shift(
    Xc: np.ndarray,
    labels: np.ndarray,
    alpha: float,
    beta_d: np.ndarray,
    factor: np.ndarray | None = None,
) -> float:
    r"""A shift :math:`\sigma` above the largest eigenvalue of :math:`A` (Weyl's inequality).

    :math:`\lambda_{\max}(A) \le \lambda_{\max}(X^\top B X) - \beta \min_i d_{ii}`, and the
    nonzero eigenvalues of :math:`X^\top B X` are those of the ``n x n`` matrix
    :math:`R^\top B R` with :math:`XX^\top = RR^\top`; :math:`\sigma` adds 10% of the larger
    magnitude as a margin (it keeps :math:`\sigma I - A` well conditioned without pushing
    :math:`\sigma` so far away that the wanted eigenvalues bunch up after the inversion).
    ``factor``: the ``R`` of :func:`isometric_coordinates` (constant over the iterations),
    computed here when not given.
    """
    R = isometric_coordinates(Xc) if factor is None else factor
    T = R.T @ _apply_b(labels, alpha)(R)
    top = float(linalg.eigvalsh(0.5 * (T + T.T), check_finite=False)[-1])
    bound = top - float(np.min(beta_d))
    margin = 0.1 * max(abs(top), abs(bound))
    return bound + (margin if margin > 0 else 1.0)


# A shift from the previous W-step's eigenvalues lies this share of their spread (or of the top
# eigenvalue's magnitude, if larger) above the top one; it must pass certified_shift.
_HINT_MARGIN = 0.2
# certified_shift accepts sigma when the n x n test matrix's top eigenvalue is below 1 - this
_CERTIFY_SLACK = 1e-6


def _shifted_gram(Xc, beta_d: np.ndarray, sigma: float) -> tuple[np.ndarray, np.ndarray]:
    r"""``inv = 1 / (beta d + sigma)`` and :math:`M = X \operatorname{diag}(inv) X^\top`."""
    inv = 1.0 / (np.asarray(beta_d, dtype=np.float64) + sigma)
    if not np.all(inv > 0) or not np.all(np.isfinite(inv)):
        raise ValueError(f"sigma={sigma!r} must exceed -beta*d_ii for every feature.")
    M = Xc.row_gram(inv) if isinstance(Xc, CenteredSparse) else (Xc * inv) @ Xc.T
    return inv, M


def certified_shift(
    Xc, labels: np.ndarray, alpha: float, beta_d: np.ndarray, sigma: float
) -> np.ndarray | None:
    r"""Whether :math:`\sigma > \lambda_{\max}(A)`, decided in ``n`` dimensions; its ``M`` if so.

    With :math:`\Lambda = \operatorname{diag}(\beta d) + \sigma I \succ 0` and a factor
    :math:`C` with :math:`B \preceq CC^\top` (:math:`C = P_U + \sqrt{1-\alpha}\,L_U`, so
    :math:`CC^\top = B`, for :math:`\alpha \le 1`; :math:`C = P_U \succeq B` for
    :math:`\alpha > 1`), :math:`A - \sigma I \preceq X^\top CC^\top X - \Lambda
    = \Lambda^{1/2}(GG^\top - I)\Lambda^{1/2}` with :math:`G = \Lambda^{-1/2}X^\top C`.
    By Sylvester's law of inertia the right-hand side is negative definite iff every
    eigenvalue of :math:`G^\top G = C^\top M C` (``n x n``, :math:`M = X\Lambda^{-1}X^\top`)
    is below 1. Exact for :math:`\alpha \le 1`, sufficient otherwise; accepted with a
    relative slack of ``1e-6``. Returns :math:`M` (reused by :func:`w_inverse_operator`) when
    the test passes, ``None`` when it fails or :math:`\Lambda` is not positive.
    """
    if not np.all(np.asarray(beta_d) + sigma > 0):
        return None
    _, M = _shifted_gram(Xc, beta_d, sigma)
    average = _averaging(labels)
    within = np.sqrt(max(1.0 - alpha, 0.0))

    def apply_c(Z: np.ndarray) -> np.ndarray:
        mean = average(Z)
        return mean + within * (Z - mean) if within else mean

    T = apply_c(apply_c(M).T)
    top = float(linalg.eigvalsh(0.5 * (T + T.T), check_finite=False)[-1])
    return M if top < 1.0 - _CERTIFY_SLACK else None


def hinted_shift(eigenvalues: np.ndarray) -> float:
    r"""A shift just above the previous W-step's eigenvalues (to be certified).

    :math:`\lambda_1 + 0.2\max(\lambda_1 - \lambda_{d'}, |\lambda_1|)`. Lanczos on
    :math:`(\sigma I - A)^{-1}` separates the wanted eigenvalues by the ratios
    :math:`(\sigma - \lambda_{d'+1}) / (\sigma - \lambda_{d'})`, which the Weyl bound of
    :func:`inverse_shift` - far above the spectrum once the penalty has removed most features -
    pushes towards 1 (about 100 products per W-step at 200 x 10^4 against about 20 here).
    """
    vals = np.asarray(eigenvalues, dtype=np.float64)
    top = float(vals.max())
    return top + _HINT_MARGIN * max(top - float(vals.min()), abs(top))


def w_inverse_operator(
    Xc: np.ndarray,
    labels: np.ndarray,
    alpha: float,
    beta_d: np.ndarray,
    sigma: float,
    gram: np.ndarray | None = None,
) -> LinearOperator:
    r"""The shift-inverted W-step matrix :math:`(\sigma I - A)^{-1}`, matrix-free (wide data).

    With :math:`\Lambda = \operatorname{diag}(\beta d) + \sigma I` (positive) and
    :math:`M = X\Lambda^{-1}X^\top` (``n x n``), Woodbury's identity gives

    .. math::

        (\sigma I - A)^{-1} = (\Lambda - X^\top B X)^{-1}
        = \Lambda^{-1} + \Lambda^{-1} X^\top B\,(I - M B)^{-1} X \Lambda^{-1},

    valid for a singular :math:`B` too (:math:`\alpha = 1`). Setup: one ``n x n x d`` product
    and an ``n x n`` LU factorisation; each product then costs :math:`O(nd + n^2)`. For
    :math:`\sigma > \lambda_{\max}(A)` the operator is positive definite and its largest
    eigenvalues :math:`1/(\sigma - \lambda)` belong to the largest :math:`\lambda`: the
    eigenvalues :math:`-\beta d_{ii}` of rows driven to zero, which spread the spectrum of
    :math:`A` over many orders of magnitude and stall plain Lanczos, are mapped next to 0.

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features)
    labels : ndarray of int, shape (n_samples,)
    alpha : float
    beta_d : ndarray of shape (n_features,)
    sigma : float
        Above the largest eigenvalue of :math:`A` (see :func:`inverse_shift` and
        :func:`certified_shift`).
    gram : ndarray of shape (n_samples, n_samples), optional
        :math:`M` for this ``sigma`` if the caller has it (:func:`certified_shift`).

    Returns
    -------
    scipy.sparse.linalg.LinearOperator of shape (n_features, n_features)
    """
    n_samples, n_features = Xc.shape
    inv, M = _shifted_gram(Xc, beta_d, sigma) if gram is None else (
        1.0 / (np.asarray(beta_d, dtype=np.float64) + sigma), gram)
    apply_b = _apply_b(labels, alpha)
    lu = linalg.lu_factor(np.eye(n_samples) - apply_b(M).T, check_finite=False)

    def matmat(V: np.ndarray) -> np.ndarray:
        V = np.asarray(V, dtype=np.float64)
        scale = inv[:, None] if V.ndim == 2 else inv
        U = scale * V
        T = linalg.lu_solve(lu, Xc @ U, check_finite=False)
        return U + scale * (Xc.T @ apply_b(T))

    return LinearOperator(
        (n_features, n_features), matvec=matmat, matmat=matmat, rmatvec=matmat,
        dtype=np.float64,
    )


def w_matrix(Xc: np.ndarray, labels: np.ndarray, alpha: float, beta_d: np.ndarray) -> np.ndarray:
    r"""The W-step matrix, formed densely (eq. 13; the dense path and tests only).

    :math:`A = (1-\alpha)S_t + \alpha S_b^{(U)} - \operatorname{diag}(\beta d)`, in
    :math:`O(nd^2)` time and :math:`d^2` memory.

    :math:`S_b^{(U)} = X^\top P_U X = \sum_k n_k m_k m_k^\top` with the cluster means
    :math:`m_k` of the centred data. Exactly symmetric.
    """
    A = Xc.col_gram() if isinstance(Xc, CenteredSparse) else Xc.T @ Xc
    if alpha:
        A *= 1.0 - alpha
        means, counts = cluster_means(Xc, labels)
        Mw = means * np.sqrt(counts)[:, None]
        A += alpha * (Mw.T @ Mw)
    A = 0.5 * (A + A.T)
    A[np.diag_indices_from(A)] -= np.asarray(beta_d, dtype=np.float64)
    return A


def resolve_solver(solver: str, n_samples: int, n_features: int, n_components: int) -> str:
    """``"dense"`` or ``"arpack"`` for a W-step of this size.

    ``"auto"``: dense up to :data:`DENSE_MAX_FEATURES` features, and also for tall data with at
    most :data:`DENSE_TALL_MAX_FEATURES` features (``n_features <= n_samples``: forming A costs
    no more than one pass of products, and the Woodbury shift-invert of :func:`w_step` only pays
    for wide data); Lanczos otherwise. ARPACK needs ``n_components < n_features - 1``; when that
    fails the dense path is used whatever was asked.
    """
    if solver not in ("auto", "arpack", "dense"):
        raise ValueError(f"solver={solver!r} is not one of 'auto', 'arpack', 'dense'.")
    if n_components >= n_features - 1:
        return "dense"
    if solver == "auto":
        small = n_features <= DENSE_MAX_FEATURES
        tall = n_features <= min(n_samples, DENSE_TALL_MAX_FEATURES)
        return "dense" if small or tall else "arpack"
    return solver


def _top_eigh(A: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest eigenpairs of the symmetric ``A`` by LAPACK.

    The subset driver (``dsyevr``) can return fewer pairs than asked when the k-th eigenvalue
    lies in a large degenerate cluster - measured at the first W-step (D = I, so
    :math:`A = X^\top BX - \beta I` has ``d - rank`` equal eigenvalues :math:`-\beta`) with
    d' above the rank; then the full decomposition is used.
    """
    d = A.shape[0]
    vals, vecs = linalg.eigh(A, subset_by_index=[d - k, d - 1], check_finite=False)
    if vecs.shape[1] != k:
        vals, vecs = linalg.eigh(A, check_finite=False, driver="evd")
        vals, vecs = vals[d - k:], vecs[:, d - k:]
    return vals, vecs


def _orient(vals: np.ndarray, vecs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Columns by decreasing eigenvalue, each signed so its largest-magnitude entry is positive."""
    order = np.argsort(vals)[::-1]
    vals, vecs = vals[order], vecs[:, order]
    pivot = vecs[np.argmax(np.abs(vecs), axis=0), np.arange(vecs.shape[1])]
    vecs = vecs * np.where(pivot < 0, -1.0, 1.0)
    return vals, vecs


def w_step(
    Xc: np.ndarray,
    labels: np.ndarray,
    alpha: float,
    beta_d: np.ndarray,
    n_components: int,
    *,
    solver: str = "auto",
    v0: np.ndarray | None = None,
    tol: float = 0.0,
    shift_invert: bool | None = None,
    factor: np.ndarray | None = None,
    shift_hint: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Solve :math:`\max_{W^\top W = I} \operatorname{Tr}(W^\top A W)` (eqs. 12-13).

    By Ky Fan's theorem the maximiser is spanned by the eigenvectors of the ``n_components``
    largest algebraic eigenvalues of the symmetric :math:`A` (see :func:`w_operator`).

    Parameters
    ----------
    Xc : ndarray of shape (n_samples, n_features)
        Centred data.
    labels : ndarray of int, shape (n_samples,)
    alpha : float
    beta_d : ndarray of shape (n_features,)
        :math:`\beta\,d_{ii}`.
    n_components : int
        :math:`d'`, at most ``n_features``.
    solver : {"auto", "arpack", "dense"}, default="auto"
        ``"arpack"``: implicitly restarted Lanczos (``eigsh(which="LA")``) on the matrix-free
        operator; ``"dense"``: LAPACK ``eigh`` on the formed matrix (test reference, small d).
        See :func:`resolve_solver`.
    v0 : ndarray of shape (n_features,), optional
        Lanczos start vector (the warm start). Pass one: without it ARPACK draws its own, from
        a generator that is not under the caller's control.
    tol : float, default=0.0
        ARPACK's relative accuracy of the Ritz values (0 = machine precision).
    shift_invert : bool or None, default=None
        Lanczos on :math:`(\sigma I - A)^{-1}` (:func:`w_inverse_operator`) rather than on
        :math:`A` (:func:`w_operator`); ``None``: when ``n_samples < n_features``, where the
        Woodbury form is cheap. Both are matrix-free; only the ``"arpack"`` path uses it. If
        ARPACK does not converge on :math:`A` the inverted operator is tried, and if that
        fails too, LAPACK's ``eigh`` on the formed matrix (the result is the same subspace).
    factor : ndarray of shape (n_samples, n_samples), optional
        :func:`isometric_coordinates` of ``Xc``, reused by the shift-invert across W-steps.
    shift_hint : ndarray, optional
        The previous W-step's eigenvalues: the shift-invert then tries :func:`hinted_shift`,
        used only if :func:`certified_shift` proves it above the spectrum (else the Weyl bound
        of :func:`inverse_shift`). Either way the operator is exact; the hint only makes
        Lanczos converge in fewer products.

    Returns
    -------
    W : ndarray of shape (n_features, n_components)
        Orthonormal columns, by decreasing eigenvalue, each with its largest-magnitude entry
        positive.
    eigenvalues : ndarray of shape (n_components,)
        Decreasing.
    """
    n_features = Xc.shape[1]
    if not 1 <= n_components <= n_features:
        raise ValueError(
            f"n_components={n_components} must be between 1 and n_features={n_features}."
        )
    how = resolve_solver(solver, Xc.shape[0], n_features, n_components)
    if how == "dense":
        A = w_matrix(Xc, labels, alpha, beta_d)
        vals, vecs = _top_eigh(A, n_components)
    else:
        op = w_operator(Xc, labels, alpha, beta_d)
        if shift_invert is None:
            shift_invert = Xc.shape[0] < n_features
        vecs = None
        for inverted in (shift_invert, True) if not shift_invert else (True,):
            target = op
            if inverted:
                gram = None
                if shift_hint is not None and len(shift_hint):
                    sigma = hinted_shift(shift_hint)
                    gram = certified_shift(Xc, labels, alpha, beta_d, sigma)
                if gram is None:
                    sigma = inverse_shift(Xc, labels, alpha, beta_d, factor)
                target = w_inverse_operator(Xc, labels, alpha, beta_d, sigma, gram)
            ncv = min(n_features, max(2 * n_components + 1,
                                      _NCV_INVERTED_MIN if inverted else _NCV_MIN))
            try:
                _, vecs = eigsh(target, k=n_components, which="LA", v0=v0, tol=tol, ncv=ncv)
                break
            except ArpackNoConvergence:
                # Lanczos on A stalls when the penalty spreads its spectrum (tall data, strong
                # beta): retry on the shift-inverted operator, then fall back to LAPACK
                continue
        if vecs is None:
            _, vecs = _top_eigh(w_matrix(Xc, labels, alpha, beta_d), n_components)
        # ARPACK's vectors are orthonormal to working precision; one QR pass (same span)
        # makes W^T W = I to rounding, which the constraint and the tests rely on.
        vecs, r = np.linalg.qr(vecs)
        vecs = vecs * np.sign(np.diag(r))
        vals = np.einsum("ij,ij->j", vecs, op @ vecs)  # Rayleigh quotients of A
    vals, vecs = _orient(vals, vecs)
    return vecs, vals
