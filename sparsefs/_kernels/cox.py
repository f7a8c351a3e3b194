r"""Cox's proportional-hazards partial likelihood: values, derivatives and score tests.

With samples sorted by time, the risk set of time :math:`t` is :math:`R(t) = \{j : t_j \ge t\}`
and, for a linear predictor :math:`\eta = X\beta` with :math:`w_j = e^{\eta_j}`, the partial
log-likelihood with Breslow's handling of tied event times is

.. math::

    \ell(\beta) = \sum_{i:\,\delta_i = 1} \Big[\eta_i - \log \sum_{j \in R(t_i)} w_j\Big].

Efron's approximation replaces, for a time :math:`t` with :math:`d` events :math:`D`, the
:math:`d` equal denominators by :math:`S_0 - \tfrac{l}{d} S_{0,D}`, :math:`l = 0..d-1`
(:math:`S_0` the risk-set sum of :math:`w`, :math:`S_{0,D}` its part over :math:`D`). Without ties
both are Cox's partial likelihood.

Everything here walks the distinct times once (``O(n)`` per pass after one sort), with risk-set
sums accumulated from the latest time backwards:

* :func:`eta_derivatives`: :math:`\ell`, its gradient in :math:`\eta` and the diagonal of minus
  its Hessian in :math:`\eta` - the quantities of the coordinate-descent Cox lasso of Simon,
  Friedman, Hastie & Tibshirani (J. Stat. Softw. 39(5), 2011);
* :func:`loglik_beta`: :math:`\ell`, :math:`\nabla_\beta \ell` and :math:`\nabla^2_\beta\ell` for a
  small dense X (the unpenalised Newton fit, the tests);
* :func:`score_tests`: for every feature at once, the score test of :math:`\beta_j = 0` in the
  one-feature model, :math:`\chi^2_j = U_j^2 / I_j`, from one compiled pass over X (no copy).
  For a binary feature it is the log-rank test (``ties="exact"`` with tied times: the
  hypergeometric variance of Mantel's log-rank test).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp
from scipy import special

from sparsefs._kernels.threads import pool_threads, run_tasks

__all__ = [
    "TIES",
    "CoxData",
    "chi2_pvalues",
    "cox_data",
    "eta_derivatives",
    "loglik_beta",
    "newton_cox",
    "score_tests",
]

#: the handlings of tied event times
TIES = ("breslow", "efron")


@dataclass(frozen=True)
class CoxData:
    """Samples sorted by time and grouped by distinct time.

    Attributes
    ----------
    order : ndarray of int, shape (n,)
        Sample indices by increasing time (stable).
    starts : ndarray of int, shape (n_groups + 1,)
        Group ``g`` (one distinct time) is ``order[starts[g]:starts[g + 1]]``.
    event : ndarray of bool, shape (n,)
        The event indicator in sorted order.
    n_events : ndarray of int, shape (n_groups,)
        Events per group.
    """

    order: np.ndarray
    starts: np.ndarray
    event: np.ndarray
    n_events: np.ndarray

    @property
    def n_samples(self) -> int:
        return int(self.order.shape[0])


def cox_data(time: np.ndarray, event: np.ndarray) -> CoxData:
    """Sort by time once and find the groups of equal times."""
    time = np.asarray(time, dtype=np.float64)
    event = np.asarray(event, dtype=bool)
    order = np.argsort(time, kind="stable")
    ts = time[order]
    new = np.flatnonzero(np.diff(ts) != 0) + 1
    starts = np.concatenate([[0], new, [ts.shape[0]]]).astype(np.int64)
    ev = event[order]
    n_events = np.add.reduceat(ev.astype(np.int64), starts[:-1]) if ts.size else np.zeros(0, int)
    return CoxData(order.astype(np.int64), starts, ev, n_events.astype(np.int64))


@numba.njit(cache=True, nogil=True)
def _eta_derivatives(eta, order, starts, ev, efron):  # pragma: no cover - compiled
    n = eta.shape[0]
    n_groups = starts.shape[0] - 1
    m = -np.inf
    for i in range(n):
        if eta[i] > m:
            m = eta[i]
    ws = np.empty(n)  # w in sorted order, scaled by exp(-max eta) (the likelihood is invariant)
    for i in range(n):
        ws[i] = np.exp(eta[order[i]] - m)
    # per group: the accumulated sums of 1/den and 1/den^2 over the groups up to and including
    # g (for samples at risk but not dying at g), and the own-group terms of those dying at g
    cum_a = np.empty(n_groups)
    cum_b = np.empty(n_groups)
    own_a = np.zeros(n_groups)  # dying member's own-group terms, minus the full ones
    own_b = np.zeros(n_groups)
    s0 = 0.0
    loglik = 0.0
    grp_a = np.zeros(n_groups)
    grp_b = np.zeros(n_groups)
    for g in range(n_groups - 1, -1, -1):
        s0d = 0.0
        d = 0
        for t in range(starts[g], starts[g + 1]):
            s0 += ws[t]
            if ev[t]:
                s0d += ws[t]
                d += 1
                loglik += eta[order[t]] - m
        if d == 0:
            continue
        if efron and d > 1:
            a = 0.0
            b = 0.0
            ad = 0.0
            bd = 0.0
            for l in range(d):
                frac = l / d
                den = s0 - frac * s0d
                loglik -= np.log(den)
                a += 1.0 / den
                b += 1.0 / (den * den)
                ad += (1.0 - frac) / den
                bd += (1.0 - frac) * (1.0 - frac) / (den * den)
            grp_a[g] = a
            grp_b[g] = b
            own_a[g] = ad - a
            own_b[g] = bd - b
        else:
            loglik -= d * np.log(s0)
            grp_a[g] = d / s0
            grp_b[g] = d / (s0 * s0)
    acc_a = 0.0
    acc_b = 0.0
    for g in range(n_groups):
        acc_a += grp_a[g]
        acc_b += grp_b[g]
        cum_a[g] = acc_a
        cum_b[g] = acc_b
    grad = np.empty(n)
    hess = np.empty(n)
    for g in range(n_groups):
        for t in range(starts[g], starts[g + 1]):
            a = cum_a[g]
            b = cum_b[g]
            if ev[t]:
                a += own_a[g]
                b += own_b[g]
            w = ws[t]
            i = order[t]
            grad[i] = (1.0 if ev[t] else 0.0) - w * a
            h = w * a - w * w * b
            hess[i] = h if h > 0.0 else 0.0
    return loglik, grad, hess


def eta_derivatives(eta: np.ndarray, data: CoxData, ties: str = "breslow"
                    ) -> tuple[float, np.ndarray, np.ndarray]:
    r"""The partial log-likelihood and its derivatives in the linear predictor.

    Parameters
    ----------
    eta : ndarray of shape (n,)
        :math:`\eta = X\beta` (in the original sample order).
    data : CoxData
    ties : {"breslow", "efron"}

    Returns
    -------
    loglik : float
        :math:`\ell`.
    grad : ndarray of shape (n,)
        :math:`\partial\ell/\partial\eta_k = \delta_k - w_k \sum_{g:\,t_g \le t_k} c_{kg}`
        (:math:`c` the Breslow or Efron weights of the groups whose risk set holds :math:`k`);
        :math:`X^\top` ``grad`` is :math:`\nabla_\beta\ell`.
    hess : ndarray of shape (n,)
        :math:`-\partial^2\ell/\partial\eta_k^2 \ge 0`, the diagonal weights of Simon et al.'s
        quadratic approximation.
    """
    if ties not in TIES:
        raise ValueError(f"ties={ties!r} is not one of {TIES}.")
    eta = np.ascontiguousarray(eta, dtype=np.float64)
    return _eta_derivatives(eta, data.order, data.starts, data.event, ties == "efron")


def loglik_beta(X: np.ndarray, beta: np.ndarray, data: CoxData, ties: str = "breslow",
                hessian: bool = True):
    r""":math:`\ell(\beta)`, :math:`\nabla_\beta\ell` and :math:`\nabla^2_\beta\ell` for dense X.

    The full Hessian costs :math:`O(n p^2)`; meant for few features (the unpenalised fit, the
    tests). Columns are used as given (the likelihood does not depend on centring them).

    Returns
    -------
    loglik : float
    grad : ndarray of shape (p,)
    hess : ndarray of shape (p, p) or None
    """
    if ties not in TIES:
        raise ValueError(f"ties={ties!r} is not one of {TIES}.")
    X = np.asarray(X, dtype=np.float64)
    eta = X @ beta
    m = eta.max() if eta.size else 0.0
    Xs = X[data.order]
    es = eta[data.order]
    ws = np.exp(es - m)
    p = X.shape[1]
    loglik = 0.0
    grad = np.zeros(p)
    hess = np.zeros((p, p)) if hessian else None
    s0 = 0.0
    s1 = np.zeros(p)
    s2 = np.zeros((p, p)) if hessian else None
    starts = data.starts
    for g in range(starts.shape[0] - 2, -1, -1):
        rows = slice(starts[g], starts[g + 1])
        wg, xg, evg = ws[rows], Xs[rows], data.event[rows]
        s0 += wg.sum()
        s1 += wg @ xg
        if hessian:
            s2 += (xg * wg[:, None]).T @ xg
        d = int(evg.sum())
        if d == 0:
            continue
        xd, wd = xg[evg], wg[evg]
        loglik += float(es[rows][evg].sum() - d * m)
        grad += xd.sum(axis=0)
        s0d, s1d = wd.sum(), wd @ xd
        s2d = (xd * wd[:, None]).T @ xd if hessian else None
        fracs = np.arange(d) / d if ties == "efron" else np.zeros(d)
        for f in fracs:
            den = s0 - f * s0d
            mean = (s1 - f * s1d) / den
            loglik -= np.log(den)
            grad -= mean
            if hessian:
                hess -= (s2 - f * s2d) / den - np.outer(mean, mean)
    return loglik, grad, hess


def newton_cox(X: np.ndarray, data: CoxData, ties: str = "breslow", *, tol: float = 1e-10,
               max_iter: int = 100, ridge: float = 0.0) -> tuple[np.ndarray, float, int]:
    r"""The unpenalised (or ridge) maximum partial-likelihood estimate by damped Newton steps.

    Maximises :math:`\ell(\beta) - \tfrac{\text{ridge}}{2}\|\beta\|^2`; each step halves until
    the objective does not decrease. Stops when the Newton decrement
    :math:`g^\top H^{-1} g / 2` is below ``tol``.

    Returns
    -------
    beta : ndarray of shape (p,)
    loglik : float
        :math:`\ell(\hat\beta)`.
    n_iter : int
    """
    p = X.shape[1]
    beta = np.zeros(p)

    def objective(b):
        ll, g, H = loglik_beta(X, b, data, ties)
        return ll - 0.5 * ridge * b @ b, g - ridge * b, H - ridge * np.eye(p), ll

    obj, g, H, ll = objective(beta)
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007 - returned
        step = np.linalg.solve(-H, g)
        if 0.5 * float(g @ step) < tol:
            break
        t = 1.0
        while True:
            cand = beta + t * step
            obj_c, g_c, H_c, ll_c = objective(cand)
            if obj_c >= obj or t < 1e-10:
                break
            t *= 0.5
        beta, obj, g, H, ll = cand, obj_c, g_c, H_c, ll_c
    return beta, float(ll), n_iter


# --------------------------------------------------------------------------------------------
# per-feature score tests
# --------------------------------------------------------------------------------------------


@numba.njit(cache=True, nogil=True)
def _score_block(X, shift, inv_scale, order, starts, ev, n_events, c0, c1, j0, j1, mode, U,
                 I):  # pragma: no cover - compiled
    """U and I of the columns ``j0:j1`` of dense X (rows read in time order, latest first),
    each column used as ``(x - shift) * inv_scale`` (the test is invariant to both: centred
    and scaled to magnitude 1, no overflow and little cancellation in the variances).

    mode 0: Breslow, 1: Efron, 2: exact (hypergeometric / log-rank). ``c0``/``c1`` hold, per
    group, the Efron weights sum_l 1/(n-l) and sum_l (l/d)/(n-l) (unused otherwise).
    """
    w = j1 - j0
    s1 = np.zeros(w)
    s2 = np.zeros(w)
    d1 = np.zeros(w)
    d2 = np.zeros(w)
    n_groups = starts.shape[0] - 1
    at_risk = 0
    for g in range(n_groups - 1, -1, -1):
        d = n_events[g]
        if d > 0:
            for j in range(w):
                d1[j] = 0.0
                d2[j] = 0.0
        for t in range(starts[g], starts[g + 1]):
            row = X[order[t], j0:j1]
            dies = ev[t]
            for j in range(w):
                v = (np.float64(row[j]) - shift[j0 + j]) * inv_scale[j0 + j]
                s1[j] += v
                s2[j] += v * v
                if dies:
                    d1[j] += v
                    d2[j] += v * v
        at_risk += starts[g + 1] - starts[g]
        if d == 0:
            continue
        nr = float(at_risk)
        if mode == 1 and d > 1:
            # sum_l over the Efron denominators n - l of the risk sums minus l/d of the deaths'
            e0 = 0.0
            e1 = 0.0
            e2 = 0.0
            for l in range(d):
                f = l / d
                inv = 1.0 / (nr - l)
                e0 += inv * inv
                e1 += f * inv * inv
                e2 += f * f * inv * inv
            a0 = c0[g]
            a1 = c1[g]
            for j in range(w):
                U[j0 + j] += d1[j] - (a0 * s1[j] - a1 * d1[j])
                v = (a0 * s2[j] - a1 * d2[j]) - (
                    e0 * s1[j] * s1[j] - 2.0 * e1 * s1[j] * d1[j] + e2 * d1[j] * d1[j])
                I[j0 + j] += v if v > 0.0 else 0.0
        else:
            factor = d
            if mode == 2:
                factor = d * (nr - d) / (nr - 1.0) if nr > 1 else 0.0
            for j in range(w):
                mean = s1[j] / nr
                U[j0 + j] += d1[j] - d * mean
                var = s2[j] / nr - mean * mean
                I[j0 + j] += factor * (var if var > 0.0 else 0.0)


def score_tests(X, data: CoxData, ties: str = "breslow", block_elements: int = 1 << 22
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""The Cox score test of every feature, one at a time, at :math:`\beta_j = 0`.

    .. math::

        U_j = \sum_{i:\,\delta_i=1} \big(x_{ij} - \bar x_j(R_i)\big), \qquad
        I_j = \sum_{i:\,\delta_i=1} \mathrm{var}_{R_i}(x_j), \qquad \chi^2_j = U_j^2 / I_j,

    (Breslow; the mean and population variance over the risk set :math:`R_i`), compared with
    :math:`\chi^2_1`. ``ties="efron"`` uses the derivatives of Efron's likelihood at 0;
    ``"exact"`` multiplies each tied time's variance by :math:`(n_t - d_t)/(n_t - 1)`, the
    score test of the exact (discrete) partial likelihood - for a binary feature the
    log-rank test with its hypergeometric variance. Without tied event times the three agree.

    One pass over the rows of X in decreasing time (risk-set sums accumulated), threads over
    column blocks; sparse X is read one dense block of columns at a time.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n, p)
    data : CoxData
    ties : {"breslow", "efron", "exact"}
    block_elements : int
        Sparse X: entries per dense block.

    Returns
    -------
    statistic : ndarray of shape (p,)
        :math:`\chi^2_j` (0 when :math:`I_j = 0`, a feature constant on every risk set).
    U : ndarray of shape (p,)
        The score; its sign is that of the log hazard ratio.
    I : ndarray of shape (p,)
        The information (variance of U under the null).
    """
    modes = {"breslow": 0, "efron": 1, "exact": 2}
    if ties not in modes:
        raise ValueError(f"ties={ties!r} is not one of {tuple(modes)}.")
    n, p = X.shape
    n_groups = data.starts.shape[0] - 1
    sizes = np.diff(data.starts)
    at_risk = np.cumsum(sizes[::-1])[::-1].astype(np.float64)
    c0 = np.zeros(n_groups)
    c1 = np.zeros(n_groups)
    if ties == "efron":
        for g in np.flatnonzero(data.n_events > 1):
            d = data.n_events[g]
            ls = np.arange(d)
            c0[g] = np.sum(1.0 / (at_risk[g] - ls))
            c1[g] = np.sum((ls / d) / (at_risk[g] - ls))
    U = np.zeros(p)
    info = np.zeros(p)
    scale = np.ones(p)  # U and I of the scaled columns -> original units
    mode = modes[ties]
    if sp.issparse(X):
        Xc = sp.csc_array(X)
        step = max(1, block_elements // max(n, 1))
        for j0 in range(0, p, step):
            B = np.ascontiguousarray(Xc[:, j0:j0 + step].toarray(), dtype=np.float64)
            shift, inv = _centre_scale(B)
            u, i = np.zeros(B.shape[1]), np.zeros(B.shape[1])
            _score_block(B, shift, inv, data.order, data.starts, data.event, data.n_events, c0,
                         c1, 0, B.shape[1], mode, u, i)
            U[j0:j0 + step], info[j0:j0 + step] = u, i
            scale[j0:j0 + step] = np.where(inv > 0, 1.0 / np.where(inv > 0, inv, 1.0), 1.0)
    else:
        X = np.asarray(X)
        if not X.flags.c_contiguous:
            X = np.ascontiguousarray(X)
        shift, inv = _centre_scale(X)
        n_threads = min(pool_threads(n * p), max(1, (n * p) // (1 << 20)), p)
        cols = np.linspace(0, p, n_threads + 1).astype(np.intp)

        def run(t):
            _score_block(X, shift, inv, data.order, data.starts, data.event, data.n_events, c0,
                         c1, cols[t], cols[t + 1], mode, U, info)

        run_tasks(run, n_threads, n_threads)
        scale = np.where(inv > 0, 1.0 / np.where(inv > 0, inv, 1.0), 1.0)
    stat = np.zeros(p)
    ok = info > 0
    stat[ok] = U[ok] ** 2 / info[ok]
    with np.errstate(over="ignore"):
        return stat, U * scale, info * scale * scale


def _centre_scale(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column: the midrange (a shift, exact for a constant column) and 1 / half-range."""
    if X.shape[0] == 0:
        return np.zeros(X.shape[1]), np.ones(X.shape[1])
    hi = X.max(axis=0).astype(np.float64)
    lo = X.min(axis=0).astype(np.float64)
    if not (np.all(np.isfinite(hi)) and np.all(np.isfinite(lo))):
        if np.isnan(hi).any() or np.isnan(lo).any():
            raise ValueError("Input X contains NaN.")
        raise ValueError("Input X contains infinity or a value too large for dtype('float64').")
    half = 0.5 * hi - 0.5 * lo  # no overflow at +-1e308
    shift = 0.5 * hi + 0.5 * lo
    return shift, np.where(half > 0, 1.0 / np.where(half > 0, half, 1.0), 0.0)


def chi2_pvalues(statistic: np.ndarray) -> np.ndarray:
    r""":math:`P(\chi^2_1 \ge s)`."""
    return special.chdtrc(1, statistic)
