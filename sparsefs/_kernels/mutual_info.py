r"""Nearest-neighbour (KSG) estimates of mutual information for continuous features.

Two estimators, each evaluated for every column of a matrix at once (numba, parallel over
columns, ``O(n log n)`` per column after one sort):

* continuous feature vs discrete labels (Ross 2014): for sample :math:`i` of class :math:`c`
  (:math:`N_c` samples), :math:`d_i` is the distance to its :math:`k`-th nearest neighbour among
  the other samples of class :math:`c`, :math:`m_i` the number of samples (of any class, itself
  included) closer than :math:`d_i`; then

  .. math::

     \hat I = \psi(N) + \langle\psi(k)\rangle - \langle\psi(N_c)\rangle - \langle\psi(m_i)\rangle;

* continuous vs continuous (Kraskov, Stögbauer & Grassberger 2004, estimator 1): with
  :math:`\epsilon_i` the max-norm distance to the :math:`k`-th neighbour in the joint space and
  :math:`n_x(i), n_y(i)` the numbers of other samples closer than :math:`\epsilon_i` in each
  marginal,

  .. math::

     \hat I = \psi(N) + \psi(k) - \langle\psi(n_x + 1)\rangle - \langle\psi(n_y + 1)\rangle .

For mRMR on continuous data Ding & Peng (2005) instead discretise each feature explicitly into
three states at :math:`\mu \pm \sigma/2` and use the plug-in (empirical) mutual information of
the contingency tables: :func:`three_state_codes` and :func:`plugin_mi`.

The two KSG estimates are clipped at 0, samples whose class has a single member are left out
of the first, and the variables are scaled to unit variance with a tiny jitter to break ties
first, all exactly as in :func:`sklearn.feature_selection.mutual_info_classif` and
``mutual_info_regression`` (the test reference; scikit-learn loops over the columns in Python
with a KD-tree per column, ~2.5 ms each). With the same jitter (standard normal noise of shape
(n_samples, n_features) from ``RandomState(seed)``) the values agree to rounding even on tied
data - except where scikit-learn's ``NearestNeighbors`` switches to brute-force distances
(k at least half a class's size), whose rounding shifts its counts; these kernels compute the
distances exactly. :class:`~sparsefs.selection.MutualInfo` uses :func:`ksg_mi_classif`;
:class:`~sparsefs.selection.MRMR` uses both kernels for its relevance and redundancy terms.
"""

from __future__ import annotations

import numba
import numpy as np
from scipy.special import digamma

from sparsefs._kernels import threads as _threads

__all__ = [
    "digamma_table",
    "ksg_mi_classif",
    "ksg_mi_pairs",
    "plugin_mi",
    "scale_and_jitter",
    "three_state_codes",
]

#: One value of a column costs about this many values of a plain pass (a sort and the walks
#: to the k-th neighbour), for the thread choice of :func:`threads.pool_threads`.
_MI_WORK = 64


def digamma_table(n: int) -> np.ndarray:
    """``psi(m)`` for ``m = 0..n`` (``psi(0) = -inf`` is never used)."""
    with np.errstate(divide="ignore"):
        return digamma(np.arange(n + 1, dtype=np.float64))


def scale_and_jitter(X: np.ndarray, noise: np.ndarray) -> np.ndarray:
    r"""Columns divided by their standard deviation, plus a :math:`10^{-10}`-relative jitter.

    ``X / std + 1e-10 * max(1, mean|X / std|) * noise`` (a column with zero deviation is only
    jittered), the preprocessing Kraskov et al. advise and scikit-learn applies, so that the
    nearest-neighbour distances have no ties. ``noise`` is standard normal, drawn by the caller
    (kernels hold no random state). Returns a new array.
    """
    X = np.asarray(X, dtype=np.float64)
    amax = np.abs(X).max(axis=0) if X.shape[0] else np.zeros(X.shape[1])
    amax = np.where(amax > 0, amax, 1.0)
    Xs = X / amax  # no overflow for huge values; the result is scale invariant
    std = Xs.std(axis=0)
    Xs /= np.where(std > 0, std, 1.0)
    means = np.maximum(1.0, np.abs(Xs).mean(axis=0))
    return Xs + 1e-10 * means * noise


@numba.njit(cache=True, nogil=True, inline="always")
def _within(xs, p, r):  # pragma: no cover - compiled
    """How many points of the sorted ``xs``, other than ``xs[p]``, lie within ``r`` of it."""
    cnt = 0
    q = p - 1
    while q >= 0 and xs[p] - xs[q] <= r:
        cnt += 1
        q -= 1
    q = p + 1
    while q < xs.shape[0] and xs[q] - xs[p] <= r:
        cnt += 1
        q += 1
    return cnt


