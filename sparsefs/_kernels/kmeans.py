r"""Hartigan–Wong k-means (Algorithm AS 136), k-means++ seeding and a local-optimality certificate.

k-means minimises the within-cluster sum of squares

.. math::

    \mathrm{WCSS}(C) = \sum_{k=1}^K \sum_{i \in C_k} \|x_i - c_k\|^2, \qquad
    c_k = \frac{1}{n_k} \sum_{i \in C_k} x_i .

Lloyd's iteration stops at a partition where every point is nearest to its own centroid.
Hartigan's criterion is stronger, because it accounts for the two centroids moving when a point
moves: taking point :math:`i` out of cluster :math:`A` (:math:`n_A \ge 2`) and into :math:`B`
changes the WCSS by

.. math::

    \Delta_{i \to B} = \frac{n_B}{n_B + 1}\|x_i - c_B\|^2
                     - \frac{n_A}{n_A - 1}\|x_i - c_A\|^2 .

A partition is **Hartigan-optimal** when :math:`\Delta_{i \to B} \ge 0` for every point and
every other cluster (no single move lowers the WCSS). It is then also Lloyd-stable, not
conversely. :func:`transfer_gains` computes every :math:`\Delta`, :func:`is_hartigan_optimal`
checks the certificate.

:func:`hartigan_wong` is Algorithm AS 136 (Hartigan & Wong 1979), written from the paper:

* every point keeps its closest (``IC1``) and second closest (``IC2``) cluster;
* the **optimal-transfer** stage visits every point and moves it to the cluster :math:`B`
  minimising :math:`R_2 = n_B/(n_B+1)\,\|x_i - c_B\|^2` when
  :math:`R_2 < D_i = n_A/(n_A-1)\,\|x_i - c_A\|^2`; only clusters of the *live set* (updated
  during the last :math:`n` steps) are examined unless the point's own cluster is live;
  centroids are updated incrementally after every move;
* the **quick-transfer** stage tests every point against its ``IC2`` only, until :math:`n`
  consecutive steps move nothing;
* the two stages alternate until an optimal-transfer stage moves no point in :math:`n`
  consecutive steps (then the partition is Hartigan-optimal), or ``max_iter`` stages.

Distances are accumulated in blocks of 32 coordinates and abandoned as soon as the partial sum
rules the cluster out (the paper's early exit). The final centroids and WCSS are recomputed
from scratch (no drift from the incremental updates).

:func:`kmeans` runs ``n_init`` seeded starts (k-means++ or given centres) and keeps the lowest
WCSS. With ``algorithm="hartigan"`` each start is first taken by Lloyd passes to a fixed point
(cheap compiled passes, assignment and sums fused; AS 136 itself begins with the nearest-centre
assignment; for n >= 100 until at most n // 100 labels change) and then polished by the
transfer stages of :func:`hartigan_wong`, which only lower the WCSS: for n < 100 the result is
never worse than Lloyd from the same start, and it is always Hartigan-optimal.

Weighted k-means (the C-step of sparse k-means, minimising :math:`\sum_j w_j
\mathrm{WCSS}_j`) is :func:`kmeans` on the columns with :math:`w_j > 0` scaled by
:math:`\sqrt{w_j}`: :func:`weighted_columns`.

Pure numpy + numba: no scikit-learn here.

References
----------
.. [1] J. A. Hartigan and M. A. Wong, "Algorithm AS 136: A K-means clustering algorithm",
   Applied Statistics 28(1):100-108, 1979.
.. [2] D. Arthur and S. Vassilvitskii, "k-means++: the advantages of careful seeding",
   SODA 2007, 1027-1035.
.. [3] M. Telgarsky and A. Vattani, "Hartigan's method: k-means clustering without Voronoi",
   AISTATS 2010 (Hartigan-optimal partitions are a subset of Lloyd-stable ones).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

__all__ = [
    "ImplicitRows",
    "KMeansResult",
    "hartigan_wong",
    "implicit_cluster_means",
    "is_hartigan_optimal",
    "kmeans",
    "kmeans_plusplus",
    "lloyd",
    "transfer_gains",
    "wcss",
    "weighted_columns",
]

_BIG = 1e300
#: Lloyd passes before the transfer stages stop when at most n // _LLOYD_STOP labels change.
_LLOYD_STOP = 100
_BLOCK = 32
#: Options of kernels called only from other compiled kernels: no Python (or C) entry point is
#: generated for them, which shortens their compilation on first use (issue #33).
_CALLEE = {"no_cpython_wrapper": True, "no_cfunc_wrapper": True}


@dataclass(frozen=True)
class KMeansResult:
    """One k-means solution.

    Attributes
    ----------
    labels : ndarray of shape (n_samples,), dtype intp
        Cluster of every point; no cluster is empty.
    centers : ndarray of shape (n_clusters, n_features)
        The cluster means.
    inertia : float
        The WCSS.
    n_iter : int
        Stages (Hartigan–Wong: optimal-transfer stages; Lloyd: iterations) of the best start.
    converged : bool
        Whether the best start stopped by its own rule before ``max_iter``.
    """

    labels: np.ndarray
    centers: np.ndarray
    inertia: float
    n_iter: int
    converged: bool


# --------------------------------------------------------------------------------------------
# numba core of AS 136
# --------------------------------------------------------------------------------------------


@njit(cache=True, fastmath={"reassoc", "contract"}, **_CALLEE)
def _sqdist(X, i, C, k):
    """``||x_i - c_k||^2`` (also the rows' distance, with ``C = X``)."""
    p = X.shape[1]
    d = 0.0
    for j in range(p):
        t = X[i, j] - C[k, j]
        d += t * t
    return d


@njit(cache=True, fastmath={"reassoc", "contract"}, **_CALLEE)
def _sqdist_bounded(X, i, C, k, bound):
    """``||x_i - c_k||^2``, or a value >= ``bound`` as soon as the partial sum reaches it."""
    p = X.shape[1]
    d = 0.0
    j0 = 0
    while j0 < p:
        j1 = j0 + _BLOCK  # (not min(): one compiled overload less)
        if j1 > p:
            j1 = p
        for j in range(j0, j1):
            t = X[i, j] - C[k, j]
            d += t * t
        if d >= bound:
            return d
        j0 = j1
    return d


@njit(cache=True, **_CALLEE)
def _move(X, C, nc, an1, an2, i, l1, l2):
    """Move point i from cluster l1 to l2: incremental centroid, size and factor updates."""
    p = X.shape[1]
    al1 = float(nc[l1])
    alw = al1 - 1.0
    al2 = float(nc[l2])
    alt = al2 + 1.0
    for j in range(p):
        C[l1, j] = (C[l1, j] * al1 - X[i, j]) / alw
        C[l2, j] = (C[l2, j] * al2 + X[i, j]) / alt
    nc[l1] -= 1
    nc[l2] += 1
    an2[l1] = alw / al1
    an1[l1] = alw / (alw - 1.0) if alw > 1.0 else _BIG
    an1[l2] = alt / al2
    an2[l2] = alt / (alt + 1.0)


@njit(cache=True)
def _means_into(X, labels, C, nc):
    """The means ``C`` and sizes ``nc`` of the partition ``labels`` (written in place; an
    empty cluster's row is 0). The compiled kernels allocate nothing: work arrays come from
    the Python wrappers, which keeps numba's first-use compilation short."""
    n, p = X.shape
    K = C.shape[0]
    for k in range(K):
        nc[k] = 0
        for j in range(p):
            C[k, j] = 0.0
    for i in range(n):
        k = labels[i]
        nc[k] += 1
        for j in range(p):
            C[k, j] += X[i, j]
    for k in range(K):
        if nc[k] > 0:
            for j in range(p):
                C[k, j] /= nc[k]


def _recompute(X, labels, C, nc):
    """Means and sizes (in place) and the WCSS of the partition ``labels``, from X."""
    _means_into(X, labels, C, nc)
    return _wcss_of(X, labels, C)


@njit(cache=True)
def _wcss_of(X, labels, C):
    """The WCSS of the partition ``labels`` with centres ``C`` (one running sum, in order)."""
    n, p = X.shape
    total = 0.0
    for i in range(n):
        k = labels[i]
        for j in range(p):
            t = X[i, j] - C[k, j]
            total += t * t
    return total


@njit(cache=True, inline="always")
def _fill_empty(X, ic1, C, nc):
    """The means ``C`` and sizes ``nc`` (in place) of the partition ``ic1``, after giving each
    empty cluster the point farthest from its own centre (taken from a cluster of size >= 2;
    ``ic1`` is updated in place): the WCSS does not increase. (Lloyd's iteration;
    Hartigan-Wong's Lloyd passes use :func:`_fill_empty_py`, outside their compiled loop.)"""
    n = X.shape[0]
    K = C.shape[0]
    _means_into(X, ic1, C, nc)
    for k in range(K):
        if nc[k] > 0:
            continue
        best = -1.0
        bi = -1
        for i in range(n):
            if nc[ic1[i]] >= 2:
                dist = _sqdist(X, i, C, ic1[i])
                if dist > best:
                    best = dist
                    bi = i
        ic1[bi] = k
        _means_into(X, ic1, C, nc)


def _fill_empty_py(X, ic1, C, nc):
    """:func:`_fill_empty` driven from Python (the same arithmetic: :func:`_means_into` and
    :func:`_sqdist` distances; the first farthest point on ties): the Hartigan-Wong Lloyd
    passes hand an emptied cluster to it, so their compiled loop carries no repair code and
    the repair compiles one small distance loop, on first need (issue #33)."""
    _means_into(X, ic1, C, nc)
    rows = np.arange(X.shape[0])
    D = np.empty((C.shape[0], X.shape[0]))
    for k in range(C.shape[0]):
        if nc[k] > 0:
            continue
        _sqdist_to(X, C, D)
        dist = D[ic1, rows]
        eligible = (nc[ic1] >= 2) & (dist > -1.0)  # (-1: the compiled loop's start)
        bi = int(np.argmax(np.where(eligible, dist, -np.inf)))  # the first of the largest
        if not eligible[bi]:
            bi = -1
        ic1[bi] = k
        _means_into(X, ic1, C, nc)


@njit(cache=True)
def _hw_lloyd(X, C, ic1, ic2, sums, nc, n_lloyd, lloyd_iter, stop):
    """Lloyd passes (the nearest-centre assignment and the sums in one pass; the first is AS
    136's initial assignment) until, after at least two, at most ``stop`` labels change, or
    ``lloyd_iter + 1`` passes: the transfer stages finish the tail of single moves far more
    cheaply than full passes. ``C`` (the centres), ``ic1``/``ic2`` (closest and second
    closest; ``ic1`` starts at -1) and ``nc`` (sizes) are updated in place (``sums`` is work
    space); ``n_lloyd`` passes are already done. Returns ``(passes, changed, empty)``: with
    ``empty`` True the last pass left a cluster empty and returned before counting itself and
    updating ``C``, and the caller (:func:`_hartigan_wong_core`) fills it and calls again:
    the rare path stays out of this function's compilation."""
    n, p = X.shape
    K = C.shape[0]
    while True:
        # one pass: closest (ic1) and second closest (ic2) centre of every point, and the
        # cluster sums and sizes of the new partition
        for L in range(K):
            nc[L] = 0
            for j in range(p):
                sums[L, j] = 0.0
        changed = 0
        for i in range(n):
            b1 = np.intp(0)  # typed ints, not literals: one compiled signature of _sqdist
            b2 = np.intp(1)
            d1 = _sqdist(X, i, C, b1)
            d2 = _sqdist(X, i, C, b2)
            if d2 < d1:
                b1, b2, d1, d2 = 1, 0, d2, d1
            for L in range(2, K):
                dl = _sqdist_bounded(X, i, C, L, d2)
                if dl < d1:
                    b2, d2 = b1, d1
                    b1, d1 = L, dl
                elif dl < d2:
                    b2, d2 = L, dl
            if ic1[i] != b1:
                changed += 1
            ic1[i] = b1
            ic2[i] = b2
            nc[b1] += 1
            for j in range(p):
                sums[b1, j] += X[i, j]
        for L in range(K):
            if nc[L] == 0:
                return n_lloyd, changed, True
        for L in range(K):  # C: the means of the partition ic1
            for j in range(p):
                C[L, j] = sums[L, j] / nc[L]
        n_lloyd += 1
        if (n_lloyd > 1 and changed <= stop) or n_lloyd > lloyd_iter:
            return n_lloyd, changed, False


@njit(cache=True)
def _hw_transfers(X, C, ic1, ic2, nc, an1, an2, itran, ncp, live, d, max_iter):
    """The transfer stages of AS 136 from the partition ``ic1`` with means ``C`` and sizes
    ``nc`` (all updated in place; the other arrays are work space of length K, K, K, K, K
    and n) until an optimal-transfer stage moves nothing. Returns (stages, converged)."""
    m = X.shape[0]
    K = C.shape[0]
    for L in range(K):
        aa = float(nc[L])
        an2[L] = aa / (aa + 1.0)
        an1[L] = aa / (aa - 1.0) if aa > 1.0 else _BIG
        itran[L] = 1
        ncp[L] = -1
        live[L] = 0
    for i in range(m):
        d[i] = 0.0
    indx = 0
    n_iter = 0
    max_steps = 50 * m + 1000  # guard against cycling on ties (exact arithmetic cannot)
    for _ in range(max_iter):
        n_iter += 1
        # -- the optimal-transfer stage (AS 136, OPTRA)
        for L in range(K):
            if itran[L] == 1:
                live[L] = m + 1
        for i in range(m):
            step = i + 1
            indx += 1
            l1 = ic1[i]
            if nc[l1] != 1:
                if ncp[l1] != 0:  # l1 updated in this stage (or the first stage): new D(i)
                    d[i] = _sqdist(X, i, C, l1) * an1[l1]
                ll = ic2[i]
                l2 = ll
                r2 = _sqdist(X, i, C, ll) * an2[ll]
                for L in range(K):
                    # l1 not live: only the live clusters can have become better for i
                    if (step >= live[l1] and step >= live[L]) or l1 == L or ll == L:
                        continue
                    rr = r2 / an2[L]
                    dc = _sqdist_bounded(X, i, C, L, rr)
                    if dc < rr:
                        r2 = dc * an2[L]
                        l2 = L
                if r2 >= d[i]:
                    ic2[i] = l2  # no transfer: l2 is the new second choice
                else:
                    indx = 0
                    live[l1] = m + step
                    live[l2] = m + step
                    ncp[l1] = step
                    ncp[l2] = step
                    _move(X, C, nc, an1, an2, i, l1, l2)
                    ic1[i] = l2
                    ic2[i] = l1
            if indx == m:
                return n_iter, True  # m steps without a transfer: Hartigan-optimal
        for L in range(K):
            itran[L] = 0
            live[L] -= m
        # -- the quick-transfer stage (AS 136, QTRAN)
        icoun = 0
        istep = 0
        finished = False
        while not finished and istep <= max_steps:
            for i in range(m):
                icoun += 1
                istep += 1
                if istep > max_steps:
                    break
                l1 = ic1[i]
                l2 = ic2[i]
                if nc[l1] != 1:
                    if istep <= ncp[l1]:  # l1 updated during the last m steps: new D(i)
                        d[i] = _sqdist(X, i, C, l1) * an1[l1]
                    if istep < ncp[l1] or istep < ncp[l2]:
                        r2 = d[i] / an2[l2]
                        dd = _sqdist_bounded(X, i, C, l2, r2)
                        if dd < r2:
                            icoun = 0
                            indx = 0
                            itran[l1] = 1
                            itran[l2] = 1
                            ncp[l1] = istep + m
                            ncp[l2] = istep + m
                            _move(X, C, nc, an1, an2, i, l1, l2)
                            ic1[i] = l2
                            ic2[i] = l1
                if icoun == m:
                    finished = True
                    break
        if K == 2 and finished:
            return n_iter, True
        for L in range(K):
            ncp[L] = 0
    return n_iter, False


def _hartigan_wong_core(X, C0, max_iter, lloyd_iter, stop):
    """AS 136 from the centres ``C0``: :func:`_hw_lloyd`, :func:`_hw_transfers`, then the
    means and WCSS recomputed (:func:`_recompute`). The compiled parts allocate nothing and
    are orchestrated here: numba re-optimises every callee inside each caller's module, so
    one compiled function holding all of it compiles far more slowly."""
    n, p = X.shape
    K = C0.shape[0]
    C = np.array(C0, dtype=np.float64, order="C")
    ic1 = np.empty(n, dtype=np.intp)
    ic2 = np.zeros(n, dtype=np.intp)
    nc = np.zeros(K, dtype=np.int64)
    sums = np.empty((K, p))
    ic1[:] = -1
    n_lloyd = 0
    while True:
        n_lloyd, changed, empty = _hw_lloyd(X, C, ic1, ic2, sums, nc, n_lloyd, lloyd_iter, stop)
        if not empty:
            break
        _fill_empty_py(X, ic1, C, nc)  # an emptied cluster: the rare path
        moved = ic2 == ic1  # a point moved into the empty cluster: another second choice
        ic2[moved] = np.where(ic1[moved] != 0, 0, 1)
        n_lloyd += 1
        if (n_lloyd > 1 and changed <= stop) or n_lloyd > lloyd_iter:
            break
    ki = np.empty((3, K), dtype=np.int64)
    n_iter, converged = _hw_transfers(X, C, ic1, ic2, nc, np.empty(K), np.empty(K), ki[0],
                                      ki[1], ki[2], np.empty(n), max_iter)
    total = _recompute(X, ic1, C, nc)
    return ic1, C, total, n_iter + n_lloyd, converged


@njit(cache=True)
def _lloyd_iterations(X, C, labels, nc, max_iter):
    """Lloyd's iteration from the centres ``C`` (``C``, ``labels``, ``nc`` updated in place)
    until no label changes. Returns (iterations, converged)."""
    n = X.shape[0]
    K = C.shape[0]
    for i in range(n):
        labels[i] = -1
    converged = False
    n_iter = 0
    for _ in range(max_iter):
        n_iter += 1
        changed = 0
        for i in range(n):
            best = np.intp(0)  # a typed int, not a literal: one compiled signature
            dbest = _sqdist(X, i, C, best)
            for L in range(1, K):
                dl = _sqdist_bounded(X, i, C, L, dbest)
                if dl < dbest:
                    dbest = dl
                    best = L
            if best != labels[i]:
                changed += 1
                labels[i] = best
        if changed == 0:
            converged = True
            break
        _fill_empty(X, labels, C, nc)
    return n_iter, converged


def _lloyd_core(X, C0, max_iter):
    n = X.shape[0]
    K = C0.shape[0]
    C = np.array(C0, dtype=np.float64, order="C")
    labels = np.empty(n, dtype=np.intp)
    nc = np.zeros(K, dtype=np.int64)
    n_iter, converged = _lloyd_iterations(X, C, labels, nc, max_iter)
    total = _recompute(X, labels, C, nc)
    return labels, C, total, n_iter, converged


def _stats(X, labels, K):
    """Means, sizes and WCSS of a partition (:func:`_recompute` with fresh arrays)."""
    C = np.empty((K, X.shape[1]))
    nc = np.empty(K, dtype=np.int64)
    total = _recompute(X, labels, C, nc)
    return C, nc, total


# --------------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------------


def _as_float_c(X: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(X, dtype=np.float64)


def _check_centers(X: np.ndarray, centers: np.ndarray) -> np.ndarray:
    C = np.array(centers, dtype=np.float64, order="C")  # a copy: never modified in place
    if C.ndim != 2 or C.shape[1] != X.shape[1]:
        raise ValueError(
            f"centers of shape {C.shape} do not match X of shape {X.shape}; need "
            "(n_clusters, n_features)."
        )
    if C.shape[0] > X.shape[0]:
        raise ValueError(f"n_samples={X.shape[0]} should be >= n_clusters={C.shape[0]}.")
    return C


def _single_cluster(X: np.ndarray) -> KMeansResult:
    c = X.mean(axis=0, keepdims=True)
    r = X - c
    return KMeansResult(np.zeros(X.shape[0], dtype=np.intp), c, float(np.einsum("ij,ij->", r, r)),
                        0, True)


def hartigan_wong(
    X: np.ndarray, centers: np.ndarray, *, max_iter: int = 100, lloyd_first: bool = False
) -> KMeansResult:
    r"""Hartigan–Wong k-means (AS 136) from given initial centres.

    Every point starts in its nearest centre's cluster (an empty cluster receives the point
    farthest from its own centroid); then optimal-transfer and quick-transfer stages alternate
    (module docstring) until no single point can move to another cluster and lower the WCSS,
    :math:`\Delta_{i \to B} = \tfrac{n_B}{n_B+1}\|x_i - c_B\|^2 - \tfrac{n_A}{n_A-1}\|x_i -
    c_A\|^2 \ge 0`, or ``max_iter`` optimal-transfer stages. Each stage is :math:`O(nKp)` at
    most (the live sets and the early exit make later stages much cheaper). No cluster is ever
    emptied.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    centers : ndarray of shape (n_clusters, n_features)
        Initial centres (not modified); ``n_clusters <= n_samples``.
    max_iter : int, default=100
        Maximum number of optimal-transfer stages.
    lloyd_first : bool, default=False
        First run Lloyd passes from ``centers`` (at most ``max_iter``) until no label changes
        (for n < 100; for larger n until at most n // 100 change: the transfer stages then
        finish the tail of single moves at a fraction of the cost of full passes), then the
        transfer stages.

    Returns
    -------
    KMeansResult
        ``converged`` is True when the last optimal-transfer stage moved nothing (the
        partition is then Hartigan-optimal up to rounding).

    References
    ----------
    J. A. Hartigan and M. A. Wong, Applied Statistics 28(1):100-108, 1979.
    """
    X = _as_float_c(X)
    C = _check_centers(X, centers)
    if not int(max_iter) >= 1:
        raise ValueError(f"max_iter={max_iter!r} must be >= 1.")
    if C.shape[0] == 1:
        return _single_cluster(X)
    labels, Cf, total, n_iter, conv = _hartigan_wong_core(
        X, C, int(max_iter), int(max_iter) if lloyd_first else 0, X.shape[0] // _LLOYD_STOP
    )
    return KMeansResult(labels.astype(np.intp), Cf, float(total), int(n_iter), bool(conv))


def lloyd(X: np.ndarray, centers: np.ndarray, *, max_iter: int = 300) -> KMeansResult:
    """Lloyd's iteration from given centres, to strict convergence (no label changes).

    Assign every point to its nearest centre, recompute the means (compiled passes); an
    emptied cluster receives the point farthest from its own centroid. The WCSS never
    increases. The ``algorithm="lloyd"`` option of :func:`kmeans` (``algorithm="hartigan"``
    runs its own fused Lloyd passes, :func:`hartigan_wong` with ``lloyd_first=True``).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    centers : ndarray of shape (n_clusters, n_features)
    max_iter : int, default=300

    Returns
    -------
    KMeansResult
    """
    X = _as_float_c(X)
    C = _check_centers(X, centers)
    if C.shape[0] == 1:
        return _single_cluster(X)
    labels, Cf, total, n_iter, conv = _lloyd_core(X, C, int(max_iter))
    return KMeansResult(labels.astype(np.intp), Cf, float(total), int(n_iter), bool(conv))


def kmeans_plusplus(
    X: np.ndarray, n_clusters: int, rng: np.random.Generator, *, n_local_trials: int | None = None
) -> np.ndarray:
    r"""Greedy k-means++ seeding (Arthur & Vassilvitskii 2007).

    The first centre is a uniformly random point; each next one is drawn with probability
    proportional to :math:`D(x)^2`, the squared distance to the nearest centre so far, keeping
    the best (lowest potential) of ``n_local_trials`` draws (default :math:`2 + \lfloor \ln K
    \rfloor`, the greedy variant).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    n_clusters : int
    rng : numpy.random.Generator
    n_local_trials : int or None, default=None

    Returns
    -------
    ndarray of shape (n_clusters, n_features)
    """
    X = _as_float_c(X)
    n = X.shape[0]
    if n_local_trials is None:
        n_local_trials = 2 + int(math.log(n_clusters))
    first = int(rng.integers(n))
    draws = rng.random((max(int(n_clusters) - 1, 0), int(n_local_trials)))
    return X[_kmeans_plusplus_indices(X, first, draws)].copy()


def _kmeans_plusplus_indices(X, first, draws):
    """Indices of the greedy k-means++ centres; ``draws`` are the uniforms of each step.

    Each step is one compiled pass over X (:func:`_sqdist_to`: every point's distance to all
    the step's candidates); the cumulative sums, the candidates' search, the minima and the
    potentials are numpy's sequential ``cumsum`` / ``searchsorted`` / ``where``, the same
    arithmetic in the same order as a single compiled loop, which compiled ~0.2 s more on
    first use (issue #33).
    """
    n = X.shape[0]
    K, T = draws.shape[0] + 1, draws.shape[1]
    idx = np.empty(K, dtype=np.intp)
    idx[0] = first
    trial = np.empty((T, n))
    closest = np.empty((1, n))
    _sqdist_to(X, X[first:first + 1], closest)  # (the distances of rows: C = rows of X)
    closest = closest[0]
    for c in range(1, K):
        cum = np.cumsum(closest)  # sequential, as a loop
        cand = np.minimum(np.searchsorted(cum, draws[c - 1] * cum[n - 1], side="right"), n - 1)
        _sqdist_to(X, X[cand], trial)
        trial = np.where(trial < closest, trial, closest)  # min(closest, d): ties, NaN as min()
        pot = np.cumsum(trial, axis=1)[:, n - 1]  # sequential sums, not pairwise
        best = int(np.argmin(pot))  # the first of the lowest
        idx[c] = cand[best]
        closest = trial[best].copy()
    return idx


@njit(cache=True)
def _sqdist_to(X, C, out):
    """``out[t, i] = ||x_i - c_t||^2`` (:func:`_sqdist`; ``out`` of shape (len(C), n))."""
    for i in range(X.shape[0]):
        for t in range(C.shape[0]):
            out[t, i] = _sqdist(X, i, C, t)


@njit(cache=True, inline="always")
def _search_right(a, v, last):
    """``min(np.searchsorted(a, v, side="right"), last)`` for sorted ``a`` (the first index
    with a > v). Inlined into its callers (no compiled function of its own)."""
    lo = 0
    hi = a.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] <= v:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < last else last


def kmeans(
    X: np.ndarray,
    n_clusters: int,
    *,
    n_init: int = 10,
    seed: int | np.random.Generator | None = None,
    init: str | np.ndarray = "k-means++",
    algorithm: str = "hartigan",
    max_iter: int = 100,
    return_all: bool = False,
) -> KMeansResult | list[KMeansResult]:
    """k-means with restarts: the lowest WCSS of ``n_init`` starts.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    n_clusters : int
        ``1 <= n_clusters <= n_samples``.
    n_init : int, default=10
        Number of starts. With ``init`` an array, the first start uses it and the others
        k-means++.
    seed : int, Generator or None
        Seeds the k-means++ draws (``numpy.random.default_rng(seed)``).
    init : "k-means++", "random" or ndarray of shape (n_clusters, n_features)
        "random": ``n_clusters`` distinct random points.
    algorithm : {"hartigan", "lloyd"}, default="hartigan"
    max_iter : int, default=100
        Per start (optimal-transfer stages, or Lloyd iterations).
    return_all : bool, default=False
        Return every start's result (in order) instead of the best.

    Returns
    -------
    KMeansResult or list of KMeansResult
        The start with the lowest WCSS (the first on ties), or all of them.
    """
    implicit = isinstance(X, ImplicitRows)  # sparse input (#18): same stream, sparse passes
    if not implicit:
        X = _as_float_c(X)
    n = X.shape[0]
    if not 1 <= int(n_clusters) <= n:
        raise ValueError(f"n_clusters={n_clusters!r} must be in [1, n_samples={n}].")
    if not int(n_init) >= 1:
        raise ValueError(f"n_init={n_init!r} must be >= 1.")
    if algorithm not in ("hartigan", "lloyd"):
        raise ValueError(f"algorithm={algorithm!r} must be 'hartigan' or 'lloyd'.")
    if implicit:
        return _kmeans_implicit(X, n_clusters, n_init, seed, init, algorithm, max_iter,
                                return_all)
    if n_clusters == 1:
        return [_single_cluster(X)] if return_all else _single_cluster(X)
    rng = np.random.default_rng(seed)
    best = None
    results = []
    for r in range(int(n_init)):
        if isinstance(init, np.ndarray) and r == 0:
            C = init
        elif isinstance(init, str) and init == "random":
            C = X[rng.choice(n, size=n_clusters, replace=False)]
        elif isinstance(init, np.ndarray) or init == "k-means++":
            C = kmeans_plusplus(X, n_clusters, rng)
        else:
            raise ValueError(f"init={init!r} must be 'k-means++', 'random' or an array.")
        if algorithm == "hartigan":  # Lloyd to its fixed point, then Hartigan–Wong transfers
            res = hartigan_wong(X, C, max_iter=max_iter, lloyd_first=True)
        else:
            res = lloyd(X, C, max_iter=max_iter)
        results.append(res)
        if best is None or res.inertia < best.inertia:
            best = res
    return results if return_all else best


def weighted_columns(X: np.ndarray, w: np.ndarray) -> np.ndarray:
    r"""The matrix of weighted k-means: columns with :math:`w_j > 0`, scaled by :math:`\sqrt{w_j}`.

    k-means on it minimises :math:`\sum_j w_j \mathrm{WCSS}_j(C)`. Zero-weight columns are
    dropped, not scaled. Returns X itself (no copy) when every weight is 1.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    w : ndarray of shape (n_features,), non-negative

    Returns
    -------
    ndarray of shape (n_samples, n_selected)
    """
    w = np.asarray(w, dtype=np.float64)
    cols = np.flatnonzero(w > 0)
    if isinstance(X, ImplicitRows):  # sparse input: a column subset of E, never densified
        if cols.size == w.shape[0] and np.all(w == 1.0):
            return X
        return X.columns(cols, None if np.all(w[cols] == 1.0) else np.sqrt(w[cols]))
    if cols.size == w.shape[0] and np.all(w == 1.0):
        return _as_float_c(X)
    Xw = np.asarray(X, dtype=np.float64)[:, cols]  # fancy indexing: a fresh C-ordered copy
    if not np.all(w[cols] == 1.0):
        Xw *= np.sqrt(w[cols])
    return Xw


def wcss(X: np.ndarray, labels: np.ndarray, n_clusters: int) -> float:
    """The within-cluster sum of squares of a partition (centroids recomputed, two passes)."""
    X = _as_float_c(X)
    _, _, total = _stats(X, np.asarray(labels, dtype=np.intp), int(n_clusters))
    return float(total)


def transfer_gains(X: np.ndarray, labels: np.ndarray, n_clusters: int) -> np.ndarray:
    r"""The change of WCSS :math:`\Delta_{i \to B}` for moving each point to each cluster.

    .. math::

        \Delta_{i \to B} = \frac{n_B}{n_B + 1}\|x_i - c_B\|^2
                         - \frac{n_A}{n_A - 1}\|x_i - c_A\|^2

    for :math:`i \in A`, :math:`B \ne A`; :math:`+\infty` for :math:`B = A` and for every
    :math:`B` when :math:`n_A = 1` (a singleton cannot move without emptying its cluster).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    labels : ndarray of shape (n_samples,)
    n_clusters : int

    Returns
    -------
    ndarray of shape (n_samples, n_clusters)
    """
    X = _as_float_c(X)
    labels = np.asarray(labels, dtype=np.intp)
    C, nc, _ = _stats(X, labels, int(n_clusters))
    nc = nc.astype(np.float64)
    diff = X[:, None, :] - C[None, :, :]
    dist = np.einsum("ikj,ikj->ik", diff, diff)
    rows = np.arange(X.shape[0])
    own_n = nc[labels]
    with np.errstate(divide="ignore", invalid="ignore"):
        remove = np.where(own_n > 1, own_n / (own_n - 1.0), np.inf) * dist[rows, labels]
    add = nc / (nc + 1.0) * dist
    gains = add - remove[:, None]
    gains[rows, labels] = np.inf
    gains[own_n <= 1] = np.inf
    return gains


def is_hartigan_optimal(
    X: np.ndarray, labels: np.ndarray, n_clusters: int, *, rtol: float = 1e-10
) -> bool:
    r"""The local-optimality certificate: no single point can move and lower the WCSS.

    True iff :math:`\min_{i, B} \Delta_{i \to B} \ge -\mathrm{rtol} \cdot \mathrm{scale}`
    (:func:`transfer_gains`; scale = the total sum of squares, for rounding) and no cluster is
    empty.
    """
    X = _as_float_c(X)
    labels = np.asarray(labels, dtype=np.intp)
    if np.bincount(labels, minlength=n_clusters).min() == 0:
        return False
    scale = float(((X - X.mean(axis=0)) ** 2).sum()) + np.finfo(np.float64).tiny
    return bool(transfer_gains(X, labels, n_clusters).min() >= -rtol * scale)


# --------------------------------------------------------------------------------------------
# Sparse input (#18): the same algorithms on an implicit matrix Z = 1 b^T + E, E sparse
# --------------------------------------------------------------------------------------------


class ImplicitRows:
    r"""The matrix :math:`Z = \mathbf 1 b^\top + E` of shape (n, q), with E a CSR matrix.

    An implicitly centred (and scaled) sparse matrix: row :math:`i` is the dense background
    ``b`` plus the sparse row :math:`e_i`. Never densified: :func:`kmeans` and
    :func:`weighted_columns` (and :func:`sparsefs._kernels.sparse_kmeans.cluster_means`) work
    on it with :math:`O(\mathrm{nnz})` distance passes. Centres are held as
    :math:`D_k = c_k - b` (the mean of the :math:`e_i` of cluster k), so
    :math:`\|z_i - c_k\|^2 = \|D_k\|^2 + \sum_{j:\, e_{ij} \ne 0} e_{ij}(e_{ij} - 2 D_{kj})`.

    Parameters
    ----------
    E : sparse matrix of shape (n, q)
    background : ndarray of shape (q,)
    """

    ndim = 2

    def __init__(self, E, background):
        import scipy.sparse as sp

        E = sp.csr_array(E, dtype=np.float64)
        if not E.has_sorted_indices:
            E = E.sorted_indices()
        self.E = E
        self.data = np.ascontiguousarray(E.data, dtype=np.float64)
        self.indices = np.ascontiguousarray(E.indices, dtype=np.int64)
        self.indptr = np.ascontiguousarray(E.indptr, dtype=np.int64)
        self.background = np.ascontiguousarray(background, dtype=np.float64)
        self.shape = E.shape

    @property
    def size(self) -> int:
        """Stored entries (the work of one pass; used to choose the thread count)."""
        return int(self.data.shape[0])

    @property
    def nnz(self) -> int:
        return int(self.data.shape[0])

    def toarray(self) -> np.ndarray:  # for tests of small matrices only
        return self.E.toarray() + self.background

    def columns(self, cols, scale=None) -> ImplicitRows:
        """The columns ``cols`` (optionally each multiplied by ``scale``)."""
        E = self.E[:, cols]
        b = self.background[cols]
        if scale is not None:
            E = E.multiply(np.asarray(scale)[None, :]).tocsr()
            b = b * scale
        return ImplicitRows(E, b)

    def _parts(self):
        return self.data, self.indices, self.indptr


@njit(cache=True)
def _s_sqdist(data, indices, indptr, i, C, cn, k):
    """``||z_i - c_k||^2`` for centres ``C = c - b`` with squared norms ``cn``."""
    d = cn[k]
    for t in range(indptr[i], indptr[i + 1]):
        e = data[t]
        d += e * (e - 2.0 * C[k, indices[t]])
    return d if d > 0.0 else 0.0


@njit(cache=True, fastmath={"reassoc", "contract"})
def _s_norm2(C, k):
    q = C.shape[1]
    s = 0.0
    for j in range(q):
        s += C[k, j] * C[k, j]
    return s


@njit(cache=True)
def _s_norms_into(C, cn):
    for k in range(C.shape[0]):
        cn[k] = _s_norm2(C, k)


@njit(cache=True)
def _s_move(data, indices, indptr, C, cn, nc, an1, an2, i, l1, l2):
    q = C.shape[1]
    al1 = float(nc[l1])
    alw = al1 - 1.0
    al2 = float(nc[l2])
    alt = al2 + 1.0
    for t in range(indptr[i], indptr[i + 1]):  # (c*n - x)/(n - 1) with c*n/(n - 1) below
        j = indices[t]
        C[l1, j] -= data[t] / al1
        C[l2, j] += data[t] / al2
    f1 = al1 / alw
    f2 = al2 / alt
    for j in range(q):
        C[l1, j] *= f1
        C[l2, j] *= f2
    cn[l1] = _s_norm2(C, l1)
    cn[l2] = _s_norm2(C, l2)
    nc[l1] -= 1
    nc[l2] += 1
    an2[l1] = alw / al1
    an1[l1] = alw / (alw - 1.0) if alw > 1.0 else _BIG
    an1[l2] = alt / al2
    an2[l2] = alt / (alt + 1.0)


@njit(cache=True)
def _s_optimal_transfer(data, indices, indptr, C, cn, ic1, ic2, nc, an1, an2, ncp, d, itran,
                        live, indx):
    m = indptr.shape[0] - 1
    K = C.shape[0]
    for L in range(K):
        if itran[L] == 1:
            live[L] = m + 1
    for i in range(m):
        step = i + 1
        indx += 1
        l1 = ic1[i]
        if nc[l1] != 1:
            if ncp[l1] != 0:
                d[i] = _s_sqdist(data, indices, indptr, i, C, cn, l1) * an1[l1]
            ll = ic2[i]
            l2 = ll
            r2 = _s_sqdist(data, indices, indptr, i, C, cn, ll) * an2[ll]
            for L in range(K):
                if (step >= live[l1] and step >= live[L]) or l1 == L or ll == L:
                    continue
                rr = r2 / an2[L]
                dc = _s_sqdist(data, indices, indptr, i, C, cn, L)
                if dc < rr:
                    r2 = dc * an2[L]
                    l2 = L
            if r2 >= d[i]:
                ic2[i] = l2
            else:
                indx = 0
                live[l1] = m + step
                live[l2] = m + step
                ncp[l1] = step
                ncp[l2] = step
                _s_move(data, indices, indptr, C, cn, nc, an1, an2, i, l1, l2)
                ic1[i] = l2
                ic2[i] = l1
        if indx == m:
            return indx
    for L in range(K):
        itran[L] = 0
        live[L] -= m
    return indx


@njit(cache=True)
def _s_quick_transfer(data, indices, indptr, C, cn, ic1, ic2, nc, an1, an2, ncp, d, itran,
                      indx, max_steps):
    m = indptr.shape[0] - 1
    icoun = 0
    istep = 0
    while True:
        for i in range(m):
            icoun += 1
            istep += 1
            if istep > max_steps:
                return indx, False
            l1 = ic1[i]
            l2 = ic2[i]
            if nc[l1] != 1:
                if istep <= ncp[l1]:
                    d[i] = _s_sqdist(data, indices, indptr, i, C, cn, l1) * an1[l1]
                if istep < ncp[l1] or istep < ncp[l2]:
                    r2 = d[i] / an2[l2]
                    dd = _s_sqdist(data, indices, indptr, i, C, cn, l2)
                    if dd < r2:
                        icoun = 0
                        indx = 0
                        itran[l1] = 1
                        itran[l2] = 1
                        ncp[l1] = istep + m
                        ncp[l2] = istep + m
                        _s_move(data, indices, indptr, C, cn, nc, an1, an2, i, l1, l2)
                        ic1[i] = l2
                        ic2[i] = l1
            if icoun == m:
                return indx, True


@njit(cache=True)
def _s_means_into(data, indices, indptr, labels, C, nc):
    """``D_k`` (mean of the sparse rows of cluster k; 0 for an empty one) and the sizes,
    written into ``C`` and ``nc``."""
    n = indptr.shape[0] - 1
    K, q = C.shape
    for k in range(K):
        nc[k] = 0
        for j in range(q):
            C[k, j] = 0.0
    for i in range(n):
        k = labels[i]
        nc[k] += 1
        for t in range(indptr[i], indptr[i + 1]):
            C[k, indices[t]] += data[t]
    for k in range(K):
        if nc[k] > 0:
            for j in range(q):
                C[k, j] /= nc[k]


@njit(cache=True)
def _s_recompute(data, indices, indptr, labels, C, nc, cn):
    """``D_k``, sizes and squared norms (in place) and the WCSS of the partition."""
    n = indptr.shape[0] - 1
    _s_means_into(data, indices, indptr, labels, C, nc)
    _s_norms_into(C, cn)
    total = 0.0
    for i in range(n):
        total += _s_sqdist(data, indices, indptr, i, C, cn, labels[i])
    return total


@njit(cache=True, inline="always")
def _s_fill_empty(data, indices, indptr, ic1, C, nc, cn):
    """:func:`_fill_empty` on Z (``C``, ``nc``, ``cn`` and ``ic1`` updated in place)."""
    n = indptr.shape[0] - 1
    K = C.shape[0]
    _s_means_into(data, indices, indptr, ic1, C, nc)
    for k in range(K):
        if nc[k] > 0:
            continue
        _s_norms_into(C, cn)
        best = -1.0
        bi = -1
        for i in range(n):
            if nc[ic1[i]] >= 2:
                dist = _s_sqdist(data, indices, indptr, i, C, cn, ic1[i])
                if dist > best:
                    best = dist
                    bi = i
        ic1[bi] = k
        _s_means_into(data, indices, indptr, ic1, C, nc)


@njit(cache=True, inline="always")
def _s_assign2(data, indices, indptr, C, cn, ic1, ic2, sums, nc):
    n = indptr.shape[0] - 1
    K = C.shape[0]
    for L in range(K):
        nc[L] = 0
        for j in range(sums.shape[1]):
            sums[L, j] = 0.0
    changed = 0
    for i in range(n):
        b1 = np.intp(0)  # typed ints, not literals: one compiled signature of _s_sqdist
        b2 = np.intp(1)
        d1 = _s_sqdist(data, indices, indptr, i, C, cn, b1)
        d2 = _s_sqdist(data, indices, indptr, i, C, cn, b2)
        if d2 < d1:
            b1, b2, d1, d2 = 1, 0, d2, d1
        for L in range(2, K):
            dl = _s_sqdist(data, indices, indptr, i, C, cn, L)
            if dl < d1:
                b2, d2 = b1, d1
                b1, d1 = L, dl
            elif dl < d2:
                b2, d2 = L, dl
        if ic1[i] != b1:
            changed += 1
        ic1[i] = b1
        ic2[i] = b2
        nc[b1] += 1
        for t in range(indptr[i], indptr[i + 1]):
            sums[b1, indices[t]] += data[t]
    return changed


@njit(cache=True)
def _s_hw_lloyd(data, indices, indptr, C, cn, ic1, ic2, sums, nc, lloyd_iter, stop):
    """:func:`_hw_lloyd` on Z = 1 b^T + E (``C``: the centres ``c - b``, ``cn`` their
    squared norms; all updated in place)."""
    n = indptr.shape[0] - 1
    K, q = C.shape
    for i in range(n):
        ic1[i] = -1
    _s_norms_into(C, cn)
    n_lloyd = 0
    while True:
        changed = _s_assign2(data, indices, indptr, C, cn, ic1, ic2, sums, nc)
        empty = False
        for L in range(K):
            empty = empty or nc[L] == 0
        if empty:
            _s_fill_empty(data, indices, indptr, ic1, C, nc, cn)
            for i in range(n):
                if ic2[i] == ic1[i]:
                    ic2[i] = 0 if ic1[i] != 0 else 1
        else:
            for L in range(K):
                for j in range(q):
                    C[L, j] = sums[L, j] / nc[L]
        _s_norms_into(C, cn)
        n_lloyd += 1
        if (n_lloyd > 1 and changed <= stop) or n_lloyd > lloyd_iter:
            break
    return n_lloyd


@njit(cache=True)
def _s_hw_transfers(data, indices, indptr, C, cn, ic1, ic2, nc, an1, an2, itran, ncp, live, d,
                    max_iter):
    """:func:`_hw_transfers` on Z = 1 b^T + E."""
    n = indptr.shape[0] - 1
    K = C.shape[0]
    for L in range(K):
        aa = float(nc[L])
        an2[L] = aa / (aa + 1.0)
        an1[L] = aa / (aa - 1.0) if aa > 1.0 else _BIG
        itran[L] = 1
        ncp[L] = -1
        live[L] = 0
    for i in range(n):
        d[i] = 0.0
    indx = np.intp(0)
    converged = False
    n_iter = 0
    max_steps = 50 * n + 1000
    for _ in range(max_iter):
        n_iter += 1
        indx = _s_optimal_transfer(data, indices, indptr, C, cn, ic1, ic2, nc, an1, an2, ncp,
                                   d, itran, live, indx)
        if indx == n:
            converged = True
            break
        indx, finished = _s_quick_transfer(data, indices, indptr, C, cn, ic1, ic2, nc, an1,
                                           an2, ncp, d, itran, indx, max_steps)
        if K == 2 and finished:
            converged = True
            break
        for L in range(K):
            ncp[L] = 0
    return n_iter, converged


def _s_hartigan_wong_core(data, indices, indptr, C0, max_iter, lloyd_iter, stop):
    """:func:`_hartigan_wong_core` on Z = 1 b^T + E (``C0``: initial ``c - b``)."""
    n = indptr.shape[0] - 1
    K, q = C0.shape
    C = np.array(C0, dtype=np.float64, order="C")
    cn = np.empty(K)
    ic1 = np.empty(n, dtype=np.intp)
    ic2 = np.zeros(n, dtype=np.intp)
    nc = np.zeros(K, dtype=np.int64)
    n_lloyd = _s_hw_lloyd(data, indices, indptr, C, cn, ic1, ic2, np.empty((K, q)), nc,
                          lloyd_iter, stop)
    ki = np.empty((3, K), dtype=np.int64)
    n_iter, converged = _s_hw_transfers(data, indices, indptr, C, cn, ic1, ic2, nc, np.empty(K),
                                        np.empty(K), ki[0], ki[1], ki[2], np.empty(n), max_iter)
    total = _s_recompute(data, indices, indptr, ic1, C, nc, cn)
    return ic1, C, total, n_iter + n_lloyd, converged


@njit(cache=True)
def _s_lloyd_iterations(data, indices, indptr, C, cn, labels, nc, max_iter):
    n = indptr.shape[0] - 1
    K = C.shape[0]
    _s_norms_into(C, cn)
    for i in range(n):
        labels[i] = -1
    converged = False
    n_iter = 0
    for _ in range(max_iter):
        n_iter += 1
        changed = 0
        for i in range(n):
            best = np.intp(0)  # a typed int, not a literal: one compiled signature
            dbest = _s_sqdist(data, indices, indptr, i, C, cn, best)
            for L in range(1, K):
                dl = _s_sqdist(data, indices, indptr, i, C, cn, L)
                if dl < dbest:
                    dbest = dl
                    best = L
            if best != labels[i]:
                changed += 1
                labels[i] = best
        if changed == 0:
            converged = True
            break
        _s_fill_empty(data, indices, indptr, labels, C, nc, cn)
        _s_norms_into(C, cn)
    return n_iter, converged


def _s_lloyd_core(data, indices, indptr, C0, max_iter):
    n = indptr.shape[0] - 1
    K = C0.shape[0]
    C = np.array(C0, dtype=np.float64, order="C")
    cn = np.empty(K)
    labels = np.empty(n, dtype=np.intp)
    nc = np.zeros(K, dtype=np.int64)
    n_iter, converged = _s_lloyd_iterations(data, indices, indptr, C, cn, labels, nc, max_iter)
    total = _s_recompute(data, indices, indptr, labels, C, nc, cn)
    return labels, C, total, n_iter, converged


def _s_stats(data, indices, indptr, labels, K, q):
    C = np.empty((K, q))
    nc = np.empty(K, dtype=np.int64)
    total = _s_recompute(data, indices, indptr, labels, C, nc, np.empty(K))
    return C, nc, total


@njit(cache=True)
def _s_sqdist_rows(data, indices, indptr, i, k):
    """``||z_i - z_k||^2 = ||e_i - e_k||^2`` by a merge of the two sorted rows."""
    a, a1 = indptr[i], indptr[i + 1]
    c, c1 = indptr[k], indptr[k + 1]
    d = 0.0
    while a < a1 or c < c1:
        if c >= c1 or (a < a1 and indices[a] < indices[c]):
            t = data[a]
            a += 1
        elif a >= a1 or indices[c] < indices[a]:
            t = -data[c]
            c += 1
        else:
            t = data[a] - data[c]
            a += 1
            c += 1
        d += t * t
    return d


def _s_kmeans_plusplus_indices(data, indices, indptr, first, draws):
    n = indptr.shape[0] - 1
    K, T = draws.shape[0] + 1, draws.shape[1]
    idx = np.empty(K, dtype=np.intp)
    cand = np.empty(T, dtype=np.intp)
    _s_kmeans_plusplus_core(data, indices, indptr, first, draws, idx, cand, np.empty((T + 2, n)),
                            np.empty(T))
    return idx


@njit(cache=True)
def _s_kmeans_plusplus_core(data, indices, indptr, first, draws, idx, cand, work, pot):
    """:func:`_kmeans_plusplus_core` on the rows of E (distances by sorted-row merges)."""
    n = indptr.shape[0] - 1
    K = draws.shape[0] + 1
    T = draws.shape[1]
    idx[0] = first
    closest = work[0]
    cum = work[1]
    trial = work[2:]
    for i in range(n):
        closest[i] = _s_sqdist_rows(data, indices, indptr, i, first)
    for c in range(1, K):
        acc = 0.0
        for i in range(n):
            acc += closest[i]
            cum[i] = acc
        for t in range(T):
            cand[t] = _search_right(cum, draws[c - 1, t] * cum[n - 1], n - 1)
        for t in range(T):
            pot[t] = 0.0
        for i in range(n):
            for t in range(T):
                d = _s_sqdist_rows(data, indices, indptr, i, cand[t])
                if not d < closest[i]:  # min(closest[i], d), ties and NaN as min()
                    d = closest[i]
                trial[t, i] = d
                pot[t] += d
        best = 0
        for t in range(1, T):
            if pot[t] < pot[best]:
                best = t
        idx[c] = cand[best]
        for i in range(n):
            closest[i] = trial[best, i]


def _s_rows(X: ImplicitRows, idx) -> np.ndarray:
    """Rows ``idx`` of E, densified (``k`` x q: centres ``c - b``)."""
    out = np.zeros((len(idx), X.shape[1]))
    for r, i in enumerate(idx):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        out[r, X.indices[lo:hi]] = X.data[lo:hi]
    return out


def _s_result(X: ImplicitRows, labels, Cd, total, n_iter, conv) -> KMeansResult:
    return KMeansResult(labels.astype(np.intp), Cd + X.background, float(total), int(n_iter),
                        bool(conv))


def _kmeans_implicit(X: ImplicitRows, n_clusters, n_init, seed, init, algorithm, max_iter,
                     return_all):
    """:func:`kmeans` on an :class:`ImplicitRows` (the same random stream as dense X)."""
    n, q = X.shape
    data, indices, indptr = X._parts()
    if n_clusters == 1:
        labels = np.zeros(n, dtype=np.intp)
        Cd, _, total = _s_stats(data, indices, indptr, labels, 1, q)
        res = _s_result(X, labels, Cd, total, 0, True)
        return [res] if return_all else res
    rng = np.random.default_rng(seed)
    best = None
    results = []
    for r in range(int(n_init)):
        if isinstance(init, np.ndarray) and r == 0:
            C = np.array(init, dtype=np.float64, order="C")
            if C.ndim != 2 or C.shape[1] != q:
                raise ValueError(
                    f"centers of shape {C.shape} do not match X of shape {X.shape}; need "
                    "(n_clusters, n_features)."
                )
            C = np.ascontiguousarray(C - X.background)
        elif isinstance(init, str) and init == "random":
            C = _s_rows(X, rng.choice(n, size=n_clusters, replace=False))
        elif isinstance(init, np.ndarray) or init == "k-means++":
            first = int(rng.integers(n))
            draws = rng.random((max(int(n_clusters) - 1, 0), 2 + int(math.log(n_clusters))))
            C = _s_rows(X, _s_kmeans_plusplus_indices(data, indices, indptr, first, draws))
        else:
            raise ValueError(f"init={init!r} must be 'k-means++', 'random' or an array.")
        if algorithm == "hartigan":
            out = _s_hartigan_wong_core(data, indices, indptr, C, int(max_iter), int(max_iter),
                                        n // _LLOYD_STOP)
        else:
            out = _s_lloyd_core(data, indices, indptr, C, int(max_iter))
        res = _s_result(X, *out)
        results.append(res)
        if best is None or res.inertia < best.inertia:
            best = res
    return results if return_all else best


def implicit_cluster_means(X: ImplicitRows, labels, n_clusters):
    """Sizes and ``D_k`` (cluster means minus the background; 0 for an empty cluster)."""
    data, indices, indptr = X._parts()
    D = np.empty((int(n_clusters), X.shape[1]))
    nc = np.empty(int(n_clusters), dtype=np.int64)
    _s_means_into(data, indices, indptr, np.asarray(labels, dtype=np.intp), D, nc)
    return nc.astype(np.float64), D
