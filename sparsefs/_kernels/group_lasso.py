r"""The l2,1 (row-group) penalty and the least-squares group-lasso solver: the shared layer.

One home for the row-sparse penalty :math:`\lambda\|W\|_{2,1} = \lambda\sum_j\|w^j\|_2` used by
the l2,1 selectors (:mod:`sparsefs._kernels.l21`: RFS, ls-l21, ll-l21, the l1 / group
logistic paths) and by SMBA (:mod:`sparsefs._kernels.smba` and its ``smba_*`` modules), in
skglm's datafit / penalty / solver split:

* **penalty** - :func:`row_norms`, :func:`l21_norm` (the value), :func:`group_soft_threshold`
  (the prox), and :class:`GroupL21Penalty`, which bundles value, prox, the scale
  :math:`\lambda_{max}` and the subdifferential distance of every row
  (:meth:`GroupL21Penalty.row_violation`, the KKT residual);
* **solver** for the multi-task least-squares group lasso
  :math:`\min_B \tfrac12\|T - AB\|_F^2 + \lambda\|B\|_{2,1}`: its duality gap
  (:func:`group_lasso_gap`) and block coordinate descent on a growing working set
  (:func:`group_lasso_bcd`, celer's working-set rule and Anderson extrapolation).

The smooth data fits and the proximal-gradient solver with a general data fit stay in
:mod:`sparsefs._kernels.l21`; method kernels take the penalty from here and never from one
another.

References
----------
M. Massias, A. Gramfort, J. Salmon, "Celer: a fast solver for the Lasso with dual
extrapolation", ICML 2018. Q. Bertrand, Q. Klopfenstein, P.-A. Bannier, G. Gidel, M. Massias,
"Beyond L1: faster and better sparse models with skglm", NeurIPS 2022.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "GroupL21Penalty",
    "group_lasso_bcd",
    "group_lasso_gap",
    "group_soft_threshold",
    "l21_norm",
    "nonzero_rows",
    "row_norms",
]


# --------------------------------------------------------------------------------------------
# the penalty: value, prox, subdifferential distance
# --------------------------------------------------------------------------------------------


def row_norms(W: np.ndarray, *, safe: bool = True) -> np.ndarray:
    """Euclidean norm of every row of a 2-D array (``|w|`` for a 1-D array).

    ``safe=True`` scales every row by its largest entry first (no overflow of the squares for
    huge entries, no underflow for tiny ones); ``safe=False`` is the plain
    ``sqrt(sum of squares)``, for data already scaled to a safe range (SMBA rescales X by a
    power of two), half the passes.
    """
    W = np.asarray(W)
    if W.ndim == 1:
        return np.abs(W)
    if not safe:
        return np.sqrt(np.einsum("ij,ij->i", W, W))
    # scaled to avoid overflow of the squares for huge entries
    scale = np.abs(W).max(axis=1) if W.shape[1] else np.zeros(W.shape[0])
    out = np.zeros(W.shape[0])
    nz = scale > 0
    out[nz] = scale[nz] * np.sqrt(np.einsum("ij,ij->i", W[nz] / scale[nz, None],
                                            W[nz] / scale[nz, None]))
    return out


def nonzero_rows(W: np.ndarray) -> np.ndarray:
    """Boolean mask of the rows of a 2-D array with a nonzero entry (``row_norms(W) > 0``),
    column by column: a reduction over a short last axis costs numpy ~10x more per entry,
    and the solvers ask this of a d x K coefficient matrix at every working set."""
    W = np.asarray(W)
    if W.ndim == 1:
        return W != 0
    out = np.zeros(W.shape[0], dtype=bool)
    for k in range(W.shape[1]):
        out |= W[:, k] != 0
    return out


def l21_norm(W: np.ndarray, *, safe: bool = True) -> float:
    r""":math:`\|W\|_{2,1} = \sum_j \|w^j\|_2`, the sum of the row norms (``safe``: see
    :func:`row_norms`)."""
    return float(row_norms(W, safe=safe).sum())


def group_soft_threshold(
    V: np.ndarray,
    threshold: float | np.ndarray,
    *,
    out: np.ndarray | None = None,
    norms: np.ndarray | None = None,
) -> np.ndarray:
    r"""Proximal operator of :math:`t\|\cdot\|_{2,1}`: each row shrunk towards 0 by ``t``.

    .. math:: \operatorname{prox}(V)^j = \max\!\left(0, 1 - t / \|v^j\|_2\right) v^j .

    Rows with norm at most ``t`` become exactly zero. ``norms``: the row norms of V if the
    caller has them (:func:`row_norms` otherwise); ``out``: where to write (may be V).
    """
    if norms is None:
        norms = row_norms(V)
    # t / norm overflows only for norms far below t, whose rows np.where zeroes anyway
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        factor = np.where(norms > threshold, 1.0 - threshold / norms, 0.0)
    return np.multiply(V, factor[:, None], out=out)


class GroupL21Penalty:
    r"""Row-sparse penalty :math:`\lambda \|W\|_{2,1}` (ls-l21, ll-l21).

    Optimality (KKT) at a solution, with :math:`G = \nabla_W f`:
    :math:`G^j + \lambda w^j/\|w^j\| = 0` on nonzero rows and :math:`\|G^j\| \le \lambda` on zero
    rows. A zero row enters the model when :math:`\|G^j\|` reaches :math:`\lambda`, so
    :math:`\|G^j\|/\lambda - 1 \in [-1, 0]` measures how close it is to entering.
    :meth:`row_violation` is the distance of :math:`-G^j` to the subdifferential
    :math:`\lambda\,\partial\|w^j\|_2` (0 exactly at a solution).
    """

    name = "l21"

    def value(self, W: np.ndarray, lam: float) -> float:
        return lam * l21_norm(W)

    def prox(self, V: np.ndarray, step_lam: float) -> np.ndarray:
        return group_soft_threshold(V, step_lam)

    def lam_max(self, G0: np.ndarray) -> float:
        """Smallest penalty with W = 0 optimal, from the gradient at W = 0."""
        return float(row_norms(G0).max(initial=0.0))

    def row_violation(self, W: np.ndarray, G: np.ndarray, lam: float) -> np.ndarray:
        """Per-row KKT residual (0 at an exact solution)."""
        norms = row_norms(W)
        out = np.maximum(row_norms(G) - lam, 0.0)
        nz = norms > 0
        if nz.any():
            out[nz] = row_norms(G[nz] + lam * W[nz] / norms[nz, None])
        return out

    def entry_closeness(self, G: np.ndarray, lam: float) -> np.ndarray:
        """``||G_j|| / lam - 1`` for every row (in [-1, 0] on zero rows at a solution)."""
        return row_norms(G) / lam - 1.0

# --------------------------------------------------------------------------------------------
# the least-squares multi-task group lasso: duality gap, block coordinate descent
# --------------------------------------------------------------------------------------------


@njit(cache=True)
def _bcd_sweep(At, B, R, lip, lam, groups, g, v):  # pragma: no cover - compiled
    """One cyclic pass of exact group updates over ``groups``, in place.

    For the group lasso :math:`\\min_B \\tfrac12\\|T - AB\\|^2 + \\lambda\\sum_i\\|b^i\\|` with
    ``At = A^T`` (M x p, row i = :math:`a_i`), ``B`` (M x k) and the residual ``R = T - AB``
    (p x k): :math:`b^i \\leftarrow \\operatorname{shrink}(b^i + a_i^\\top R/L_i,
    \\lambda/L_i)`, :math:`L_i = \\|a_i\\|^2`, then :math:`R \\mathrel{-}= a_i (\\Delta b^i)^\\top`.
    Returns the largest :math:`\\|\\Delta b^i\\|`.
    """
    p, k = R.shape
    biggest = 0.0
    for i in groups:
        L = lip[i]
        if L <= 0.0:
            continue
        for t in range(k):
            g[t] = 0.0
        for j in range(p):
            a = At[i, j]
            if a != 0.0:
                for t in range(k):
                    g[t] += a * R[j, t]
        nrm = 0.0
        for t in range(k):
            v[t] = B[i, t] + g[t] / L
            nrm += v[t] * v[t]
        nrm = np.sqrt(nrm)
        thr = lam / L
        f = 1.0 - thr / nrm if nrm > thr else 0.0
        dn = 0.0
        for t in range(k):
            d = f * v[t] - B[i, t]
            g[t] = d
            dn += d * d
        if dn == 0.0:
            continue
        if dn > biggest:
            biggest = dn
        for t in range(k):
            B[i, t] += g[t]
        for j in range(p):
            a = At[i, j]
            if a != 0.0:
                for t in range(k):
                    R[j, t] -= a * g[t]
    return np.sqrt(biggest)


def group_lasso_gap(At_S, B_S, R, lam):
    r"""Duality gap of the group lasso restricted to the groups S (B zero elsewhere).

    The dual of :math:`\min_B \tfrac12\|T - AB\|^2 + \lambda\sum_i\|b^i\|` is
    :math:`\max_\Theta \tfrac12\|T\|^2 - \tfrac12\|T - \lambda\Theta\|^2` s.t.
    :math:`\|a_i^\top\Theta\|_2 \le 1` for all i; the residual rescaled into the feasible set,
    :math:`\Theta = R/\max(\lambda, \max_i\|a_i^\top R\|)`, gives (with
    :math:`\theta = \lambda/\max(\lambda, \max_i \|g_i\|)`, :math:`g_i = a_i^\top R` and
    :math:`T = R + AB`) the gap
    :math:`\tfrac12(1-\theta)^2\|R\|^2 + \sum_i(\lambda\|b^i\| - \theta\langle b^i, g_i\rangle)`,
    a sum of non-negative terms (no cancellation near the optimum).

    Returns (gap, primal, g norms over S, G = A_S^T R).
    """
    G = At_S @ R
    gn = row_norms(G, safe=False)
    rr = float(np.einsum("ij,ij->", R, R))
    theta = lam / max(lam, float(gn.max(initial=0.0)))
    pen = lam * l21_norm(B_S, safe=False)
    gap = 0.5 * (1.0 - theta) ** 2 * rr + pen - theta * float(np.einsum("ij,ij->", B_S, G))
    return max(gap, 0.0), 0.5 * rr + pen, gn, G


def _anderson_step(last, At_ws, T, B, R, ws, lam):
    """Anderson extrapolation of the last K+1 working-set iterates (kept if it lowers the
    objective); updates B and R in place. Returns whether it was accepted."""
    Xs = np.stack([b.ravel() for b in last])
    D = np.diff(Xs, axis=0)
    DD = D @ D.T
    K = DD.shape[0]
    try:
        c = np.linalg.solve(DD + 1e-14 * np.trace(DD) * np.eye(K), np.ones(K))
    except np.linalg.LinAlgError:  # pragma: no cover - singular after regularisation
        return False
    if not np.all(np.isfinite(c)) or c.sum() == 0.0:
        return False
    c /= c.sum()
    B_acc = (c @ Xs[1:]).reshape(last[-1].shape)
    R_acc = T - At_ws.T @ B_acc
    B_ws = last[-1]
    obj = 0.5 * float(np.einsum("ij,ij->", R, R)) + lam * l21_norm(B_ws, safe=False)
    obj_acc = 0.5 * float(np.einsum("ij,ij->", R_acc, R_acc)) + lam * l21_norm(B_acc,
                                                                              safe=False)
    if obj_acc < obj:
        B[ws] = B_acc
        R[...] = R_acc
        return True
    return False


def group_lasso_bcd(
    At: np.ndarray,
    T: np.ndarray,
    lam: float,
    *,
    B: np.ndarray | None = None,
    tol: float = 1e-10,
    max_sweeps: int = 3000,
    ws_size: int | None = None,
    check_every: int = 1,
    anderson: int = 5,
) -> dict:
    r"""Multi-task group lasso by block coordinate descent on a growing working set.

    .. math::

        \min_{B \in \mathbb R^{M\times k}}\ \tfrac12\|T - AB\|_F^2 + \lambda\sum_{i=1}^M\|b^i\|_2,
        \qquad A \in \mathbb R^{p \times M},\ T \in \mathbb R^{p\times k}.

    Each outer step computes the full duality gap (:func:`group_lasso_gap`, one GEMM of
    :math:`O(Mpk)`); if it exceeds ``tol`` the working set becomes the support plus the groups
    closest to their dual constraint, :math:`(1 - \|a_i^\top\Theta\|)/\|a_i\|` smallest
    (celer's rule; its size doubles every outer step), and exact group updates
    (:func:`_bcd_sweep`, :math:`4pk` flops per group) run on it until its own gap is at most
    0.3 times the full gap (checked every ``check_every`` sweeps).

    Parameters
    ----------
    At : ndarray of shape (M, p), C-contiguous
        :math:`A^\top` (row i is the group's column :math:`a_i`).
    T : ndarray of shape (p, k)
    lam : float > 0
    B : ndarray of shape (M, k), optional
        Warm start (updated in place).
    tol : float
        Absolute duality gap to reach.
    max_sweeps : int
        Total sweeps (over the working sets) allowed.
    ws_size : int, optional
        First working-set size (default: twice the support, at least 2p, at most M).
    check_every : int
    anderson : int
        Every ``anderson + 1`` sweeps, the Anderson extrapolation of the last iterates (on
        the working set) replaces B when it lowers the objective (0: off).

    Returns
    -------
    dict
        ``coef`` (B), ``residual`` (R = T - AB), ``grad_norms`` (:math:`\|a_i^\top R\|`),
        ``gap`` (full gap at the end), ``n_sweeps``, ``converged``, ``gaps`` (the working-set
        problem's gap after each checked sweep; the full gap after the last sweep of each
        working set), ``ws_size``.
    """
    M, p = At.shape
    k = T.shape[1]
    B = np.zeros((M, k)) if B is None else B
    lip = np.einsum("ij,ij->i", At, At)
    g = np.empty(k)
    v = np.empty(k)
    gaps: list[float] = []
    n_sweeps = 0
    converged = False
    size = ws_size
    while True:
        R = T - At.T @ B  # fresh residual (no drift)
        gap, _, gn, _ = group_lasso_gap(At, B, R, lam)
        if gaps:
            gaps[-1] = gap  # the full problem's gap at the last sweep's iterate
        if gap <= tol:
            converged = True
            break
        if n_sweeps >= max_sweeps:
            break
        support = row_norms(B, safe=False) > 0
        nsup = int(support.sum())
        size = max(2 * nsup, 2 * p, 1) if size is None else max(2 * size, 2 * nsup)
        size = min(size, M)
        s = max(lam, float(gn.max(initial=0.0)))
        with np.errstate(divide="ignore", invalid="ignore"):
            prio = np.where(lip > 0, (1.0 - gn / s) / np.sqrt(lip), np.inf)
        prio[support] = -np.inf
        ws = np.argpartition(prio, size - 1)[:size] if size < M else np.arange(M)
        ws = np.sort(ws[np.isfinite(prio[ws]) | support[ws]]).astype(np.int64)
        if ws.size == 0:  # pragma: no cover - every column zero
            break
        At_ws = np.ascontiguousarray(At[ws])
        target = max(0.3 * gap, tol)
        inner = 0
        last: list[np.ndarray] = []
        while n_sweeps < max_sweeps:
            _bcd_sweep(At, B, R, lip, lam, ws, g, v)
            n_sweeps += 1
            inner += 1
            if anderson:
                last.append(B[ws])
                if len(last) == anderson + 1:
                    _anderson_step(last, At_ws, T, B, R, ws, lam)
                    last = []
            if inner % check_every == 0:
                ws_gap, _, _, _ = group_lasso_gap(At_ws, B[ws], R, lam)
                gaps.append(ws_gap)
                if ws_gap <= target:
                    break
    return {"coef": B, "residual": R, "grad_norms": gn, "gap": gap,
            "n_sweeps": n_sweeps, "converged": converged, "gaps": np.asarray(gaps),
            "ws_size": size}
