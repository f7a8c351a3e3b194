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

**One core for dense and sparse rows** (issue #34): the compiled loops (Hartigan–Wong's Lloyd
passes and transfer stages, Lloyd's iteration, k-means++, the cluster sums and means, the WCSS)
are written once over a few row-access primitives (``_dist``, ``_dist_bounded``, ``_add_row``,
``_add_cost``, ``_move_point``, ``_norms``): numba overloads, one per row type, chosen when a
loop is compiled: the dense arithmetic (X a 2-D array) or the CSR arithmetic of an
:class:`ImplicitRows` (the tuple ``(data, indices, indptr)`` of its E, centres held as
``c - b`` with their squared norms). numba compiles one specialisation of each loop per row
type, each doing exactly the arithmetic of the former hand-written dense and CSR copies
(results and exact ties bit for bit: ``benchmarks/record_kmeans_bits.py``). The dask path's
per-block cluster sums use the same compiled pass (:func:`cluster_sums`).

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
from types import FunctionType, SimpleNamespace

import numpy as np
from numba import njit, types
from numba.extending import overload

from sparsefs._kernels.centered import CenteredSparse

__all__ = [
    "ImplicitRows",
    "KMeansResult",
    "cluster_sums",
    "hartigan_wong",
    "implicit_cluster_means",
    "is_hartigan_optimal",
    "kmeans",
    "kmeans_plusplus",
    "lloyd",
    "means_into",
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
# Row access: the only code that differs between dense X and the CSR rows of an ImplicitRows
# --------------------------------------------------------------------------------------------
#
# The k-means loops below (Hartigan-Wong's Lloyd passes and transfer stages, Lloyd's iteration,
# k-means++, the cluster sums and means, the WCSS) are written once over the row-access
# primitives ``_dist``, ``_dist_bounded``, ``_add_row``, ``_add_cost``, ``_move_point`` and
# ``_norms`` (Python stubs). Each has one numba overload for X a dense 2-D array and one for X
# the tuple ``(data, indices, indptr)`` of the E of an ImplicitRows Z = 1 b^T + E (centres held
# as ``D = c - b`` with squared norms ``cn``); an overload returns its implementation only for
# its own row type, so numba compiles one specialisation of each loop per row type, calling
# the per-type arithmetic directly (each overload with its own compiler options: the dense
# distances keep their ``fastmath``). The arithmetic is exactly that of the former hand-written
# dense and CSR copies, so results (and exact ties) are unchanged bit for bit. Dense X ignores
# ``cn`` (``_norms`` does nothing for it). Each dense primitive is one small compiled function,
# as the former _sqdist, _sqdist_bounded and _move were; _add_row, _add_cost and _norms are
# three more (the former code had those lines in its loops), which with their linking into
# each caller cost some first-use compilation (#33; docs/methods/sparse_kmeans.md).

_FAST = {"fastmath": {"reassoc", "contract"}, **_CALLEE}


def _is_dense(X) -> bool:
    return isinstance(X, types.Array)


def _is_csr(X) -> bool:
    return isinstance(X, types.BaseTuple) and len(X) == 3


def _dist(X, i, C, cn, k):
    """``||x_i - c_k||^2`` (stub: compiled through its overloads); with ``C = X``, the
    distance between rows i and k (``cn`` unused)."""


def _dist_bounded(X, i, C, cn, k, bound):
    """``||x_i - c_k||^2`` or, dense, a value >= ``bound`` once the partial sum reaches it
    (the CSR distance, one short pass, is never cut). Stub."""


def _add_row(X, i, S, k):
    """``S[k] += x_i`` (stub)."""


def _add_cost(X, i, C, cn, k, total):
    """``total + ||x_i - c_k||^2``; dense: added coordinate by coordinate (stub)."""


def _move_point(X, C, cn, nc, an1, an2, i, l1, l2):
    """Move point i from cluster l1 to l2: incremental centroid, size and factor updates
    (stub)."""


def _norms(X, C, cn):
    """CSR: ``cn`` = the centres' squared norms; dense: nothing (stub)."""


# -- dense rows


def _sqdist(X, i, C, cn, k):
    p = X.shape[1]
    d = 0.0
    for j in range(p):
        t = X[i, j] - C[k, j]
        d += t * t
    return d


def _sqdist_bounded(X, i, C, cn, k, bound):
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


def _add_dense_row(X, i, S, k):
    for j in range(X.shape[1]):
        S[k, j] += X[i, j]


def _add_dense_cost(X, i, C, cn, k, total):
    for j in range(X.shape[1]):
        t = X[i, j] - C[k, j]
        total += t * t
    return total


def _move_dense(X, C, cn, nc, an1, an2, i, l1, l2):
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


def _no_norms(X, C, cn):
    pass


for _stub, _impl, _opts, _inline in (
    (_dist, _sqdist, _FAST, "never"), (_dist_bounded, _sqdist_bounded, _FAST, "never"),
    (_move_point, _move_dense, _CALLEE, "never"),
    (_add_row, _add_dense_row, _CALLEE, "never"), (_add_cost, _add_dense_cost, _CALLEE, "never"),
    (_norms, _no_norms, _CALLEE, "never"),
):
    overload(_stub, jit_options=_opts, strict=False, inline=_inline)(
        lambda *args, _impl=_impl: _impl if _is_dense(args[0]) else None)


# -- CSR rows of an ImplicitRows


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
    """:func:`_move_point` on Z = 1 b^T + E (and the two centres' squared norms)."""
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


def _s_dist(X, i, C, cn, k):
    return _s_sqdist(X[0], X[1], X[2], i, C, cn, k)


def _s_dist_bounded(X, i, C, cn, k, bound):
    return _s_sqdist(X[0], X[1], X[2], i, C, cn, k)


def _s_row_dist(X, i, C, cn, k):
    return _s_sqdist_rows(X[0], X[1], X[2], i, k)


def _s_add_row(X, i, S, k):
    data, indices, indptr = X
    for t in range(indptr[i], indptr[i + 1]):
        S[k, indices[t]] += data[t]


def _s_add_cost(X, i, C, cn, k, total):
    return total + _s_sqdist(X[0], X[1], X[2], i, C, cn, k)


def _s_move_point(X, C, cn, nc, an1, an2, i, l1, l2):
    _s_move(X[0], X[1], X[2], C, cn, nc, an1, an2, i, l1, l2)


def _s_norms(X, C, cn):
    _s_norms_into(C, cn)


for _stub, _impl in ((_dist_bounded, _s_dist_bounded), (_add_row, _s_add_row),
                     (_add_cost, _s_add_cost), (_move_point, _s_move_point), (_norms, _s_norms)):
    overload(_stub, jit_options=_CALLEE, strict=False)(
        lambda *args, _impl=_impl: _impl if _is_csr(args[0]) else None)


@overload(_dist, jit_options=_CALLEE)
def _ol_s_dist(X, i, C, cn, k):
    if _is_csr(X):  # a row and a centre, or (C the same rows) two rows
        return _s_row_dist if _is_csr(C) else _s_dist
    return None


# --------------------------------------------------------------------------------------------
# The k-means core, written once (compiled per row type: dense and CSR)
# --------------------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def _sums_into(X, labels, S, nc):
    """The row sums ``S`` and sizes ``nc`` of the partition ``labels`` (in place), adding the
    rows in order (the bits of a one-hot sparse product, or of ``np.add.at``)."""
    n = labels.shape[0]
    K, p = S.shape
    for k in range(K):
        nc[k] = 0
        for j in range(p):
            S[k, j] = 0.0
    for i in range(n):
        k = labels[i]
        nc[k] += 1
        _add_row(X, i, S, k)


@njit(cache=True)
def means_into(X, labels, C, nc):
    """The means ``C`` and sizes ``nc`` of the partition ``labels``, written in place.

    Compiled (numba); the caller hands in the output arrays (the kernels allocate nothing,
    which keeps first-use compilation short). Rows are added in order, so the sums are those
    of :func:`cluster_sums`.

    Parameters
    ----------
    X : C-ordered float64 ndarray of shape (n, p), or the CSR tuple ``(data, indices,
        indptr)`` of an :class:`ImplicitRows` (then ``C`` receives the means of the rows of E)
    labels : int ndarray of shape (n,), values in ``[0, K)``
    C : float64 ndarray of shape (K, p), overwritten; an empty cluster's row is 0
    nc : int64 ndarray of shape (K,), overwritten with the cluster sizes
    """
    K, p = C.shape
    _sums_into(X, labels, C, nc)
    for k in range(K):
        if nc[k] > 0:
            for j in range(p):
                C[k, j] /= nc[k]


def _recompute(X, labels, C, nc, cn):
    """Means and sizes (and CSR: squared norms) in place, and the WCSS of ``labels``."""
    core = _core(X)
    core.means_into(X, labels, C, nc)
    return core.wcss_of(X, labels, C, cn)


@njit(cache=True)
def _wcss_of(X, labels, C, cn):
    """The WCSS of the partition ``labels`` with centres ``C`` (CSR: ``cn`` their squared
    norms, computed here), one running sum in order. Its own small kernel: folded into the
    means pass it compiled ~0.15 s more on first use (issue #33)."""
    _norms(X, C, cn)
    total = 0.0
    for i in range(labels.shape[0]):
        total = _add_cost(X, i, C, cn, labels[i], total)
    return total


@njit(cache=True, inline="always")
def _fill_empty(X, ic1, C, cn, nc):
    """The means ``C`` and sizes ``nc`` (in place) of the partition ``ic1``, after giving each
    empty cluster the point farthest from its own centre (taken from a cluster of size >= 2;
    ``ic1`` is updated in place): the WCSS does not increase. (Lloyd's iteration;
    Hartigan-Wong's Lloyd passes use :func:`_fill_empty_py`, outside their compiled loop.)"""
    n = ic1.shape[0]
    K = C.shape[0]
    means_into(X, ic1, C, nc)
    for k in range(K):
        if nc[k] > 0:
            continue
        _norms(X, C, cn)
        best = -1.0
        bi = -1
        for i in range(n):
            if nc[ic1[i]] >= 2:
                dist = _dist(X, i, C, cn, ic1[i])
                if dist > best:
                    best = dist
                    bi = i
        ic1[bi] = k
        means_into(X, ic1, C, nc)


def _fill_empty_py(X, ic1, C, cn, nc):
    """:func:`_fill_empty` driven from Python (the same arithmetic: :func:`means_into` and
    :func:`_dist` distances; the first farthest point on ties): the Hartigan-Wong Lloyd
    passes hand an emptied cluster to it, so their compiled loop carries no repair code and
    the repair compiles one small distance loop, on first need (issue #33)."""
    core = _core(X)
    core.means_into(X, ic1, C, nc)
    n, K = ic1.shape[0], C.shape[0]
    rows = np.arange(n)
    D = np.empty((K, n))
    for k in range(K):
        if nc[k] > 0:
            continue
        if not isinstance(X, np.ndarray):
            _s_norms_into(C, cn)
        core.sqdist_to(X, C, cn, np.arange(K), D)
        dist = D[ic1, rows]
        eligible = (nc[ic1] >= 2) & (dist > -1.0)  # (-1: the compiled loop's start)
        bi = int(np.argmax(np.where(eligible, dist, -np.inf)))  # the first of the largest
        if not eligible[bi]:
            bi = -1
        ic1[bi] = k
        core.means_into(X, ic1, C, nc)


@njit(cache=True)
def _hw_lloyd(X, C, cn, ic1, ic2, sums, nc, n_lloyd, lloyd_iter, stop):
    """Lloyd passes (the nearest-centre assignment and the sums in one pass; the first is AS
    136's initial assignment) until, after at least two, at most ``stop`` labels change, or
    ``lloyd_iter + 1`` passes: the transfer stages finish the tail of single moves far more
    cheaply than full passes. ``C`` (the centres), ``ic1``/``ic2`` (closest and second
    closest; ``ic1`` starts at -1) and ``nc`` (sizes) are updated in place (``sums`` is work
    space); ``n_lloyd`` passes are already done. Returns ``(passes, changed, empty)``: with
    ``empty`` True the last pass left a cluster empty and returned before counting itself and
    updating ``C``, and the caller (:func:`_hartigan_wong_core`) fills it and calls again:
    the rare path stays out of this function's compilation."""
    n = ic1.shape[0]
    K, p = C.shape
    _norms(X, C, cn)
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
            d1 = _dist(X, i, C, cn, b1)
            d2 = _dist(X, i, C, cn, b2)
            if d2 < d1:
                b1, b2, d1, d2 = 1, 0, d2, d1
            for L in range(2, K):
                dl = _dist_bounded(X, i, C, cn, L, d2)
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
            _add_row(X, i, sums, b1)
        for L in range(K):
            if nc[L] == 0:
                return n_lloyd, changed, True
        for L in range(K):  # C: the means of the partition ic1
            for j in range(p):
                C[L, j] = sums[L, j] / nc[L]
        _norms(X, C, cn)
        n_lloyd += 1
        if (n_lloyd > 1 and changed <= stop) or n_lloyd > lloyd_iter:
            return n_lloyd, changed, False


@njit(cache=True)
def _hw_transfers(X, C, cn, ic1, ic2, nc, an1, an2, itran, ncp, live, d, max_iter):
    """The transfer stages of AS 136 from the partition ``ic1`` with means ``C`` and sizes
    ``nc`` (all updated in place; the other arrays are work space of length K, K, K, K, K
    and n) until an optimal-transfer stage moves nothing. Returns (stages, converged)."""
    m = ic1.shape[0]
    K = C.shape[0]
    _norms(X, C, cn)
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
                    d[i] = _dist(X, i, C, cn, l1) * an1[l1]
                ll = ic2[i]
                l2 = ll
                r2 = _dist(X, i, C, cn, ll) * an2[ll]
                for L in range(K):
                    # l1 not live: only the live clusters can have become better for i
                    if (step >= live[l1] and step >= live[L]) or l1 == L or ll == L:
                        continue
                    rr = r2 / an2[L]
                    dc = _dist_bounded(X, i, C, cn, L, rr)
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
                    _move_point(X, C, cn, nc, an1, an2, i, l1, l2)
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
                        d[i] = _dist(X, i, C, cn, l1) * an1[l1]
                    if istep < ncp[l1] or istep < ncp[l2]:
                        r2 = d[i] / an2[l2]
                        dd = _dist_bounded(X, i, C, cn, l2, r2)
                        if dd < r2:
                            icoun = 0
                            indx = 0
                            itran[l1] = 1
                            itran[l2] = 1
                            ncp[l1] = istep + m
                            ncp[l2] = istep + m
                            _move_point(X, C, cn, nc, an1, an2, i, l1, l2)
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


def _rows_n(X) -> int:
    """Rows of a dense X or of a CSR tuple (from Python)."""
    return X.shape[0] if isinstance(X, np.ndarray) else X[2].shape[0] - 1


def _hartigan_wong_core(X, C0, max_iter, lloyd_iter, stop):
    """AS 136 from the centres ``C0``: :func:`_hw_lloyd`, :func:`_hw_transfers`, then the
    means and WCSS recomputed (:func:`_recompute`). ``X``: dense, or the CSR tuple of an
    :class:`ImplicitRows` (then ``C0`` and the returned centres are ``c - b``). The compiled
    parts allocate nothing and are orchestrated here: numba re-optimises every callee inside
    each caller's module, so one compiled function holding all of it compiles far more
    slowly."""
    n = _rows_n(X)
    K, p = C0.shape
    C = np.array(C0, dtype=np.float64, order="C")
    cn = np.empty(K)
    ic1 = np.empty(n, dtype=np.intp)
    ic2 = np.zeros(n, dtype=np.intp)
    nc = np.zeros(K, dtype=np.int64)
    sums = np.empty((K, p))
    ic1[:] = -1
    n_lloyd = 0
    core = _core(X)
    while True:
        n_lloyd, changed, empty = core.hw_lloyd(X, C, cn, ic1, ic2, sums, nc, n_lloyd,
                                                lloyd_iter, stop)
        if not empty:
            break
        _fill_empty_py(X, ic1, C, cn, nc)  # an emptied cluster: the rare path
        moved = ic2 == ic1  # a point moved into the empty cluster: another second choice
        ic2[moved] = np.where(ic1[moved] != 0, 0, 1)
        n_lloyd += 1
        if (n_lloyd > 1 and changed <= stop) or n_lloyd > lloyd_iter:
            break
    ki = np.empty((3, K), dtype=np.int64)
    n_iter, converged = core.hw_transfers(X, C, cn, ic1, ic2, nc, np.empty(K), np.empty(K),
                                          ki[0], ki[1], ki[2], np.empty(n), max_iter)
    total = _recompute(X, ic1, C, nc, cn)
    return ic1, C, total, n_iter + n_lloyd, converged


@njit(cache=True)
def _lloyd_iterations(X, C, cn, labels, nc, max_iter):
    """Lloyd's iteration from the centres ``C`` (``C``, ``labels``, ``nc`` updated in place)
    until no label changes. Returns (iterations, converged)."""
    n = labels.shape[0]
    K = C.shape[0]
    _norms(X, C, cn)
    for i in range(n):
        labels[i] = -1
    converged = False
    n_iter = 0
    for _ in range(max_iter):
        n_iter += 1
        changed = 0
        for i in range(n):
            best = np.intp(0)  # a typed int, not a literal: one compiled signature
            dbest = _dist(X, i, C, cn, best)
            for L in range(1, K):
                dl = _dist_bounded(X, i, C, cn, L, dbest)
                if dl < dbest:
                    dbest = dl
                    best = L
            if best != labels[i]:
                changed += 1
                labels[i] = best
        if changed == 0:
            converged = True
            break
        _fill_empty(X, labels, C, cn, nc)
        _norms(X, C, cn)
    return n_iter, converged


def _lloyd_core(X, C0, max_iter):
    """Lloyd from ``C0`` then the means and WCSS recomputed (``X`` as in
    :func:`_hartigan_wong_core`)."""
    n = _rows_n(X)
    K = C0.shape[0]
    C = np.array(C0, dtype=np.float64, order="C")
    cn = np.empty(K)
    labels = np.empty(n, dtype=np.intp)
    nc = np.zeros(K, dtype=np.int64)
    n_iter, converged = _core(X).lloyd_iterations(X, C, cn, labels, nc, max_iter)
    total = _recompute(X, labels, C, nc, cn)
    return labels, C, total, n_iter, converged


def _stats(X, labels, K, p):
    """Means, sizes and WCSS of a partition (:func:`_recompute` with fresh arrays)."""
    C = np.empty((K, p))
    nc = np.empty(K, dtype=np.int64)
    total = _recompute(X, labels, C, nc, np.empty(K))
    return C, nc, total


def _kmeans_plusplus_indices(X, first, draws):
    """Indices of the greedy k-means++ centres; ``draws`` are the uniforms of each step.

    Each step is one compiled pass over X (:func:`_sqdist_to`: every point's distance to all the
    step's candidate rows); the cumulative sums, the candidates' search, the minima and the
    potentials are numpy's sequential ``cumsum`` / ``searchsorted`` / ``where``, the same
    arithmetic in the same order as a single compiled loop, which compiled ~0.2 s more on
    first use (issue #33).
    """
    n = _rows_n(X)
    K, T = draws.shape[0] + 1, draws.shape[1]
    idx = np.empty(K, dtype=np.intp)
    idx[0] = first
    unused = np.empty(0)  # (cn: the distance between rows needs no norms)
    trial = np.empty((T, n))
    closest = np.empty((1, n))
    dists = _core(X).sqdist_to
    dists(X, X, unused, idx[:1], closest)
    closest = closest[0]
    for c in range(1, K):
        cum = np.cumsum(closest)  # sequential, as a loop
        cand = np.minimum(np.searchsorted(cum, draws[c - 1] * cum[n - 1], side="right"), n - 1)
        dists(X, X, unused, cand, trial)
        trial = np.where(trial < closest, trial, closest)  # min(closest, d): ties, NaN as min()
        pot = np.cumsum(trial, axis=1)[:, n - 1]  # sequential sums, not pairwise
        best = int(np.argmin(pot))  # the first of the lowest
        idx[c] = cand[best]
        closest = trial[best].copy()
    return idx


@njit(cache=True)
def _sqdist_to(X, C, cn, ks, out):
    """``out[t, i] = ||x_i - c_{ks[t]}||^2`` (:func:`_dist`): with ``C = X`` the distances to
    the rows ``ks`` (k-means++), else to the centres ``ks`` (CSR: ``cn`` their squared
    norms)."""
    for i in range(out.shape[1]):
        for t in range(ks.shape[0]):
            out[t, i] = _dist(X, i, C, cn, ks[t])


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
    return X[_seed_indices(X, X.shape[0], n_clusters, rng, n_local_trials)].copy()



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
    if n_clusters == 1:
        return [_single(X)] if return_all else _single(X)
    rows = X._parts() if implicit else X  # what the compiled core reads
    rng = np.random.default_rng(seed)
    best = None
    results = []
    for r in range(int(n_init)):
        if isinstance(init, np.ndarray) and r == 0:
            C = init if not implicit else _check_centers(X, init) - X.background
        elif isinstance(init, str) and init == "random":
            C = _start_rows(X, rng.choice(n, size=n_clusters, replace=False))
        elif isinstance(init, np.ndarray) or init == "k-means++":
            C = _start_rows(X, _seed_indices(rows, n, n_clusters, rng))
        else:
            raise ValueError(f"init={init!r} must be 'k-means++', 'random' or an array.")
        res = _one_start(X, C, algorithm, max_iter)
        results.append(res)
        if best is None or res.inertia < best.inertia:
            best = res
    return results if return_all else best


def _seed_indices(rows, n, n_clusters, rng, n_local_trials=None):
    """The greedy k-means++ draws (first point, then the uniforms of each step: one random
    stream for dense and sparse rows) and the indices of the chosen rows."""
    if n_local_trials is None:
        n_local_trials = 2 + int(math.log(n_clusters))
    first = int(rng.integers(n))
    draws = rng.random((max(int(n_clusters) - 1, 0), int(n_local_trials)))
    return _kmeans_plusplus_indices(rows, first, draws)


def _start_rows(X, idx) -> np.ndarray:
    """Rows ``idx`` as starting centres (ImplicitRows: the rows of E densified, the centres'
    ``c - b``)."""
    if not isinstance(X, ImplicitRows):
        return X[idx]
    out = np.zeros((len(idx), X.shape[1]))
    for r, i in enumerate(idx):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        out[r, X.indices[lo:hi]] = X.data[lo:hi]
    return out


def _single(X) -> KMeansResult:
    """The one-cluster solution (ImplicitRows: the core's means and WCSS)."""
    if not isinstance(X, ImplicitRows):
        return _single_cluster(X)
    labels = np.zeros(X.shape[0], dtype=np.intp)
    Cd, _, total = _stats(X._parts(), labels, 1, X.shape[1])
    return KMeansResult(labels, Cd + X.background, float(total), 0, True)


def _one_start(X, C, algorithm, max_iter) -> KMeansResult:
    """One start of :func:`kmeans` from the centres ``C`` (ImplicitRows: ``c - b``)."""
    if not isinstance(X, ImplicitRows):
        if algorithm == "hartigan":  # Lloyd to its fixed point, then Hartigan–Wong transfers
            return hartigan_wong(X, C, max_iter=max_iter, lloyd_first=True)
        return lloyd(X, C, max_iter=max_iter)
    if C.shape[0] == 1:
        return _single(X)
    if algorithm == "hartigan":
        out = _hartigan_wong_core(X._parts(), C, int(max_iter), int(max_iter),
                                  X.shape[0] // _LLOYD_STOP)
    else:
        out = _lloyd_core(X._parts(), C, int(max_iter))
    labels, Cd, total, n_iter, conv = out
    return KMeansResult(labels.astype(np.intp), Cd + X.background, float(total), int(n_iter),
                        bool(conv))


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
    _, _, total = _stats(X, np.asarray(labels, dtype=np.intp), int(n_clusters), X.shape[1])
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
    C, nc, _ = _stats(X, labels, int(n_clusters), X.shape[1])
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
    r"""The matrix :math:`Z = \mathbf 1 b^\top + E` of shape (n, q), with E a sparse matrix.

    An implicitly centred (and scaled) sparse matrix: row :math:`i` is the dense background
    ``b`` plus the sparse row :math:`e_i`. Never densified: :func:`kmeans` and
    :func:`weighted_columns` (and :func:`sparsefs._kernels.sparse_kmeans.cluster_means`) work
    on it with :math:`O(\mathrm{nnz})` distance passes. Centres are held as
    :math:`D_k = c_k - b` (the mean of the :math:`e_i` of cluster k), so
    :math:`\|z_i - c_k\|^2 = \|D_k\|^2 + \sum_{j:\, e_{ij} \ne 0} e_{ij}(e_{ij} - 2 D_{kj})`.

    A row-access view of the shared centred operator
    (:class:`sparsefs._kernels.centered.CenteredSparse` with :math:`S = E`, :math:`m = -b`):
    the compiled k-means reads its CSR parts (float64 / int64, sorted indices, duplicate
    entries summed).

    Parameters
    ----------
    E : sparse matrix of shape (n, q)
    background : ndarray of shape (q,)
    op : CenteredSparse, optional
        The operator itself (then ``E`` and ``background`` are not given).
    """

    ndim = 2

    def __init__(self, E=None, background=None, *, op: CenteredSparse | None = None):
        if op is None:
            op = CenteredSparse(E, -np.asarray(background, dtype=np.float64))
        self.op = op
        self.data, self.indices, self.indptr = op.csr_parts()
        self.background = np.ascontiguousarray(op.background)
        self.shape = op.shape

    @property
    def E(self):
        """E in CSR."""
        return self.op.csr

    @property
    def size(self) -> int:
        """Stored entries (the work of one pass; used to choose the thread count)."""
        return int(self.data.shape[0])

    @property
    def nnz(self) -> int:
        return int(self.data.shape[0])

    def toarray(self) -> np.ndarray:  # for tests of small matrices only
        return self.op.toarray()

    def columns(self, cols, scale=None) -> ImplicitRows:
        """The columns ``cols`` (optionally each multiplied by ``scale``)."""
        op = self.op[:, cols]
        return ImplicitRows(op=op if scale is None else op * np.asarray(scale))

    def _parts(self):
        return self.data, self.indices, self.indptr


def _check_labels(labels, n_clusters: int, n: int) -> np.ndarray:
    labels = np.asarray(labels, dtype=np.intp)
    if labels.shape != (n,):
        raise ValueError(f"labels of shape {labels.shape} do not match {n} rows.")
    if n and (labels.min() < 0 or labels.max() >= n_clusters):
        raise ValueError(f"labels must be in [0, n_clusters={n_clusters}).")
    return labels


def cluster_sums(X, labels, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """Cluster sizes and row sums of a partition, in one compiled pass (the core's
    :func:`_sums_into`; rows added in order, so the sums have the bits of ``np.add.at`` or of
    the product with the one-hot K x n matrix).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features) or ImplicitRows
        For an :class:`ImplicitRows`, the sums of the rows of its sparse part E.
    labels : ndarray of shape (n_samples,)
        Integer labels in ``0..n_clusters-1``.
    n_clusters : int

    Returns
    -------
    counts : ndarray of shape (n_clusters,), int64
    sums : ndarray of shape (n_clusters, n_features)
    """
    rows = X._parts() if isinstance(X, ImplicitRows) else _as_float_c(X)
    K = int(n_clusters)
    labels = _check_labels(labels, K, X.shape[0])
    S = np.empty((K, X.shape[1]))
    nc = np.empty(K, dtype=np.int64)
    _core(rows).sums_into(rows, labels, S, nc)
    return nc, S


def implicit_cluster_means(X: ImplicitRows, labels, n_clusters):
    """Sizes and ``D_k`` (cluster means minus the background; 0 for an empty cluster)."""
    D = np.empty((int(n_clusters), X.shape[1]))
    nc = np.empty(int(n_clusters), dtype=np.int64)
    _CSR.means_into(X._parts(), np.asarray(labels, dtype=np.intp), D, nc)
    return nc.astype(np.float64), D


# --------------------------------------------------------------------------------------------
# The core's kernels per row type
# --------------------------------------------------------------------------------------------
# The compiled core above is one source for both row types. The CSR rows of an ImplicitRows get
# dispatchers of their own, built from that same source (``_s_<name>``, calling one another), so
# that each dispatcher holds the specialisations of one row type: after a fit on dense data each
# dense kernel holds one (issue #33's first-use record), whatever sparse fits ran before. The
# twins compile the same code as the dense dispatchers would have for CSR rows, and numba's
# cache, keyed by signature, keeps both in the same files.

_CORE = ("_sums_into", "means_into", "_wcss_of", "_fill_empty", "_hw_lloyd", "_hw_transfers",
         "_lloyd_iterations", "_sqdist_to")


def _csr_twins(namespace: dict) -> SimpleNamespace:
    twins = dict(namespace)  # the twins' globals: the core's names are the twins
    for name in _CORE:
        kernel = namespace[name]
        f = kernel.py_func
        twin = FunctionType(f.__code__, twins, "_s_" + name.lstrip("_"), f.__defaults__)
        twins[name] = njit(cache=True, inline=kernel.targetoptions.get("inline", "never"))(twin)
    return SimpleNamespace(**{name.lstrip("_"): twins[name] for name in _CORE})


_DENSE = SimpleNamespace(**{name.lstrip("_"): globals()[name] for name in _CORE})
_CSR = _csr_twins(globals())


def _core(X) -> SimpleNamespace:
    """The core's kernels for X: dense rows, or the CSR tuple of an ImplicitRows."""
    return _CSR if isinstance(X, tuple) else _DENSE
