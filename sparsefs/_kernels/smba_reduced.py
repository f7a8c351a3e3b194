r"""SMBA's exact reduced solver (q = 2): the row-space group lasso, its variational (eta) form
minimised by L-BFGS-B then projected Newton, polished by block coordinate descent.

The problem and the notation are those of :mod:`sparsefs._kernels.smba`.

**Exact reduced solver (q = 2).** Every solution has its rows in the row space of X
(affine: of :math:`X - \bar y\mathbf 1^\top` plus :math:`\mathbf 1`), so
:math:`C = BW^\top` with an orthonormal M x k basis W (k <= n + 1) and B solves a multi-task
group lasso with an r x M design (:func:`reduce_smba`); :func:`smba_group_lasso` minimises its
variational form by L-BFGS-B (the affine constraint exact), certifies it by the duality gap and
polishes, if needed, by block coordinate descent (:func:`group_lasso_bcd`; affine: method of
multipliers). :math:`O(Mn^2)` per step, no M x M array.

References
----------
D. Nardone, A. Ciaramella, A. Staiano, "A sparse-modeling based approach for class specific
feature selection", PeerJ Computer Science 5:e237, 2019.
E. Elhamifar, G. Sapiro, R. Vidal, "See all by looking at a few: sparse modeling for finding
representative objects", CVPR 2012.
"""

from __future__ import annotations

import contextlib

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.linalg.blas import dsyrk
from scipy.linalg.lapack import dpotri

from sparsefs._kernels import group_lasso as gl

__all__ = [
    "ETA_LBFGS_EVALS",
    "ETA_NEWTON_MAX_FREE",
    "reduce_smba",
    "smba_group_lasso",
]


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
            Rp = np.tril(inv)  # H^-1 from its lower triangle, then times diag(t), in place
            Rp += np.tril(inv, -1).T
            Rp *= t_diag[None, :]
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
    (:func:`~sparsefs._kernels.group_lasso.group_lasso_gap`'s formula with :math:`g_i`) and
    the search stops as soon as it is at most ``abs_tol``.

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
            if F_new < F and F_new <= F + 1e-4 * lin:
                ev_new = _eta_finish(Ap, p, lam, new, *sol)
                if record(new, ev_new) or not ev_new[0] < F:
                    return  # done, or F flat in float64 (the polish takes over)
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
            out = gl.group_lasso_bcd(At, red["T"], lam, B=B, tol=abs_tol,
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
                out = gl.group_lasso_bcd(Aa, T, lam, B=B, tol=abs_tol,
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
    return {"B": B, "W": W, "row_norms": gl.row_norms(B, safe=False),
            "grad": G, "grad_norms": gl.row_norms(G, safe=False), "nu": nu_full,
            "n_iter": n_iter, "n_eval": n_eval, "n_outer": n_outer,
            "converged": bool(converged), "gap": np.asarray(gaps),
            "violation": np.asarray(viols), "rank": r}
