r"""Column identity and scale, shared by every method kernel (issue #34's common layer).

* The scale guards: :data:`SAFE_RANGE` (magnitudes whose squares and products are normal
  float64 numbers) and :data:`TINY` (the smallest normal float64, a floor before a log or a
  division), and :func:`power_of_two_scale` / :func:`power_of_two_exponent`, the one
  power-of-two scale: dividing by it is exact, so a kernel can work near 1 whatever the units
  (1e-300 or 1e300) and its results stay the same bits up to that exact factor (options: the
  side of ``max |X|`` it falls on, only outside a safe range, ``max |X|`` from column
  extremes);
* :func:`column_power_of_two_scaled` (each column by its own power of two, for statistics that
  are invariant to a feature's scale) and :func:`constant_columns`;
* :func:`duplicate_column_groups`: the one duplicate-column contract (``first[j]``: the first
  column exactly equal to column j), with :func:`duplicate_partition` (the same partition as
  group numbers and sizes), :func:`tie_duplicate_scores` (equal scores for equal columns) and
  :func:`merge_duplicate_rows` (equal coefficient rows for equal features: the group's mean,
  which keeps a solution of a convex row-penalised problem optimal; SMBA, RFS, the lasso).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

__all__ = [
    "SAFE_RANGE",
    "TINY",
    "column_power_of_two_scaled",
    "constant_columns",
    "duplicate_column_groups",
    "duplicate_partition",
    "merge_duplicate_rows",
    "power_of_two_exponent",
    "power_of_two_scale",
    "tie_duplicate_scores",
]

#: Magnitudes ``m`` with ``SAFE_RANGE[0] <= m <= SAFE_RANGE[1]`` are safe to square and to
#: multiply in pairs (the results, 1e-200 to 1e200, are normal float64 numbers, with room for
#: sums over 1e100 terms); data outside it are rescaled by a power of two (exactly) or, for a
#: statistic of a column, recomputed on the column divided by its largest magnitude.
SAFE_RANGE = (1e-100, 1e100)
#: The smallest positive normal float64: a floor for a quantity that may be exactly 0 before
#: a log or a division.
TINY = float(np.finfo(np.float64).tiny)


def _max_abs(X, colmax, colmin) -> float:
    """``max |X|`` (from the column extremes when given; 0 for an empty X)."""
    if colmax is not None or colmin is not None:
        hi = float(np.max(colmax, initial=0.0)) if colmax is not None else 0.0
        lo = float(np.min(colmin, initial=0.0)) if colmin is not None else 0.0
        return max(hi, -lo)
    if sp.issparse(X):
        return float(abs(X).max()) if X.nnz else 0.0
    return float(np.max(np.abs(X), initial=0.0))


def power_of_two_exponent(X=None, *, amax: float | None = None, colmax=None, colmin=None,
                          safe_range: tuple[float, float] | None = None,
                          above: bool = False) -> int:
    r"""The exponent ``e`` of :func:`power_of_two_scale` (``scale == 2.0**e``).

    With :math:`m = \max|X| = f\,2^k`, :math:`f \in [0.5, 1)` (:func:`math.frexp`):
    ``e = k - 1`` (the largest power of two not above m: :math:`m / 2^e \in [1, 2)`) or, with
    ``above=True``, ``e = k`` (the smallest power of two above m: :math:`m / 2^e \in
    [0.5, 1)`; for :math:`m \ge 2^{1023}`, whose power of two above is not a float64,
    ``e = 1023``). ``e = 0`` when m is 0 or not finite, or when ``safe_range`` is given and
    ``safe_range[0] <= m <= safe_range[1]``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, optional
        The data (not read when ``amax``, ``colmax`` or ``colmin`` is given).
    amax : float, optional
        :math:`m` itself.
    colmax, colmin : ndarray, optional
        Column maxima and minima of X (signed): :math:`m = \max(\max colmax, -\min colmin)`
        (a missing one counts as 0).
    safe_range : (float, float), optional
        Leave data whose m lies in this range as they are (e.g. :data:`SAFE_RANGE`).
    above : bool, default=False
        Which power of two near m (see above).

    Returns
    -------
    int
    """
    m = float(amax) if amax is not None else _max_abs(X, colmax, colmin)
    if m == 0.0 or not math.isfinite(m):
        return 0
    if safe_range is not None and safe_range[0] <= abs(m) <= safe_range[1]:
        return 0
    k = math.frexp(m)[1]
    # 2**1024 is not a float64: above the largest power of two, its neighbour below it
    return min(k, 1023) if above else k - 1


def power_of_two_scale(X=None, *, amax: float | None = None, colmax=None, colmin=None,
                       safe_range: tuple[float, float] | None = None,
                       above: bool = False) -> float:
    """A power of two close to ``max |X|`` (1.0 for an all-zero or non-finite X); dividing by
    it is exact (between float64's limits), so a scale-free computation on ``X / scale`` gives
    the same bits, up to that factor, at any magnitude of X.

    By default the largest power of two not above ``max |X|`` (``max |X / scale|`` in
    ``[1, 2)``); ``above=True``: the smallest above it (``[0.5, 1)``); ``safe_range``: 1.0
    when ``max |X|`` lies in that range (ordinary data untouched). The parameters are those of
    :func:`power_of_two_exponent`; this is ``2.0 ** power_of_two_exponent(...)``.
    """
    return math.ldexp(1.0, power_of_two_exponent(X, amax=amax, colmax=colmax, colmin=colmin,
                                                 safe_range=safe_range, above=above))


def column_power_of_two_scaled(X):
    """A copy of X with each column divided by a power of two near its largest magnitude.

    Exact (no rounding), and it keeps squares of values near ``1e300`` / ``1e-300`` finite and
    non-zero; used by statistics that are invariant to scaling a feature.
    """
    amax = abs(X).max(axis=0)
    amax = amax.toarray().ravel() if sp.issparse(amax) else np.asarray(amax, float).ravel()
    with np.errstate(divide="ignore"):
        scale = np.where(amax > 0, 2.0 ** np.floor(np.log2(np.where(amax > 0, amax, 1.0))), 1.0)
    if sp.issparse(X):
        return sp.csr_array(X @ sp.diags_array(1.0 / scale))
    return X / scale


def constant_columns(X) -> np.ndarray:
    """Boolean mask of the columns whose values are all equal (exactly)."""
    if sp.issparse(X):
        Xc = sp.csc_array(X)
        n = Xc.shape[0]
        nnz = np.diff(Xc.indptr)
        mx = Xc.max(axis=0)
        mn = Xc.min(axis=0)
        mx = mx.toarray().ravel() if sp.issparse(mx) else np.asarray(mx).ravel()
        mn = mn.toarray().ravel() if sp.issparse(mn) else np.asarray(mn).ravel()
        # max/min include the implicit zeros only when a column has fewer than n stored values
        full = nnz == n
        return np.where(full, mx == mn, (mx == 0) & (mn == 0))
    X = np.asarray(X)
    return np.all(X[:1] == X, axis=0)


def duplicate_column_groups(X) -> np.ndarray:
    r"""For every column, the index of the first column exactly equal to it (itself if none).

    Exact, bitwise equality of the values (``-0.0`` and ``0.0`` count as equal); dense input
    is compared by sorting the columns' bytes (:math:`O(nd\log d)`) - for more than
    ``2**20`` entries only among the columns that agree at 8 rows and in their maximum and
    minimum (a few reads of X, no copy) - sparse input (any scipy format) by its canonical
    CSC pattern and values (for more than ``2**20`` stored values of a canonical CSR/CSC
    matrix only among the columns of equal stored count, sum and sum of squares:
    :func:`sparsefs._kernels.stats.column_signatures`, one pass, no copy).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)

    Returns
    -------
    ndarray of int, shape (n_features,)
        ``first[j] <= j``; ``first[j] == first[i]`` iff columns ``i`` and ``j`` are equal.
    """
    d = X.shape[1]
    if sp.issparse(X):
        if X.nnz > _DUPLICATE_EXACT_SIZE and X.format in ("csr", "csc") and \
                X.has_canonical_format:
            # candidates: equal (count, sum, sum of squares) of the stored nonzeros, summed in
            # row order (bitwise equal for equal columns); compared exactly, the rest untouched
            from sparsefs._kernels.stats import column_signatures

            sig = np.ascontiguousarray(column_signatures(X))
            view = sig.view(np.dtype((np.void, sig.dtype.itemsize * 3))).ravel()
            _, inverse, counts = np.unique(view, return_inverse=True, return_counts=True)
            first = np.arange(d, dtype=np.intp)
            cand = np.flatnonzero(counts[inverse.ravel()] > 1)
            if cand.size:
                first[cand] = cand[_sparse_exact_groups(sp.csc_array(X)[:, cand])]
            return first
        return _sparse_exact_groups(X)
    X = np.asarray(X)
    if d == 0:
        return np.zeros(0, dtype=np.intp)
    n = X.shape[0]
    if n * d <= _DUPLICATE_EXACT_SIZE or n == 0:
        return _exact_groups(X)
    # Equal columns have bitwise-equal entries, maxima and minima: columns whose values at a
    # few rows and whose extremes agree are the only candidates, compared exactly. A few reads
    # of X and O(d) memory instead of a transposed copy (which at 10^5 x 2 10^4 is 16 GB).
    rows = np.unique(np.linspace(0, n - 1, 8).astype(np.intp))
    with np.errstate(invalid="ignore"):
        probe = np.vstack([X[rows], X.max(axis=0), X.min(axis=0)]).astype(np.float64).T + 0.0
    probe = np.ascontiguousarray(probe)
    view = probe.view(np.dtype((np.void, probe.dtype.itemsize * probe.shape[1]))).ravel()
    _, inverse, counts = np.unique(view, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    first = np.arange(d, dtype=np.intp)
    cand = np.flatnonzero(counts[inverse] > 1)
    if cand.size:
        first[cand] = cand[_exact_groups(X[:, cand])]
    return first


#: at most this many entries: the exact comparison of all columns directly
_DUPLICATE_EXACT_SIZE = 1 << 20


def _sparse_exact_groups(X) -> np.ndarray:
    """:func:`duplicate_column_groups` of sparse X by its canonical CSC pattern and values."""
    d = X.shape[1]
    C = sp.csc_array(X, dtype=np.float64, copy=True)
    C.eliminate_zeros()
    C.sort_indices()
    keys = {}
    first = np.empty(d, dtype=np.intp)
    for j in range(d):
        lo, hi = C.indptr[j], C.indptr[j + 1]
        key = C.indices[lo:hi].tobytes() + (C.data[lo:hi] + 0.0).tobytes()
        first[j] = keys.setdefault(key, j)
    return first


def _exact_groups(X: np.ndarray) -> np.ndarray:
    """:func:`duplicate_column_groups` of dense X by sorting its columns' bytes."""
    cols = np.ascontiguousarray(np.asarray(X, dtype=np.float64).T) + 0.0
    if cols.shape[0] == 0:
        return np.zeros(0, dtype=np.intp)
    view = cols.view(np.dtype((np.void, cols.dtype.itemsize * cols.shape[1]))).ravel()
    _, index, inverse = np.unique(view, return_index=True, return_inverse=True)
    return index[inverse.ravel()].astype(np.intp)


