r"""Kernels of the sparse l1 and l2 center classifiers (Calafiore & Fracastoro, 2022).

Pure array functions (numpy, scipy, numba; never scikit-learn). Notation of the paper and of
``specs/sparse-centers.md``: ``C`` classes of sizes :math:`n_c`, class weights :math:`a_c`
(``1/n_c`` for the paper's class-normalised objective, ``1`` for the pooled one), features ``i``.

Each feature is either *free* (every class has its own center :math:`\theta^c_i`) or *shared*
(one center :math:`\theta_i` for all classes), and at most ``k`` features are free. The objective
separates over features, so the optimal free set is the ``k`` features of largest **gain**

.. math::

    g_i = \min_{\theta} \sum_c a_c \sum_{j \in c} \rho(x_{ji} - \theta)
          - \sum_c \min_{\theta^c} a_c \sum_{j \in c} \rho(x_{ji} - \theta^c) \;\ge 0,

with :math:`\rho(t) = t^2` (l2) or :math:`|t|` (l1): the cost of the shared center minus the cost
of the free class centers (spec 1.4, 1.7, 1.10). For two classes and ``a_c = 1/n_c``,
:math:`g = \delta^2/2` with :math:`\delta = \bar x^+ - \bar x^-` (l2) and :math:`g = -e` with the
paper's gap :math:`e = (d^+ + d^-) - d` (l1, eqs. 17-19).

Kernels
-------
:func:`class_sums`, :func:`l2_centers`
    class means by one product with the (sparse) class-indicator matrix, for dense or
    CSR/CSC input, then the l2 shared center and gains (closed forms).
:func:`l1_centers`
    small classes: class runs sorted by comparator networks on row-major tiles, many features
    per vector instruction (:func:`_l1_rows_chunk`); otherwise class medians on column blocks
    gathered in class order and transposed (each feature's
    values contiguous), each class run sorted (small classes) or partitioned at its middle
    (``np.sort`` / ``np.partition``, numpy's SIMD code), on a thread pool; in the same block a
    compiled (numba) pass per feature finds the weighted median of all samples (the shared
    center) among the few values between the smallest and largest class median, and the exact
    l1 gain terms.
:func:`standard_scale`
    the per-feature units of the standardised classifier (pooled within-class spread plus
    its median, as nearest shrunken centroids).
:func:`weighted_median`, :func:`weighted_median_numpy`
    the weighted median (midpoint of the minimiser set) of one vector: compiled weighted
    quickselect, and the sort-based numpy reference.
:func:`select_top_k`, :func:`rank_fast`
    the exact selection: the ``k`` largest gains, ties to the lower feature index.
:func:`center_scores`
    the decision scores of a set of features (additive over features), dense or sparse.
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from sparsefs._kernels.columns import power_of_two_scale
from sparsefs._kernels.ranking import rank_scores
from sparsefs._kernels.stats import sparse_class_sums
from sparsefs._kernels.threads import run_blocks as _run_blocks  # a shared queue: see threads

try:  # numba is a core dependency; the numpy path keeps the kernels usable without it
    from numba import njit

    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised only where numba is missing
    HAVE_NUMBA = False

    def njit(*args, **kwargs):
        """Stand-in for :func:`numba.njit`: the function runs as plain Python."""
        if args and callable(args[0]):
            return args[0]
        return lambda f: f


__all__ = [
    "HAVE_NUMBA",
    "CenterStats",
    "block_width",
    "center_scores",
    "class_sums",
    "l1_centers",
    "l2_centers",
    "rank_fast",
    "select_top_k",
    "standard_scale",
    "weighted_median",
    "weighted_median_numpy",
]

#: Target size of one l1 column block, in elements (2 MiB of float64: stays in L2/L3).
_BLOCK_ELEMENTS = 1 << 18
#: Minimum l1 block width in columns (>= 512 contiguous bytes per row read by the gather),
#: and blocks per thread (load balance).
_MIN_BLOCK_WIDTH = 63
_BLOCKS_PER_THREAD = 4
#: Classes up to this size are sorted (np.sort is faster than np.partition on short lanes).
_SORT_MAX_CLASS_SIZE = 384
#: Largest total integer weight for exact weighted-median arithmetic (int64 headroom).
_MAX_EXACT_WEIGHT = 1 << 53
#: The rounding slack factor of the l1 gains (8 ulp of the sum of the absolute terms).
_EPS8 = 8 * float(np.finfo(np.float64).eps)
#: Elements per chunk in the decision kernels (bounds the temporaries).
_CHUNK_ELEMENTS = 1 << 21


@dataclass(frozen=True)
class CenterStats:
    """Everything a sparse center classifier needs, for every feature at once.

    Attributes
    ----------
    class_centers : ndarray of shape (n_classes, n_features)
        The free centers: class means (l2) or class medians (l1, midpoint convention).
    shared_center : ndarray of shape (n_features,)
        The shared center: the (weighted) mean of the class means (l2) or the weighted median of
        all samples (l1, midpoint of the minimiser set).
    gains : ndarray of shape (n_features,)
        :math:`g_i \\ge 0`, the decrease of the training objective when feature ``i`` is freed.
    counts : ndarray of shape (n_classes,)
        Class sizes.
    finite : bool
        Whether the statistics are finite. They are not when X holds NaN or infinity (which
        propagate into sums over every entry) or when sums overflow; callers check X then.
    spread : ndarray of shape (n_features,) or None
        Pooled within-class spread of each feature in the norm's own terms: l1, the mean
        absolute deviation from the class medians, sum_c sum_{j in c} |x_j - mu^c| / n; l2,
        the pooled within-class standard deviation, sqrt(within-class sum of squares /
        (n - C)) (``None`` unless asked for). In the units of X.
    unit : float
        The power of two :func:`center_unit` of the centers: the gains are those of
        ``X / unit`` (raw gains divided by ``unit**2`` for l2, by ``unit`` for l1), so they
        neither overflow nor underflow at any scale of X. 1 unless the centers lie beyond
        ``2**±100`` (about 1e±30); dividing by a power of two is exact.
    """

    class_centers: np.ndarray
    shared_center: np.ndarray
    gains: np.ndarray
    counts: np.ndarray
    finite: bool
    spread: np.ndarray | None = None
    unit: float = 1.0


#: Centers of magnitude within ``_UNIT_RANGE`` are used as they are (unit 1): their
#: squares, and those of differences down to 2**-53 of them, are normal float64 numbers.
_UNIT_RANGE = (2.0**-100, 2.0**100)


def center_unit(*arrays: np.ndarray) -> float:
    r"""A power of two ``u`` that brings the largest finite ``|value|`` near 1, or 1.

    ``u = 1`` when that magnitude ``m`` is 0 or lies in :math:`[2^{-100}, 2^{100}]`; else
    :math:`u = 2^e` with :math:`m = f\,2^e`, :math:`f \in [0.5, 1)`. Distances computed on
    ``x / u`` are exact rescalings of the true ones (division by a power of two is exact
    between the float64 limits), so comparisons of distances - the whole decision of a center
    classifier - give the same answer at any scale of X, where squares of ``x`` itself would
    overflow (scale 1e300) or underflow to 0 (scale 1e-300).

    Parameters
    ----------
    *arrays : ndarray

    Returns
    -------
    float
    """
    m = 0.0
    for a in arrays:
        a = np.abs(np.asarray(a, dtype=np.float64))
        a = a[np.isfinite(a)]
        if a.size:
            m = max(m, float(a.max()))
    return _unit_of_magnitude(m)


def _unit_of_magnitude(m: float) -> float:
    """:func:`center_unit` of arrays whose largest finite ``|value|`` is ``m``."""
    return power_of_two_scale(amax=m, safe_range=_UNIT_RANGE, above=True)


def _class_weights(counts: np.ndarray, balanced: bool) -> np.ndarray:
    """``a_c``: ``1/n_c`` for the class-normalised objective, ``1`` for the pooled one."""
    return 1.0 / counts if balanced else np.ones(counts.shape[0])


# --------------------------------------------------------------------------------------------
# l2: class means (one product), shared center and gains (closed forms)
# --------------------------------------------------------------------------------------------


#: Column tile of the dense class-sum kernel (its C x tile accumulator stays in L1/L2).
_SUM_TILE = 512
#: Dense X below this many elements (8 MiB of float64) is summed on one thread. Above it two
#: threads read memory faster than one: on a quiet machine the class sums of a fresh 200 x 20000
#: copy take 2.6 ms on two threads against 3.9 ms on one (the whole fit ~10 % faster); at
#: 20000 x 2000 they save ~30 %. Under load the block queue of ``_run_blocks`` keeps a
#: descheduled thread from stalling the fit.
_SUM_THREADED_MIN = 1 << 20


@njit(nogil=True, cache=True)
def _class_sums_dense(X, y_idx, c0, c1, out):  # pragma: no cover - compiled
    """``out[:, c0:c1] = Y^T X[:, c0:c1]``: column tiles, each row added to its class's
    accumulator (a vectorised loop; per column, rows in order, as the sparse product)."""
    n = X.shape[0]
    n_classes = out.shape[0]
    acc = np.empty((n_classes, _SUM_TILE))
    for t0 in range(c0, c1, _SUM_TILE):
        w = min(_SUM_TILE, c1 - t0)
        acc[:, :w] = 0.0
        for j in range(n):
            a = acc[y_idx[j]]
            x = X[j, t0 : t0 + w]
            for i in range(w):
                a[i] += x[i]
        for c in range(n_classes):
            for i in range(w):
                out[c, t0 + i] = acc[c, i]


@njit(nogil=True, cache=True)
def _l2_finish(means, counts, weight, c0, c1, shared, gains):  # pragma: no cover - compiled
    """In place on columns ``c0:c1``: sums -> means, the weighted mean of the class means
    (shared center) and the gains sum_c weight_c (mean_c - shared)^2, in one pass."""
    n_classes = means.shape[0]
    wsum = 0.0
    for c in range(n_classes):
        wsum += weight[c]
    for i in range(c0, c1):
        m = 0.0
        for c in range(n_classes):
            v = means[c, i] / counts[c]
            means[c, i] = v
            m += weight[c] * v
        m /= wsum
        g = 0.0
        for c in range(n_classes):
            d = means[c, i] - m
            g += weight[c] * (d * d)
        shared[i] = m
        gains[i] = g


def class_sums(X, y_idx: np.ndarray, n_classes: int, n_threads: int = 1) -> np.ndarray:
    """Per-class column sums ``Y^T X`` (float64), ``Y`` the n x C class-indicator matrix.

    One pass over X. Dense C-ordered X (float64 or float32): a compiled loop over column
    tiles that adds each row to its class's accumulator, on ``n_threads`` threads over column
    blocks (the same sums whatever the thread count: each column is summed in row order).
    Sparse X (CSR/CSC, never densified, never upcast):
    :func:`sparsefs._kernels.stats.sparse_class_sums`, one compiled pass over the stored values
    in their own format. Other dense layouts: one product of the sparse indicator with X.
    Not a dense BLAS GEMM: for this C-row product OpenBLAS splits the work over threads that
    wait for each other, and on a shared machine one descheduled thread stalls the others
    (measured 10-100x slower under load; at best ~15 % faster). float32 X is summed in
    float64 (exact sums).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    y_idx : ndarray of shape (n_samples,)
        Class indices in ``0..n_classes-1``.
    n_classes : int
    n_threads : int, default=1
        Threads for dense X of at least 2**20 (~1.05e6) entries.

    Returns
    -------
    sums : ndarray of shape (n_classes, n_features)
    """
    n = y_idx.shape[0]
    dense_ok = (
        HAVE_NUMBA
        and isinstance(X, np.ndarray)
        and X.ndim == 2
        and X.dtype in (np.float64, np.float32)
        and X.flags.c_contiguous
    )
    if dense_ok:
        p = X.shape[1]
        out = np.empty((n_classes, p))
        labels = np.ascontiguousarray(y_idx, dtype=np.intp)
        # several blocks per thread: a descheduled thread holds up only a small one
        n_blocks = 4 * n_threads if X.size >= _SUM_THREADED_MIN and n_threads > 1 else 1
        n_blocks = max(1, min(n_blocks, p // _SUM_TILE))
        # block edges on tile boundaries
        tiles = -(-p // _SUM_TILE)
        edges = [
            (min(p, (b * tiles // n_blocks) * _SUM_TILE),
             min(p, ((b + 1) * tiles // n_blocks) * _SUM_TILE))
            for b in range(n_blocks)
        ]
        with np.errstate(invalid="ignore", over="ignore"):  # non-finite X: flagged by caller
            _run_blocks(lambda c0, c1: _class_sums_dense(X, labels, c0, c1, out), edges,
                        n_blocks)
        return out
    if sp.issparse(X):  # one compiled pass over the stored values, no copy or upcast of X
        with np.errstate(invalid="ignore", over="ignore"):  # non-finite X: flagged by caller
            return sparse_class_sums(X, y_idx, n_classes)[0]
    Yt = sp.csr_array((np.ones(n), (y_idx, np.arange(n))), shape=(n_classes, n))
    if X.dtype != np.float64:
        X = X.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):  # non-finite X: flagged by the caller
        out = Yt @ X
    return np.asarray(out.toarray() if sp.issparse(out) else out, dtype=np.float64)


def l2_centers(
    X, y_idx: np.ndarray, n_classes: int, *, balanced: bool = True, spread: bool = False,
    n_threads: int = 1,
) -> CenterStats:
    r"""Class means, shared center and gains of the sparse l2 center problem.

    Class-normalised objective (``balanced=True``, the paper's problem (8) and its multiclass
    extension, spec 1.4 and 1.10): :math:`\sum_c \frac{1}{n_c}\sum_{j\in c}\|x_j-\theta^c\|^2`.
    A shared feature's best center is the unweighted mean of the class means
    :math:`\bar m_i = \frac1C\sum_c \bar x^c_i` (the midpoint for two classes, eq. 11) and the
    gain of freeing it is :math:`g_i = \sum_c (\bar x^c_i - \bar m_i)^2` (:math:`\delta_i^2/2`
    for two classes).

    Pooled objective (``balanced=False``): :math:`\sum_j \|x_j - \theta^{y_j}\|^2`; the shared
    center is the overall mean :math:`\bar x_i` and the gain the between-class sum of squares
    :math:`\sum_c n_c (\bar x^c_i - \bar x_i)^2`.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    y_idx : ndarray of shape (n_samples,)
        Class indices ``0..n_classes-1``; every class non-empty.
    n_classes : int
    balanced : bool, default=True
    spread : bool, default=False
        Also compute the pooled within-class standard deviation (a second pass over X:
        residuals for dense X, the moment identity for sparse X).
    n_threads : int, default=1
        Threads for the class sums of large dense X (:func:`class_sums`).

    Returns
    -------
    CenterStats
    """
    counts = np.bincount(y_idx, minlength=n_classes).astype(np.float64)
    sq_total = None
    if sp.issparse(X) and spread:  # the sums of squares come with the sums, in the same pass
        with np.errstate(invalid="ignore", over="ignore"):  # non-finite X: flagged by caller
            sums, sq_total = sparse_class_sums(X, y_idx, n_classes)
    else:
        sums = class_sums(X, y_idx, n_classes, n_threads)
    weight = np.ones(n_classes) if balanced else counts
    with np.errstate(over="ignore", invalid="ignore"):
        # the gains are those of X / unit (an exact power-of-two rescaling): no overflow of
        # the squares at X ~ 1e300, no underflow to 0 at X ~ 1e-300
        unit = center_unit(sums / counts[:, None])
        if unit != 1.0:
            sums /= unit
    if HAVE_NUMBA:  # one compiled pass over the C x p sums
        means = sums
        p = means.shape[1]
        shared, gains = np.empty(p), np.empty(p)
        with np.errstate(over="ignore", invalid="ignore"):
            _l2_finish(means, counts, weight, 0, p, shared, gains)
    else:  # pragma: no cover - numpy fallback
        means = sums / counts[:, None]
        with np.errstate(over="ignore", invalid="ignore"):  # huge values: gains may be +inf
            shared = weight @ means / weight.sum()
            gains = np.zeros(means.shape[1])
            dev = np.empty(means.shape[1])
            for c in range(n_classes):  # sum_c w_c (mean_c - shared)^2, no C x p temporary
                np.subtract(means[c], shared, out=dev)
                dev *= dev
                if not balanced:
                    dev *= weight[c]
                gains += dev
    finite = bool(np.isfinite(means).all())
    sd = _pooled_sd(X, y_idx, means, counts, unit, sq_total) if spread and finite else None
    if unit != 1.0:
        means *= unit
        shared *= unit
    return CenterStats(means, shared, gains, counts, finite, sd, unit)


def _pooled_sd(X, y_idx, means, counts, unit: float = 1.0,
               sq_total: np.ndarray | None = None) -> np.ndarray:
    """sqrt(within-class sum of squares / (n - C)); 0 when n == C.

    ``means`` are the class means of ``X / unit``; the result is in the units of X. Sparse X:
    the moment identity from ``sq_total``, the column sums of squares of X if the caller has
    them (:func:`~sparsefs._kernels.stats.sparse_class_sums`; used when ``unit`` is 1 and they
    are finite), else from a rescaled copy of the stored values (never densified)."""
    n, p = X.shape
    dof = n - counts.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):
        if sp.issparse(X) and unit == 1.0 and sq_total is not None and np.isfinite(
                sq_total).all():
            within = np.maximum(sq_total - counts @ (means * means), 0.0)
        elif sp.issparse(X):
            Xc = sp.csr_array(X)
            if unit != 1.0:  # a rescaled copy of the stored values only, never densified
                Xc = sp.csr_array((Xc.data / unit, Xc.indices, Xc.indptr), shape=Xc.shape)
            sq = np.asarray(Xc.multiply(Xc).sum(axis=0), dtype=np.float64).ravel()
            within = np.maximum(sq - counts @ (means * means), 0.0)
        else:
            within = np.zeros(p)
            step = max(1, _CHUNK_ELEMENTS // max(1, p))
            for start in range(0, n, step):
                rows = np.asarray(X[start : start + step], dtype=np.float64)
                if unit != 1.0:
                    rows = rows / unit
                rows = rows - means[y_idx[start : start + step]]
                within += np.einsum("ij,ij->j", rows, rows)
    sd = np.sqrt(within / dof) if dof > 0 else np.zeros(p)
    return sd * unit if unit != 1.0 else sd


def standard_scale(spread: np.ndarray) -> np.ndarray:
    r"""Per-feature scale :math:`s_i + s_0`, :math:`s_0 = \mathrm{median}(s)` (the offset of nearest
    shrunken centroids, Tibshirani et al. 2002): features with no within-class spread are not
    divided by ~0. Scales that are still 0 (most features constant within classes) become 1."""
    scale = spread + np.median(spread)
    scale[~(scale > 0)] = 1.0
    return scale


# --------------------------------------------------------------------------------------------
# l1: class medians (numpy partition) + weighted median and gains (numba), on column blocks
# --------------------------------------------------------------------------------------------


@njit(nogil=True, cache=True)
def _weighted_select(v, lab, wlab, m, offset, total):  # pragma: no cover - compiled
    """Lower weighted median of ``v[:m]`` by weighted quickselect (3-way partition).

    ``v[k]`` has weight ``wlab[lab[k]]``; ``offset`` is weight known to lie below every value
    and ``total`` the total weight. Returns ``(value, weight <= value incl. offset)`` for the
    smallest value whose cumulative weight reaches half the total: ``2 * cum >= total``.
    ``v`` and ``lab`` are reordered. Returns ``(nan, 0)`` on an empty range (NaN input).
    """
    lo = 0
    hi = m
    acc = offset
    while lo < hi:
        a = v[lo]
        b = v[(lo + hi - 1) // 2]
        d = v[hi - 1]
        if a > b:
            a, b = b, a
        if b > d:
            b = d
            if a > b:
                b = a
        pivot = b
        lt = lo
        i = lo
        gt = hi
        w_less = wlab[lab[lo]] * 0
        w_equal = w_less
        while i < gt:
            x = v[i]
            if x < pivot:
                w_less += wlab[lab[i]]
                v[i] = v[lt]
                v[lt] = x
                t = lab[i]
                lab[i] = lab[lt]
                lab[lt] = t
                lt += 1
                i += 1
            elif x > pivot:
                gt -= 1
                v[i] = v[gt]
                v[gt] = x
                t = lab[i]
                lab[i] = lab[gt]
                lab[gt] = t
            else:
                w_equal += wlab[lab[i]]
                i += 1
        if 2 * (acc + w_less) >= total:
            hi = lt
        elif 2 * (acc + w_less + w_equal) >= total:
            return pivot, acc + w_less + w_equal
        else:
            acc += w_less + w_equal
            lo = gt
    return np.nan, acc * 0


@njit(nogil=True, cache=True)
def _midpoint_median(v, lab, wlab, m, offset, total):  # pragma: no cover - compiled
    """Midpoint of the weighted-median interval of ``v[:m]`` (see :func:`_weighted_select`)."""
    low, cum = _weighted_select(v, lab, wlab, m, offset, total)
    if 2 * cum != total:
        return low
    # The minimiser set is [low, next value above low]: both ends are data values.
    up = np.inf
    for k in range(m):
        if v[k] > low and v[k] < up:
            up = v[k]
    if up == np.inf:
        return low
    return (low + up) / 2


#: Column blocks at least this wide are gathered by :func:`_gather_transposed_wide` (row
#: copy, then an in-cache transpose); narrower ones by the tiled :func:`_gather_transposed`.
_WIDE_GATHER_MIN = 256


@njit(nogil=True, cache=True)
def _gather_transposed(X, order, c0, out):  # pragma: no cover - compiled
    """``out[i, d] = X[order[d], c0 + i]`` as float64: one column block, samples in class
    order, transposed (each feature's values contiguous). Tiles of 8 samples: 8 row segments
    are read while 8-value runs of every output row are written."""
    w, n = out.shape
    for d0 in range(0, n, 8):
        d1 = min(n, d0 + 8)
        for i in range(w):
            for d in range(d0, d1):
                out[i, d] = X[order[d], c0 + i]


@njit(nogil=True, cache=True)
def _gather_transposed_wide(X, order, c0, rows, out):  # pragma: no cover - compiled
    """:func:`_gather_transposed` in two passes, for wide blocks (few samples, many columns).

    The row segments are copied in class order into ``rows`` (n x w: long contiguous reads of
    X, which is usually cold in DRAM), then ``rows`` is transposed while it is still in cache,
    writing each output row contiguously. One thread, with the sorts and the per-feature pass
    between blocks: 8.3 ms against 12.4 ms for the tiled gather at 200 x 20000 (blocks of 1309
    columns), but 10-15 % slower at 20000 x 2000 (blocks of 63 columns, 504-byte segments),
    hence :data:`_WIDE_GATHER_MIN`.
    """
    w, n = out.shape
    for d in range(n):
        r = order[d]
        for i in range(w):
            rows[d, i] = X[r, c0 + i]
    for i in range(w):
        for d in range(n):
            out[i, d] = rows[d, i]


@njit(nogil=True, cache=True)
def _abs_dev_sum(col, s, e, m):  # pragma: no cover - compiled
    """``sum(|col[s:e] - m|)`` with four accumulators (not latency-bound)."""
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    j = s
    while j + 4 <= e:
        a0 += abs(col[j] - m)
        a1 += abs(col[j + 1] - m)
        a2 += abs(col[j + 2] - m)
        a3 += abs(col[j + 3] - m)
        j += 4
    while j < e:
        a0 += abs(col[j] - m)
        j += 1
    return (a0 + a1) + (a2 + a3)


@njit(nogil=True, cache=True)
def _l1_columns_numba(T, bounds, wint, total, sorted_runs, med, mu, dev, corr, iwork, v, lab):
    """Class medians, shared weighted median, dispersions and gain terms of a block.

    ``T`` (w x n): one row per feature, samples in class order; each class segment
    ``bounds[c]:bounds[c+1]`` is sorted (``sorted_runs``) or partitioned at its middle index
    ``n_c // 2`` (larger classes, where ``np.partition`` beats ``np.sort``). Per feature:

    * class median :math:`\\mu^c` (midpoint of the two middle values for even sizes) and raw
      dispersion ``dev[c]`` :math:`= \\sum_{j \\in c}|x_j - \\mu^c|`;
    * shared center :math:`\\mu`: every minimiser of :math:`\\sum_j w_j|x_j - \\theta|` lies
      between the smallest lower and the largest upper class median (outside, every class has
      more than half of its weight on one side), so only the values in that window are
      searched, starting from the weight below it: by merging the sorted runs, or by weighted
      quickselect on the window values (exact integer weights; the midpoint when the
      cumulative weight hits exactly half);
    * ``corr[c]`` :math:`= \\sum_{j \\in c}(|x_j - \\mu| - |x_j - \\mu^c|)`, exactly: a value
      outside the window contributes :math:`\\pm(\\mu - \\mu^c)`, one inside is computed - no
      cancellation, and 0 when the two centers coincide. The gain is
      :math:`\\sum_c a_c\\,` ``corr[c]``.

    Work space: ``iwork`` int64 (3, C); ``v`` float64 and ``lab`` int64 of length n.
    """
    w = T.shape[0]
    C = wint.shape[0]
    start = iwork[0]
    ptr = iwork[1]
    stop = iwork[2]
    for i in range(w):
        col = T[i]
        lo = np.inf
        hi = -np.inf
        for c in range(C):
            s = bounds[c]
            nc = bounds[c + 1] - s
            upper = col[s + nc // 2]
            if nc % 2 == 1:
                lower = upper
            elif sorted_runs:
                lower = col[s + nc // 2 - 1]
            else:
                lower = col[s]
                for j in range(s + 1, s + nc // 2):
                    lower = max(lower, col[j])
            m = upper if nc % 2 == 1 else (lower + upper) / 2
            med[c, i] = m
            lo = min(lo, lower)
            hi = max(hi, upper)
            dev[c, i] = _abs_dev_sum(col, s, bounds[c + 1], m)
        cum = wint[0] * 0
        if sorted_runs:
            for c in range(C):  # the window [lo, hi] of each sorted run: binary search
                s = bounds[c]
                a = s
                b = bounds[c + 1]
                while a < b:
                    h = (a + b) // 2
                    if col[h] < lo:
                        a = h + 1
                    else:
                        b = h
                start[c] = a
                ptr[c] = a
                cum += (a - s) * wint[c]
                b = bounds[c + 1]
                while a < b:
                    h = (a + b) // 2
                    if col[h] <= hi:
                        a = h + 1
                    else:
                        b = h
                stop[c] = a
            low = np.nan
            while True:  # merge the runs upwards until half the weight is reached
                x = np.inf
                for c in range(C):
                    if ptr[c] < stop[c] and col[ptr[c]] < x:
                        x = col[ptr[c]]
                if x == np.inf:
                    break
                for c in range(C):
                    while ptr[c] < stop[c] and col[ptr[c]] == x:
                        cum += wint[c]
                        ptr[c] += 1
                if 2 * cum >= total:
                    low = x
                    break
            centre = low
            if 2 * cum == total:  # the minimisers form [low, next value]: the midpoint
                up = np.inf
                for c in range(C):
                    if ptr[c] < stop[c] and col[ptr[c]] < up:
                        up = col[ptr[c]]
                if up < np.inf:
                    centre = (low + up) / 2
            for c in range(C):
                s = bounds[c]
                m = med[c, i]
                acc = ((start[c] - s) - (bounds[c + 1] - stop[c])) * (centre - m)
                for j in range(start[c], stop[c]):
                    acc += abs(col[j] - centre) - abs(col[j] - m)
                corr[c, i] = acc
        else:
            nv = 0
            for c in range(C):  # count below / above the window, compact the values inside
                below = 0
                above = 0
                for j in range(bounds[c], bounds[c + 1]):
                    x = col[j]
                    below += np.int64(x < lo)
                    above += np.int64(x > hi)
                    v[nv] = x
                    lab[nv] = c
                    nv += np.int64((x >= lo) & (x <= hi))
                start[c] = below
                stop[c] = above
                cum += below * wint[c]
            centre = _midpoint_median(v, lab, wint, nv, cum, total)
            for c in range(C):
                corr[c, i] = (start[c] - stop[c]) * (centre - med[c, i])
            for k in range(nv):
                c = lab[k]
                corr[c, i] += abs(v[k] - centre) - abs(v[k] - med[c, i])
        mu[i] = centre


#: When no class has more than this many samples, the classes are sorted by comparator
#: networks applied to row-major tiles, many features at once (:func:`_l1_rows_chunk`); else
#: the transposed path (numpy's SIMD sort or partition per feature) runs. Measured (1 thread,
#: 3 classes, ~4e6 values): the networks are 1.5x faster at 20-40 samples per class, 1.27x at
#: 67, even at ~90, slower above (their comparator count grows as n log^2 n).
_NETWORK_MAX_CLASS_SIZE = 90
#: Feature columns per tile of :func:`_l1_rows_chunk` (each comparator is one vectorised pass
#: over a tile row; a 67-sample class of a 64-column tile is 34 KiB and stays in L1).
_NETWORK_TILE = 64


@functools.lru_cache(maxsize=64)
def _merge_exchange_pairs(n: int) -> np.ndarray:
    r"""Comparator pairs ``(i, j)``, ``i < j``, of Batcher's merge-exchange sorting network for
    ``n`` inputs (Knuth, TAOCP vol. 3, 5.2.2, Algorithm M; any ``n``, not only powers of two).

    Applying ``(v[i], v[j]) <- (min, max)`` for every pair in order sorts ``v``:
    :math:`\approx \frac{n}{4}\lceil\log_2 n\rceil(\lceil\log_2 n\rceil + 1)` comparators
    (600 for n = 67). The network is data-independent, so one pass sorts many columns at once
    with vector instructions."""
    pairs: list[tuple[int, int]] = []
    if n >= 2:
        t = (n - 1).bit_length()
        p = 1 << (t - 1)
        while p > 0:
            q, r, d = 1 << (t - 1), 0, p
            while True:
                pairs.extend((i, i + d) for i in range(n - d) if i & p == r)
                if q == p:
                    break
                d, q, r = q - p, q >> 1, p
            p >>= 1
    out = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    out.setflags(write=False)
    return out


@njit(nogil=True, cache=True)
def _l1_rows_chunk(X, order, c0, c1, tile, bounds, pairs, pair_ptr, wint, total, R, lohi,
                   acc, cnt, iwork, med, mu, dev, corr, weight, gains, spread, ok, maxabs,
                   stages=5):  # pragma: no cover - compiled
    """The statistics of :func:`_l1_columns_numba` (sorted runs) for columns ``c0:c1`` of
    dense ``X``, computed on row-major tiles, ``tile`` features at a time.

    The rows of the chunk are first copied in class order into ``R`` (n x (c1 - c0), float64:
    long contiguous reads of X, which is usually cold in DRAM). Then, per tile of ``tile``
    columns: each class run is sorted column-wise by its merge-exchange network
    (``pairs[pair_ptr[c]:pair_ptr[c + 1]]``; each comparator is a min/max over a tile row, so
    every feature of the tile is sorted at once); the class medians, the window ``[lo, hi]``
    (smallest lower, largest upper class median), the dispersions (four accumulators, as
    :func:`_abs_dev_sum`) and each run's counts below ``lo`` and up to ``hi`` are computed
    row by row over the tile. Only the search for the shared weighted median (a merge of the
    window parts of the sorted runs) and the gain terms over the window values run per
    feature. Every value, and the order of every sum, is that of :func:`_l1_columns_numba` on
    the same sorted runs, so the results are the same bit for bit. Writes columns ``c0:c1``
    of ``med``, ``mu``, ``dev`` and ``corr``, then of ``gains``, ``spread``, ``ok`` and
    ``maxabs`` (:func:`_l1_finish_columns`, class weights ``weight``).

    ``stages`` < 5 stops each tile early, for profiling (benchmarks/bench_l1_medians.py): 1
    gather only, 2 + sort, 3 + medians, 4 + dispersions and counts (outputs incomplete).

    Work space: ``R`` float64 (n, >= c1 - c0); ``lohi`` (2, tile), ``acc`` (4, tile)
    float64; ``cnt`` (2 C, tile) and ``iwork`` (3, C) int64.
    """
    n = order.shape[0]
    C = wint.shape[0]
    lo = lohi[0]
    hi = lohi[1]
    start = iwork[0]
    ptr = iwork[1]
    stop = iwork[2]
    wc = c1 - c0
    for d in range(n):  # gather: samples in class order
        src = X[order[d]]
        row = R[d]
        for i in range(wc):
            row[i] = src[c0 + i]
    for o in range(0, wc, tile):
        w = min(tile, wc - o)
        if stages < 2:
            continue
        for c in range(C):  # sort every column of each class run: the network, row-wise
            s = bounds[c]
            for k in range(pair_ptr[c], pair_ptr[c + 1]):
                ri = R[s + pairs[k, 0], o : o + w]
                rj = R[s + pairs[k, 1], o : o + w]
                for i in range(w):
                    a = ri[i]
                    b = rj[i]
                    ri[i] = a if a < b else b
                    rj[i] = b if a < b else a
        if stages < 3:
            continue
        for i in range(w):
            lo[i] = np.inf
            hi[i] = -np.inf
        for c in range(C):  # class medians and the window [lo, hi]
            s = bounds[c]
            nc = bounds[c + 1] - s
            r_up = R[s + nc // 2, o : o + w]
            if nc % 2 == 1:
                for i in range(w):
                    med[c, c0 + o + i] = r_up[i]
                    lo[i] = min(lo[i], r_up[i])
                    hi[i] = max(hi[i], r_up[i])
            else:
                r_low = R[s + nc // 2 - 1, o : o + w]
                for i in range(w):
                    med[c, c0 + o + i] = (r_low[i] + r_up[i]) / 2
                    lo[i] = min(lo[i], r_low[i])
                    hi[i] = max(hi[i], r_up[i])
        if stages < 4:
            continue
        for c in range(C):  # dispersions and the counts below lo / up to hi, row by row
            s = bounds[c]
            e = bounds[c + 1]
            m = med[c, c0 + o : c0 + o + w]
            below = cnt[2 * c]
            upto = cnt[2 * c + 1]
            for i in range(w):
                acc[0, i] = 0.0
                acc[1, i] = 0.0
                acc[2, i] = 0.0
                acc[3, i] = 0.0
                below[i] = 0
                upto[i] = 0
            quads = s + 4 * ((e - s) // 4)
            mid = s + (e - s) // 2
            # lo <= the run's lower median: only its lower half can lie below lo; hi >= its
            # upper median: the lower half and the middle lie up to hi
            for j in range(s, mid):
                row = R[j, o : o + w]
                a_row = acc[(j - s) % 4] if j < quads else acc[0]
                for i in range(w):
                    x = row[i]
                    a_row[i] += abs(x - m[i])
                    below[i] += np.int64(x < lo[i])
            for i in range(w):
                upto[i] = mid - s
            for j in range(mid, e):
                row = R[j, o : o + w]
                a_row = acc[(j - s) % 4] if j < quads else acc[0]
                for i in range(w):
                    x = row[i]
                    a_row[i] += abs(x - m[i])
                    upto[i] += np.int64(x <= hi[i])
            for i in range(w):
                dev[c, c0 + o + i] = (acc[0, i] + acc[1, i]) + (acc[2, i] + acc[3, i])
        if stages < 5:
            continue
        for i in range(w):  # the shared weighted median and the gain terms, per feature
            cum = wint[0] * 0
            for c in range(C):
                s = bounds[c]
                start[c] = s + cnt[2 * c, i]
                ptr[c] = start[c]
                stop[c] = s + cnt[2 * c + 1, i]
                cum += cnt[2 * c, i] * wint[c]
            low = np.nan
            while True:  # merge the window parts of the runs until half the weight
                x = np.inf
                for c in range(C):  # smallest head (selects: 2-5 % faster than branches)
                    h = R[min(ptr[c], n - 1), o + i]
                    x = h if (ptr[c] < stop[c]) & (h < x) else x  # NaN never taken
                if x == np.inf:
                    break
                for c in range(C):  # take it from the run(s) holding it
                    take = (ptr[c] < stop[c]) and (R[min(ptr[c], n - 1), o + i] == x)
                    cum += wint[c] * np.int64(take)
                    ptr[c] += np.int64(take)
                if 2 * cum >= total:
                    for c in range(C):  # every other copy of x counts below the centre
                        while ptr[c] < stop[c] and R[ptr[c], o + i] == x:
                            cum += wint[c]
                            ptr[c] += 1
                    low = x
                    break
            centre = low
            if 2 * cum == total:  # the minimisers form [low, next value]: the midpoint
                up_ = np.inf
                for c in range(C):
                    if ptr[c] < stop[c] and R[ptr[c], o + i] < up_:
                        up_ = R[ptr[c], o + i]
                if up_ < np.inf:
                    centre = (low + up_) / 2
            for c in range(C):
                s = bounds[c]
                m_ = med[c, c0 + o + i]
                a_ = ((start[c] - s) - (bounds[c + 1] - stop[c])) * (centre - m_)
                for j in range(start[c], stop[c]):
                    a_ += abs(R[j, o + i] - centre) - abs(R[j, o + i] - m_)
                corr[c, c0 + o + i] = a_
            mu[c0 + o + i] = centre
    if stages >= 5:
        _l1_finish_columns(med, mu, dev, corr, weight, n, c0, c1, gains, spread, ok, maxabs)


@njit(nogil=True, cache=True)
def _l1_finish_columns(med, mu, dev, corr, weight, n, c0, c1, gains, spread, ok,
                       maxabs):  # pragma: no cover - compiled
    r"""Columns ``c0:c1`` of what :func:`_l1_finish` computes with numpy, with the same
    operations in the same order (so the same values bit for bit): the gains
    :math:`\sum_c a_c\,` ``corr[c]`` snapped to 0 below the rounding slack, the spread
    :math:`\sum_c` ``dev[c]`` / n, whether the column's terms are finite (``ok``) and the
    largest finite ``|center|`` (``maxabs``, for :func:`center_unit`)."""
    C = weight.shape[0]
    eps8 = _EPS8
    for f in range(c0, c1):
        t = weight[0] * corr[0, f]
        g = t
        mag = abs(t)
        sp_ = dev[0, f]
        good = math.isfinite(dev[0, f]) and math.isfinite(corr[0, f])
        for c in range(1, C):
            t = weight[c] * corr[c, f]
            g += t
            mag += abs(t)
            sp_ += dev[c, f]
            good = good and math.isfinite(dev[c, f]) and math.isfinite(corr[c, f])
        if g <= eps8 * mag:
            g = 0.0
        gains[f] = g
        spread[f] = sp_ / n
        ok[f] = good
        m = abs(mu[f]) if math.isfinite(mu[f]) else 0.0
        for c in range(C):
            v = abs(med[c, f])
            if math.isfinite(v) and v > m:
                m = v
        maxabs[f] = m


def _l1_columns_numpy(T, bounds, wint, total, sorted_runs, med, mu, dev, corr, iwork=None,
                      v=None, lab=None):
    """Reference (and numba-free) version of :func:`_l1_columns_numba`: sort-based numpy."""
    w, n = T.shape
    C = wint.shape[0]
    for c in range(C):
        seg = T[:, bounds[c] : bounds[c + 1]]
        nc = seg.shape[1]
        upper = seg[:, nc // 2]
        lower = upper if nc % 2 else seg[:, : nc // 2].max(axis=1)
        med[c] = upper if nc % 2 else (lower + upper) / 2
    row_w = np.repeat(wint, np.diff(bounds))
    order = np.argsort(T, axis=1, kind="stable")
    vs = np.take_along_axis(T, order, axis=1)
    cum = np.cumsum(row_w[order], axis=1)
    k = np.argmax(2 * cum >= total, axis=1)
    rows = np.arange(w)
    low = vs[rows, k]
    exact = 2 * cum[rows, k] == total
    up = vs[rows, np.minimum(k + 1, n - 1)]
    centre = np.where(exact & (k + 1 < n), (low + up) / 2, low)
    mu[:] = centre
    with np.errstate(invalid="ignore", over="ignore"):
        for c in range(C):
            seg = T[:, bounds[c] : bounds[c + 1]]
            dev[c] = np.abs(seg - med[c][:, None]).sum(axis=1)
            corr[c] = (np.abs(seg - centre[:, None]) - np.abs(seg - med[c][:, None])).sum(axis=1)


def block_width(n_samples: int, n_features: int, n_threads: int) -> int:
    """Column-block width of the l1 kernel: about 2 MiB per block, enough blocks per thread.

    At least 63 columns, so that gathering a block in class order reads runs of >= 504
    contiguous bytes of each sample's row; never a power of two (performance-notes section 2:
    power-of-two widths alias in the cache). Memory per thread: ``n_samples * width`` floats,
    twice that for dense blocks of at least ``_WIDE_GATHER_MIN`` columns (their row copy).
    """
    width = max(_MIN_BLOCK_WIDTH, _BLOCK_ELEMENTS // max(1, n_samples))
    balance = -(-n_features // (_BLOCKS_PER_THREAD * max(1, n_threads)))
    width = max(1, min(width, balance, n_features))
    if width % 2 == 0:
        width = width - 1 if width > 1 else 1
    return width


def _integer_weights(counts: np.ndarray, balanced: bool) -> tuple[np.ndarray, int]:
    """Integer sample weights per class, proportional to ``a_c``, and their total.

    Balanced: ``L / n_c`` with ``L = lcm(n_c)``, exact when the total fits in 53 bits;
    otherwise ``round(2**40 / n_c)`` (relative weight error below 1e-12, documented in
    :func:`l1_centers`). Pooled: 1.
    """
    counts_int = [int(c) for c in counts]
    if not balanced:
        return np.ones(len(counts_int), dtype=np.int64), int(sum(counts_int))
    lcm = math.lcm(*counts_int)
    if lcm * len(counts_int) <= _MAX_EXACT_WEIGHT:
        wint = np.array([lcm // c for c in counts_int], dtype=np.int64)
    else:
        wint = np.array([round(2.0**40 / c) for c in counts_int], dtype=np.int64)
    return wint, int((wint * np.asarray(counts_int)).sum())


def l1_centers(
    X,
    y_idx: np.ndarray,
    n_classes: int,
    *,
    balanced: bool = True,
    n_threads: int = 1,
    width: int | None = None,
    engine: str = "auto",
) -> CenterStats:
    r"""Class medians, shared weighted median and gains of the sparse l1 center problem.

    Class-normalised objective (``balanced=True``, the paper's problem (10) and spec 1.10):
    :math:`\sum_c \frac{1}{n_c}\sum_{j\in c}\|x_j-\theta^c\|_1`. Free feature: the class medians
    :math:`\mu^c_i` with dispersions :math:`d^c_i = \frac{1}{n_c}\sum_{j\in c}|x_{ji}-\mu^c_i|`
    (eq. 18). Shared feature: the weighted median :math:`\mu_i` of all samples with weights
    :math:`1/n_{y_j}` and cost :math:`d_i = \sum_j |x_{ji}-\mu_i|/n_{y_j}` (eq. 19). Gain
    :math:`g_i = d_i - \sum_c d^c_i \ge 0` (the paper's :math:`-e_i` for two classes). Pooled
    objective (``balanced=False``): unit weights, the plain overall median, no ``1/n_c``.

    Medians follow the midpoint convention (spec 1.6, 1.8.3): when the minimiser set is an
    interval, its midpoint; for unit weights this is ``np.median``. The weighted-median
    arithmetic is exact (integer weights ``lcm(n_c)/n_c``) unless that lcm times ``C`` exceeds
    2**53; then weights are rounded to a relative 1e-12 (only the choice of center inside a
    near-tied interval can change; the gain is unaffected).

    Algorithm, small classes (dense C-ordered X, no class above ``_NETWORK_MAX_CLASS_SIZE`` =
    90 samples; :func:`_l1_rows_chunk`): per column chunk the rows are copied in class order,
    then every class run of a 64-column tile is sorted column-wise by Batcher's merge-exchange
    network (each comparator a vectorised min/max of two tile rows); medians, dispersions and
    the window counts are computed row-wise over the tile, the weighted median and the gain
    terms per feature, exactly as below (the same values bit for bit).

    Algorithm, larger classes (performance-notes sections 2 and 10): one column block at a
    time (at least 63 columns, ~2 MiB; memory is a few blocks per thread, whatever p), the rows
    are gathered in class order and transposed by a compiled tiled copy, so each feature's
    values are contiguous; each class run is sorted (classes of at most 384 samples: numpy's
    SIMD sort beats partition on short runs) or partitioned at its middle (larger classes). One
    compiled pass per feature then gives the medians, the dispersions, and the weighted median,
    found only among the values between the smallest and the largest class median (by merging
    the sorted runs, or by weighted quickselect), and the exact gain terms. Blocks run on a
    thread pool (numpy and the compiled code release the GIL). Sparse X is reordered and
    transposed to CSR once and densified one block at a time (implicit zeros count as values).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    y_idx : ndarray of shape (n_samples,)
    n_classes : int
    balanced : bool, default=True
    n_threads : int, default=1
        Threads over column blocks.
    width : int, optional
        Column-block width; default :func:`block_width`.
    engine : {"auto", "numba", "numpy"}, default="auto"
        ``"numpy"`` uses the sort-based reference for the shared center (slower; it is what
        runs when numba is not installed).

    Returns
    -------
    CenterStats
    """
    if engine not in ("auto", "numba", "numpy"):
        raise ValueError(f"engine={engine!r} is not one of 'auto', 'numba', 'numpy'.")
    use_numba = engine == "numba" or (engine == "auto" and HAVE_NUMBA)
    block_kernel = _l1_columns_numba if use_numba else _l1_columns_numpy
    n, p = X.shape
    y_idx = np.asarray(y_idx, dtype=np.intp)
    counts = np.bincount(y_idx, minlength=n_classes)
    order = np.argsort(y_idx, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    wint, total = _integer_weights(counts, balanced)
    n_threads = max(1, int(n_threads))
    width = block_width(n, p, n_threads) if width is None else int(width)
    edges = [(c0, min(p, c0 + width)) for c0 in range(0, p, width)]

    medians = np.empty((n_classes, p))
    shared = np.empty(p)
    dev = np.empty((n_classes, p))
    corr = np.empty((n_classes, p))
    dense = not sp.issparse(X)
    if dense:
        source = np.asarray(X)
        compiled_gather = use_numba and source.dtype in (np.float64, np.float32)
    else:  # features as rows, samples in class order: a block is a slice of rows
        # float64 values (a copy of the stored values only): blocks are densified into the
        # float64 work buffer
        source = sp.csr_array(sp.csr_array(X)[order].T, dtype=np.float64)
    # Small classes: np.sort is faster than np.partition and gives sorted runs (window by
    # binary search); large ones: partition at the middle. Measured on contiguous runs: sort
    # 1.0-1.2 ns per value up to 256 values, 2.2-2.8 ns from 512; partition 1.1-1.7 ns.
    sorted_runs = bool(counts.max() <= _SORT_MAX_CLASS_SIZE)
    wide_gather = dense and compiled_gather and width >= _WIDE_GATHER_MIN
    local = threading.local()
    if (dense and compiled_gather and source.flags.c_contiguous
            and counts.max() <= _NETWORK_MAX_CLASS_SIZE):
        # small classes: sorting networks on row-major tiles (the same statistics); other
        # layouts of X take the transposed path (its gather reads any layout)
        nets = [_merge_exchange_pairs(int(c)) for c in counts]
        pairs = np.concatenate(nets) if nets else np.empty((0, 2), dtype=np.int64)
        pair_ptr = np.concatenate([[0], np.cumsum([len(q) for q in nets])]).astype(np.int64)
        order64 = order.astype(np.int64)
        tile = _NETWORK_TILE

        def run_chunk(c0: int, c1: int) -> None:
            if not hasattr(local, "chunk"):  # per-thread work space
                local.chunk = np.empty((n, width))
                local.lohi = np.empty((2, tile))
                local.acc = np.empty((4, tile))
                local.cnt = np.empty((2 * n_classes, tile), dtype=np.int64)
                local.iwork = np.empty((3, n_classes), dtype=np.int64)
            _l1_rows_chunk(source, order64, c0, c1, tile, bounds, pairs, pair_ptr, wint,
                           total, local.chunk, local.lohi, local.acc, local.cnt, local.iwork,
                           medians, shared, dev, corr, weight, gains, spread, ok, maxabs)

        weight = _class_weights(counts.astype(np.float64), balanced)
        gains, spread, maxabs = np.empty(p), np.empty(p), np.empty(p)
        ok = np.empty(p, dtype=np.bool_)
        with np.errstate(invalid="ignore", over="ignore"):  # non-finite X: flagged below
            _run_blocks(run_chunk, edges, n_threads)
        unit = _unit_of_magnitude(float(maxabs.max()) if p else 0.0)
        if unit != 1.0:  # gains of X / unit, as for l2 (exact; l1 terms scale linearly)
            gains /= unit
        return CenterStats(medians, shared, gains, counts.astype(np.float64), bool(ok.all()),
                           spread, unit)

    def run_block(c0: int, c1: int) -> None:
        if not hasattr(local, "block"):  # per-thread buffers: no allocation per block
            local.block = np.empty(n * width)
            local.rows = np.empty(n * width) if wide_gather else None
            local.iwork = np.empty((3, n_classes), dtype=np.int64)
            local.v = np.empty(n)
            local.lab = np.empty(n, dtype=np.int64)
        w = c1 - c0
        T = local.block[: n * w].reshape(w, n)
        if not dense:
            source[c0:c1].toarray(out=T)
        elif compiled_gather:
            if wide_gather:
                _gather_transposed_wide(source, order, c0, local.rows[: n * w].reshape(n, w), T)
            else:
                _gather_transposed(source, order, c0, T)
        else:
            T[...] = source[order, c0:c1].T
        for c in range(n_classes):
            seg = T[:, bounds[c] : bounds[c + 1]]
            if sorted_runs:
                seg.sort(axis=1)
            else:
                seg.partition(seg.shape[1] // 2, axis=1)
        mu, md = np.empty(w), np.empty((n_classes, w))
        dv, cr = np.empty((n_classes, w)), np.empty((n_classes, w))
        block_kernel(
            T, bounds, wint, total, sorted_runs, md, mu, dv, cr, local.iwork, local.v, local.lab
        )
        medians[:, c0:c1] = md
        shared[c0:c1] = mu
        dev[:, c0:c1] = dv
        corr[:, c0:c1] = cr

    _run_blocks(run_block, edges, n_threads)
    return _l1_finish(medians, shared, dev, corr, counts, balanced, n)


def _l1_finish(medians, shared, dev, corr, counts, balanced: bool, n: int) -> CenterStats:
    """Gains, spread and unit of the l1 statistics from the per-class terms."""
    a = _class_weights(counts.astype(np.float64), balanced)
    finite = bool(np.isfinite(dev).all() and np.isfinite(corr).all())
    with np.errstate(invalid="ignore", over="ignore"):
        terms = a[:, None] * corr
        gains = terms.sum(axis=0)
        # Mathematically g >= 0, and g = 0 exactly when the classes admit a common median; the
        # per-class terms cancel to rounding level in the tied-interval case: snap that to 0.
        slack = 8 * np.finfo(np.float64).eps * np.abs(terms).sum(axis=0)
        gains[gains <= slack] = 0.0
        spread = dev.sum(axis=0) / n
        unit = center_unit(medians, shared)
        if unit != 1.0:  # gains of X / unit, as for l2 (exact; l1 terms scale linearly)
            gains /= unit
    return CenterStats(medians, shared, gains, counts.astype(np.float64), finite, spread, unit)


# --------------------------------------------------------------------------------------------
# Weighted median of one vector (public helpers; the reference the tests compare with)
# --------------------------------------------------------------------------------------------


def _check_weighted(values, weights):
    v = np.asarray(values, dtype=np.float64).ravel()
    w = np.asarray(weights).ravel()
    if v.shape != w.shape or v.size == 0:
        raise ValueError(
            f"values and weights must be non-empty and of equal length; got {v.size} and "
            f"{w.size}."
        )
    if not np.issubdtype(w.dtype, np.integer):
        w = w.astype(np.float64)
    if not (np.all(w > 0) and np.all(np.isfinite(w))) or not np.all(np.isfinite(v)):
        raise ValueError("weights must be finite and > 0, and values finite.")
    return v, w


def weighted_median(values, weights) -> float:
    r"""Weighted median: the midpoint of the minimisers of :math:`\sum_j w_j |v_j - \theta|`.

    The minimisers are the :math:`\theta` with :math:`\sum_{v_j<\theta} w_j \le W/2` and
    :math:`\sum_{v_j>\theta} w_j \le W/2` (spec 1.6): a data value or the closed interval
    between two consecutive data values, whose midpoint is returned (for unit weights this is
    ``np.median``). Compiled weighted quickselect, O(N) expected. With integer weights the
    comparisons with ``W/2`` are exact; with float weights they are exact float comparisons.

    Parameters
    ----------
    values : array-like of shape (N,)
    weights : array-like of shape (N,)
        Positive (integer or float).

    Returns
    -------
    float
    """
    v, w = _check_weighted(values, weights)
    lab = np.arange(v.size, dtype=np.int64)
    total = w.sum()
    if HAVE_NUMBA:
        return float(_midpoint_median(v.copy(), lab, w, v.size, w.dtype.type(0), total))
    return weighted_median_numpy(v, w)  # pragma: no cover


def weighted_median_numpy(values, weights) -> float:
    """Sort-based weighted median (midpoint convention): the reference for the compiled one.

    Sort the values, take the first whose cumulative weight reaches half the total (the lower
    weighted median); when it reaches exactly half, the minimiser set extends to the next value
    and the midpoint is returned.
    """
    v, w = _check_weighted(values, weights)
    order = np.argsort(v, kind="stable")
    vs, cum = v[order], np.cumsum(w[order])
    total = cum[-1]
    k = int(np.argmax(2 * cum >= total))
    if 2 * cum[k] == total and k + 1 < vs.size:
        return float((vs[k] + vs[k + 1]) / 2)
    return float(vs[k])


# --------------------------------------------------------------------------------------------
# Selection and decision
# --------------------------------------------------------------------------------------------


#: The ranking of :func:`sparsefs._kernels.ranking.rank_scores` (1 = largest score, ties to the
#: lower feature index; no NaN), kept as an alias: the fast packed-key sort that used to live
#: here is now ``rank_scores`` itself, so every estimator gains from it.
rank_fast = rank_scores


def select_top_k(gains: np.ndarray, k: int) -> np.ndarray:
    """The exact selection: a boolean mask of the ``k`` largest gains.

    Ties are broken by the lower feature index (spec 1.8.1: sort by score, then by index), the
    same order as the selection contract's ``ranking_``. Any ``k`` features of largest gain
    minimise the training objective (spec 1.10: it separates over features); this picks the
    deterministic one.
    """
    return rank_fast(gains) <= k


def center_scores(
    X,
    features: np.ndarray,
    class_centers: np.ndarray,
    shared_center: np.ndarray,
    norm: str,
    scale: np.ndarray | None = None,
    unit: float = 1.0,
) -> np.ndarray:
    r"""Decision scores of the classes from a set of features (additive over features).

    For ``D = features`` and class centers :math:`\theta^c` (shared center :math:`r`), in the
    coordinates :math:`x' = x / u` (``u = unit``, or :math:`x'_i = x_i / s_i` with
    ``s = scale``):

    * l2: :math:`s_c(x) = \sum_{i\in D}\left[(x'_i - r'_i)^2 - (x'_i - \theta'^c_i)^2\right]
      = \sum_{i\in D} \left[2 (x'_i - r'_i) u^c_i - (u^c_i)^2\right]`,
      :math:`u^c = \theta'^c - r'` (minus the squared distance to the class center, plus a term
      equal for all classes; computed in the stable centered form, linear in ``x``);
    * l1: :math:`s_c(x) = -\sum_{i\in D} |x'_i - \theta'^c_i|`.

    The predicted class is the argmax (spec 1.10: shared features cancel and are skipped);
    for two classes :math:`s_1 - s_0` is the paper's :math:`\Delta(x)` (eqs. 3, 11) in units
    of ``unit**2`` (l2) or ``unit`` (l1): for l2, :math:`2\sum_{i\in D}\delta_i(x_i -
    \tilde x_i)`. Working in rescaled coordinates keeps every square finite and nonzero at
    any scale of X (a power-of-two ``unit`` from :func:`center_unit`; the standardised units
    ``scale`` are scale-free by themselves), so the argmax does not depend on the scale of X.
    Scores of disjoint feature sets add up, so prefixes of a ranking are evaluated
    incrementally (cross-validation over ``k``). Sparse ``X`` is never densified beyond one
    row chunk of the selected columns.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    features : ndarray of int
    class_centers : ndarray of shape (n_classes, n_features)
    shared_center : ndarray of shape (n_features,)
    norm : {"l2", "l1"}
    scale : ndarray of shape (n_features,), optional
        Distances in units of ``scale`` (each feature's term divided by ``scale**2`` for l2,
        ``scale`` for l1): the standardised classifier. ``unit`` is then not used.
    unit : float, default=1.0
        The unit of X (:attr:`CenterStats.unit`); scores are in units of ``unit**2`` (l2) or
        ``unit`` (l1).

    Returns
    -------
    scores : ndarray of shape (n_samples, n_classes)
    """
    if norm not in ("l1", "l2"):
        raise ValueError(f"norm={norm!r} is not one of 'l1', 'l2'.")
    features = np.asarray(features, dtype=np.intp)
    n = X.shape[0]
    C = class_centers.shape[0]
    scores = np.zeros((n, C))
    if features.size == 0:
        return scores
    # per-feature multiplier to the working coordinates x' = x * f
    if scale is not None:
        f = 1.0 / np.asarray(scale, dtype=np.float64)[features]
    else:
        f = None if unit == 1.0 else np.full(features.size, 1.0 / unit)
    theta = class_centers[:, features]  # C x k
    ref = shared_center[features]
    if f is not None:
        theta, ref = theta * f, ref * f

    def chunk(rows):  # dense rows of the selected columns, in working coordinates
        Z = np.asarray(rows[:, features], dtype=np.float64)
        return Z if f is None else Z * f

    if norm == "l2":
        U = theta - ref  # C x k
        const = np.einsum("ck,ck->c", U, U)
        if sp.issparse(X):
            Xd = sp.csr_array(X)[:, features]
            if f is not None:
                Xd = sp.csr_array((Xd.data * f[Xd.indices], Xd.indices, Xd.indptr),
                                  shape=Xd.shape)
            scores += 2.0 * (np.asarray(Xd @ U.T) - ref @ U.T) - const
            return scores
        step = max(1, _CHUNK_ELEMENTS // features.size)
        for s in range(0, n, step):
            Z = chunk(X[s : s + step]) - ref
            scores[s : s + step] = 2.0 * (Z @ U.T) - const
        return scores
    if sp.issparse(X):
        Xd = sp.csr_array(X)[:, features]
        Xd.sum_duplicates()
        rows = np.repeat(np.arange(n), np.diff(Xd.indptr))
        vals, cols = np.asarray(Xd.data, dtype=np.float64), Xd.indices
        if f is not None:
            vals = vals * f[cols]
        base = np.abs(theta).sum(axis=1)
        for c in range(C):
            t = theta[c, cols]
            delta = np.abs(vals - t) - np.abs(t)
            scores[:, c] = -(base[c] + np.bincount(rows, weights=delta, minlength=n))
        return scores
    step = max(1, _CHUNK_ELEMENTS // features.size)
    for s in range(0, n, step):
        Z = chunk(X[s : s + step])
        for c in range(C):
            scores[s : s + step, c] = -np.abs(Z - theta[c]).sum(axis=1)
    return scores
