r"""Sparse KOS, the closed form: the dual coefficients of KOS (equation (5), and the packages'
form), its solvers (Cholesky, eigendecomposition, conjugate gradients; dense or grouped), the
projection (6) and the objective (12).

Part of :mod:`sparsefs._kernels.sparse_kos` (notation there).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla

from sparsefs._kernels.kos_kernel import GroupedKernel, _centered_product, double_center

#: the paper's stabilising constant in the ridge term :math:`\gamma A^\top (M + \varepsilon I) A`
EPS = 1e-5

# (M + aI)^{-1}Z by conjugate gradients from this many rows, by Cholesky below: ~14 CG
# iterations of Python overhead cost more than an n^3/3 factorisation up to n ~ 350
# (one BLAS thread: 0.49 vs 0.91 ms at n = 200, 3.7 vs 3.3 ms at n = 400)
_DENSE_MIN_CG = 350

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