def tie_duplicate_scores(X, scores: np.ndarray) -> np.ndarray:
    """Give exactly duplicated columns exactly equal scores: each group's mean score.

    A deterministic method treats two identical columns identically in exact arithmetic; in
    floating point their scores can still differ in the last bits (sums in another order).
    Averaging over each group of identical columns removes that rounding, so the selection
    contract's tie rule (equal scores, lower index first) applies. Scores of columns without
    a copy are returned unchanged. Returns a new array.
    """
    scores = np.array(scores, dtype=np.float64, copy=True)
    first = duplicate_column_groups(X)
    if np.array_equal(first, np.arange(first.shape[0])):
        return scores
    counts = np.bincount(first, minlength=first.shape[0])
    sums = np.bincount(first, weights=scores, minlength=first.shape[0])
    return sums[first] / counts[first]


def duplicate_partition(X) -> tuple[np.ndarray, np.ndarray] | None:
    """The groups of exactly equal columns of X as ``(inverse, counts)`` (``inverse[j]`` the
    group of column j, numbered in the order of the groups' first columns, ``counts[g]`` its
    size), or ``None`` when every column is distinct: :func:`duplicate_column_groups` in the
    form SMBA's and the lasso's row merges take."""
    if X.shape[1] < 2:
        return None
    first = duplicate_column_groups(X)
    if np.array_equal(first, np.arange(first.shape[0])):
        return None
    _, inverse = np.unique(first, return_inverse=True)  # groups numbered 0..G-1
    inverse = inverse.ravel()
    return inverse, np.bincount(inverse)