@numba.njit(cache=True, nogil=True)
def _mi_cd_column(xk, order, ys, n_classes, class_counts, k, psi, xs):  # pragma: no cover
    """One column: ``xk`` its values on the kept samples (classes of >= 2 members), ``order``
    their ascending order, ``ys`` the classes in that order; ``xs`` is work space."""
    m = xk.shape[0]
    if m == 0:
        return 0.0
    for p in range(m):
        xs[p] = xk[order[p]]
    radius = np.empty(m)
    kk = np.empty(m, dtype=np.int64)
    # within-class k-th neighbour distance: walk outwards along the sorted class values
    for c in range(n_classes):
        nc = class_counts[c]
        if nc <= 1:
            continue
        idx = np.empty(nc, dtype=np.int64)
        t = 0
        for p in range(m):
            if ys[p] == c:
                idx[t] = p
                t += 1
        kc = min(k, nc - 1)
        for p in range(nc):
            left = p - 1
            right = p + 1
            dist = 0.0
            for _ in range(kc):
                dl = xs[idx[p]] - xs[idx[left]] if left >= 0 else np.inf
                dr = xs[idx[right]] - xs[idx[p]] if right < nc else np.inf
                if dl <= dr:
                    dist = dl
                    left -= 1
                else:
                    dist = dr
                    right += 1
            radius[idx[p]] = dist
            kk[idx[p]] = kc
    total = 0.0
    for p in range(m):
        r = np.nextafter(radius[p], 0.0)
        cnt = 1 + _within(xs, p, r)
        total += psi[kk[p]] - psi[class_counts[ys[p]]] - psi[cnt]
    return max(0.0, psi[m] + total / m)


@numba.njit(cache=True, nogil=True)
def _mi_cd_block(XT, orders, y, n_classes, class_counts, k, psi, j0, j1, out):  # pragma: no cover
    m = XT.shape[1]
    xs = np.empty(m)
    ys = np.empty(m, dtype=np.int64)
    for j in range(j0, j1):
        order = orders[j]
        for p in range(m):
            ys[p] = y[order[p]]
        out[j] = _mi_cd_column(XT[j], order, ys, n_classes, class_counts, k, psi, xs)