def merge_duplicate_rows(A: np.ndarray, groups: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    r"""Replace the rows of ``A`` (indexed by feature) of every group of duplicated features
    by the group's mean row (a new array; ``A`` itself when ``groups`` is None).

    **Why this keeps a solution optimal** (merge and split). If features i and i' are equal,
    :math:`XC` depends on rows :math:`c^i, c^{i'}` only through their sum, so replacing both
    by their mean leaves the loss unchanged and, by the triangle inequality
    (:math:`2\|(c^i + c^{i'})/2\| \le \|c^i\| + \|c^{i'}\|`, any norm), does not raise the
    penalty; the affine constraint (column sums) is kept. The mean of an optimal C is optimal,
    and the copies get bit-identical rows, hence exactly equal scores.
    """
    if groups is None:
        return A
    inverse, counts = groups
    dup = np.flatnonzero(counts[inverse] > 1)
    out = np.array(A, dtype=np.float64, copy=True)
    gid = inverse[dup]
    uniq, local = np.unique(gid, return_inverse=True)
    sums = np.zeros((uniq.size, *A.shape[1:]))
    np.add.at(sums, local, out[dup])
    sums /= counts[uniq].reshape((-1, *(1,) * (A.ndim - 1)))
    out[dup] = sums[local]
    return out