def _mi_cd_all(XT, y, n_classes, class_counts, k, psi):
    """Every column of ``XT`` (the kept samples only), by blocks of columns on sparsefs's
    own pool (:mod:`sparsefs._kernels.threads`). The columns are sorted here by numpy (one
    ``argsort``; a sort compiled inside the kernel tripled its first-use compilation)."""
    d, m = XT.shape
    out = np.zeros(d)
    if m == 0 or d == 0:
        return out
    orders = np.argsort(XT, axis=1)
    step = max(1, -(-d // (4 * _threads.available_cpus())))
    blocks = [(XT, orders, y, n_classes, class_counts, k, psi, j0, min(d, j0 + step), out)
              for j0 in range(0, d, step)]
    _threads.run_blocks(_mi_cd_block, blocks, _threads.pool_threads(_MI_WORK * m * d, len(blocks)))
    return out


def ksg_mi_classif(X: np.ndarray, y_idx: np.ndarray, n_neighbors: int = 3) -> np.ndarray:
    """Ross's estimate of I(x_j; y) for every column of ``X`` (already scaled and jittered).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    y_idx : ndarray of shape (n_samples,)
        Class indices ``0..K-1``.
    n_neighbors : int, default=3

    Returns
    -------
    ndarray of shape (n_features,)
        Estimates in nats, clipped at 0.
    """
    y_idx = np.ascontiguousarray(y_idx, dtype=np.int64)
    n_classes = int(y_idx.max()) + 1 if y_idx.size else 0
    counts = np.bincount(y_idx, minlength=n_classes).astype(np.int64)
    keep = counts[y_idx] > 1  # samples alone in their class are left out entirely
    XT = np.ascontiguousarray(np.asarray(X, dtype=np.float64)[keep].T)
    return _mi_cd_all(XT, y_idx[keep], n_classes, counts, int(n_neighbors),
                      digamma_table(X.shape[0] + 1))


@numba.njit(cache=True, nogil=True)
def _mi_cc_column(x, order, v, v_sorted, v_rank, k, psi):  # pragma: no cover - compiled
    n = x.shape[0]
    xs = x[order]
    vs = v[order]  # v in the x-sorted order
    best = np.empty(k)
    eps = np.empty(n)
    for p in range(n):
        # k smallest max-norm distances, scanning outwards in x until |dx| >= current k-th
        nb = 0
        left = p - 1
        right = p + 1
        while True:
            dl = xs[p] - xs[left] if left >= 0 else np.inf
            dr = xs[right] - xs[p] if right < n else np.inf
            dx = min(dl, dr)
            if dx == np.inf or (nb == k and dx >= best[k - 1]):
                break
            if dl <= dr:
                q = left
                left -= 1
            else:
                q = right
                right += 1
            dist = max(dx, abs(vs[q] - vs[p]))
            if nb < k:
                pos = nb
                nb += 1
            elif dist < best[k - 1]:
                pos = k - 1
            else:
                continue
            while pos > 0 and best[pos - 1] > dist:
                best[pos] = best[pos - 1]
                pos -= 1
            best[pos] = dist
        eps[p] = best[k - 1]
    total = 0.0
    for p in range(n):
        r = np.nextafter(eps[p], 0.0)
        cx = _within(xs, p, r)
        cy = _within(v_sorted, v_rank[order[p]], r)
        total += psi[cx + 1] + psi[cy + 1]
    return max(0.0, psi[n] + psi[k] - total / n)


@numba.njit(cache=True, nogil=True)
def _mi_cc_block(XT, orders, cols, v, v_sorted, v_rank, k, psi, t0, t1, out):  # pragma: no cover
    for t in range(t0, t1):
        out[t] = _mi_cc_column(XT[cols[t]], orders[cols[t]], v, v_sorted, v_rank, k, psi)


def _mi_cc_all(XT, orders, cols, v, v_sorted, v_rank, k, psi):
    """The columns ``cols`` of ``XT`` by blocks on sparsefs's own pool (:mod:`..threads`)."""
    m, n = cols.shape[0], XT.shape[1]
    out = np.empty(m)
    step = max(1, -(-m // (4 * _threads.available_cpus())))
    blocks = [(XT, orders, cols, v, v_sorted, v_rank, k, psi, t0, min(m, t0 + step), out)
              for t0 in range(0, m, step)]
    _threads.run_blocks(_mi_cc_block, blocks, _threads.pool_threads(_MI_WORK * n * m, len(blocks)))
    return out


def ksg_mi_pairs(
    XT: np.ndarray,
    v: np.ndarray,
    n_neighbors: int = 3,
    columns: np.ndarray | None = None,
    orders: np.ndarray | None = None,
) -> np.ndarray:
    """KSG estimate of I(x_j; v) for the rows ``j`` of ``XT`` (features x samples).

    ``XT`` is the transposed, scaled and jittered data (C-contiguous, one feature per row), ``v``
    a scaled and jittered continuous variable (e.g. one of those rows). ``columns`` restricts the
    computation to some features (default: all); ``orders`` may hold ``argsort(XT, axis=1)``,
    computed once when many variables ``v`` are compared with the same features. Returns
    estimates in nats, clipped at 0.
    """
    XT = np.ascontiguousarray(XT, dtype=np.float64)
    if orders is None:
        orders = np.argsort(XT, axis=1, kind="stable")
    v = np.ascontiguousarray(v, dtype=np.float64)
    n = v.shape[0]
    if n_neighbors >= n:
        raise ValueError(f"n_neighbors={n_neighbors} must be smaller than n_samples={n}.")
    cols = (np.arange(XT.shape[0]) if columns is None else np.asarray(columns)).astype(np.int64)
    v_order = np.argsort(v, kind="stable")
    v_rank = np.empty(n, dtype=np.int64)
    v_rank[v_order] = np.arange(n)
    return _mi_cc_all(XT, np.ascontiguousarray(orders, dtype=np.int64), cols, v, v[v_order], v_rank,
                      int(n_neighbors), digamma_table(n + 1))


def three_state_codes(X: np.ndarray, width: float = 0.5) -> np.ndarray:
    r"""Each feature discretised into 3 states: 0 below :math:`\mu - w\sigma`, 2 above
    :math:`\mu + w\sigma`, 1 in between (Ding & Peng 2005, :math:`w = 1/2`).

    A constant feature is all 1. Overflow-safe (each column is first divided by its largest
    magnitude). Returns an int8 array of the shape of ``X``.
    """
    X = np.asarray(X, dtype=np.float64)
    amax = np.abs(X).max(axis=0) if X.shape[0] else np.zeros(X.shape[1])
    Xs = X / np.where(amax > 0, amax, 1.0)
    mu = Xs.mean(axis=0)
    sd = Xs.std(axis=0)
    return (1 + (Xs > mu + width * sd).astype(np.int8)
            - (Xs < mu - width * sd).astype(np.int8)).astype(np.int8)


def plugin_mi(A: np.ndarray, b: np.ndarray, n_a: int, n_b: int) -> np.ndarray:
    r"""Empirical mutual information (nats) between each column of ``A`` and ``b``.

    .. math:: \hat I(a; b) = \sum_{u,v} \hat p(u, v) \log \frac{\hat p(u,v)}{\hat p(u)\hat p(v)}

    from the joint counts of every column with ``b`` (one ``bincount`` for all columns).

    Parameters
    ----------
    A : ndarray of int, shape (n_samples, n_columns)
        Codes in ``0..n_a-1``.
    b : ndarray of int, shape (n_samples,)
        Codes in ``0..n_b-1``.
    n_a, n_b : int
    """
    A = np.asarray(A)
    n, m = A.shape
    if n == 0 or m == 0:
        return np.zeros(m)
    flat = (np.arange(m, dtype=np.int64)[None, :] * (n_a * n_b)
            + A.astype(np.int64) * n_b + np.asarray(b, dtype=np.int64)[:, None])
    joint = np.bincount(flat.ravel(), minlength=m * n_a * n_b).reshape(m, n_a, n_b) / n
    pa = joint.sum(axis=2, keepdims=True)
    pb = joint.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(joint > 0, joint * np.log(joint / (pa * pb)), 0.0)
    return np.maximum(terms.sum(axis=(1, 2)), 0.0)
