r"""Per-feature correlation tests with a continuous target (univariate regression).

For feature :math:`j` and target :math:`y` (:math:`n` samples),

.. math::

    r_j = \frac{\sum_i (x_{ij} - \bar x_j)(y_i - \bar y)}
               {\sqrt{\sum_i (x_{ij} - \bar x_j)^2 \sum_i (y_i - \bar y)^2}}, \qquad
    F_j = \frac{r_j^2}{1 - r_j^2}\,(n - 2),

the Pearson correlation and the F statistic of the simple linear regression of :math:`y` on
:math:`x_j`, with p-value :math:`P(F_{1, n-2} \ge F_j)` (equal to the two-sided t test of
:math:`r_j`, :math:`t^2 = F`). Spearman's :math:`\rho_j` is Pearson's :math:`r` of the average
ranks, tested the same way (as :func:`scipy.stats.spearmanr`). These are
:func:`sklearn.feature_selection.r_regression` and ``f_regression`` (the test references).

Sparse X (CSR/CSC) is read once through its stored values: :math:`\sum_i x_{ij}`,
:math:`\sum_i x_{ij}^2` and :math:`\sum_i x_{ij}(y_i - \bar y)` in one compiled pass (threads over
row or column chunks), then :math:`S_{xx} = \sum x^2 - n\bar x^2` and
:math:`S_{xy} = \sum x (y - \bar y)` (the mean of :math:`x` drops out of :math:`S_{xy}` because
:math:`y - \bar y` sums to 0) - the same one-pass sums as the class moments, never densified.
Dense X is read once, row by row (threads over column blocks), each value shifted by its
column's first value and scaled by the column's largest magnitude (the statistics are shift and
scale invariant: no overflow at 1e300, little cancellation), the same arithmetic for every
column whatever its position - exact copies of a column get bit-identical statistics.
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp
from scipy import special, stats

from sparsefs._kernels.arrays import column_max_abs, stored_values, to_dense
from sparsefs._kernels.columns import SAFE_RANGE
from sparsefs._kernels.threads import MIN_POOL_ELEMENTS, pool_threads, run_tasks

__all__ = [
    "CorrelationResult",
    "correlations",
    "f_from_r",
    "pvalues_from_r",
    "spearman_correlations",
]

#: relative size below which a column's centred sum of squares is rounding (a constant column)
_CANCEL = 1e-12


class CorrelationResult:
    """Correlations of every column with y and the sums they came from.

    Attributes
    ----------
    r : ndarray of shape (n_features,)
        Pearson correlations (0 for a constant column).
    constant : ndarray of bool, shape (n_features,)
        Columns with a single value.
    """

    def __init__(self, r: np.ndarray, constant: np.ndarray):
        self.r = r
        self.constant = constant


@numba.njit(cache=True, nogil=True)
def _csr_xy_sums(data, indices, indptr, yc, start, stop, s1, s2, sxy):
    for i in range(start, stop):
        v_y = yc[i]
        for t in range(indptr[i], indptr[i + 1]):
            v = np.float64(data[t])
            j = indices[t]
            s1[j] += v
            s2[j] += v * v
            sxy[j] += v * v_y


@numba.njit(cache=True, nogil=True)
def _csc_xy_sums(data, indices, indptr, yc, start, stop, s1, s2, sxy):
    for j in range(start, stop):
        a = 0.0
        b = 0.0
        c = 0.0
        for t in range(indptr[j], indptr[j + 1]):
            v = np.float64(data[t])
            a += v
            b += v * v
            c += v * yc[indices[t]]
        s1[j] += a
        s2[j] += b
        sxy[j] += c


def _sparse_sums(X, yc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(sum x, sum x^2, sum x yc)`` per column of a CSR/CSC matrix, one threaded pass."""
    n, p = X.shape
    if X.format not in ("csr", "csc"):
        X = sp.csr_array(X)
    csc = X.format == "csc"
    extent = p if csc else n
    n_threads = min(pool_threads(X.nnz), max(1, X.nnz // MIN_POOL_ELEMENTS), max(1, extent))
    bounds = np.linspace(0, extent, n_threads + 1).astype(np.intp)
    n_parts = 1 if csc else n_threads
    parts = [(np.zeros(p), np.zeros(p), np.zeros(p)) for _ in range(n_parts)]
    kernel = _csc_xy_sums if csc else _csr_xy_sums

    def run(t):
        out = parts[0] if csc else parts[t]
        kernel(X.data, X.indices, X.indptr, yc, bounds[t], bounds[t + 1], *out)

    run_tasks(run, n_threads, n_threads)
    s1, s2, sxy = parts[0]
    for a, b, c in parts[1:]:
        s1 += a
        s2 += b
        sxy += c
    return s1, s2, sxy


def _check_finite(values) -> None:
    if not np.all(np.isfinite(values)):
        if np.isnan(values).any():
            raise ValueError("Input X contains NaN.")
        raise ValueError(f"Input X contains infinity or a value too large for "
                         f"{np.asarray(values).dtype!r}.")


def correlations(X, y: np.ndarray) -> CorrelationResult:
    """Pearson correlation of every column of ``X`` with ``y``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        The target (finite, not constant).

    Returns
    -------
    CorrelationResult

    Raises
    ------
    ValueError
        NaN or infinite values in X (scikit-learn's messages).
    """
    y = np.asarray(y, dtype=np.float64)
    n, p = X.shape
    ys = y / max(float(np.abs(y).max()), 1e-300)
    yc = ys - ys.mean()
    syy = float(yc @ yc)
    if sp.issparse(X):
        s1, s2, sxy = _sparse_sums(X, yc)
        finite = np.isfinite(s2) & np.isfinite(sxy)
        with np.errstate(invalid="ignore", over="ignore"):
            mean = s1 / n
            sxx = s2 - n * mean * mean
        empty = s2 == 0  # no stored nonzero: an all-zero (constant) column
        tiny = np.zeros(p, dtype=bool)
        if not finite.all() or (~empty & (s2 < 1e-200)).any():
            amax = np.asarray(column_max_abs(X), dtype=np.float64)
            tiny = (amax > 0) & (amax < SAFE_RANGE[0])  # squares underflow: rescale those columns
        # overflowing, tiny or (near-)constant columns: the dense recompute of those only
        bad = ~empty & (~finite | tiny | (sxx <= _CANCEL * np.maximum(s2, 1e-300)))
        r = np.zeros(p)
        ok = ~bad & ~empty
        r[ok] = sxy[ok] / np.sqrt(sxx[ok] * syy)
        constant = empty.copy()
        cols = np.flatnonzero(bad)
        if cols.size:
            sub = X[:, cols]
            _check_finite(stored_values(sub))
            res = correlations(to_dense(sub, np.float64), y)
            r[cols], constant[cols] = res.r, res.constant
        return CorrelationResult(np.clip(r, -1.0, 1.0), constant)
    X = np.asarray(X)
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    # C order: rows streamed; Fortran order (pandas, column stacks): columns streamed, the
    # same arithmetic per column in the same row order (bitwise the same sums), no copy
    kernel = (_dense_xy_sums_columns if X.flags.f_contiguous and not X.flags.c_contiguous
              else _dense_xy_sums)
    if n == 0:
        return CorrelationResult(np.zeros(p), np.ones(p, dtype=bool))
    amax = np.abs(X).max(axis=0).astype(np.float64)
    if not np.all(np.isfinite(amax)):
        _check_finite(X)
    inv = np.where(amax > 0, 1.0 / np.where(amax > 0, amax, 1.0), 0.0)
    s1, s2, sxy = np.zeros(p), np.zeros(p), np.zeros(p)
    n_threads = min(pool_threads(n * p), max(1, (n * p) // MIN_POOL_ELEMENTS), p)
    cols = np.linspace(0, p, n_threads + 1).astype(np.intp)

    def run(t):
        kernel(X, yc, inv, cols[t], cols[t + 1], s1, s2, sxy)

    run_tasks(run, n_threads, n_threads)
    sxx = np.maximum(s2 - s1 * s1 / n, 0.0)
    constant = s2 == 0.0  # every value equal to the first row's
    r = np.zeros(p)
    ok = ~constant & (sxx > 0)
    r[ok] = sxy[ok] / np.sqrt(sxx[ok] * syy)
    return CorrelationResult(np.clip(r, -1.0, 1.0), constant)


@numba.njit(cache=True, nogil=True)
def _dense_xy_sums(X, yc, inv, c0, c1, s1, s2, sxy):  # pragma: no cover - compiled
    """Per column j in ``c0:c1``, with d = (x - x_first) / max|x|: sums of d, d^2, d * yc,
    row by row (each column's arithmetic in the same order whatever its position: exact
    copies of a column get bit-identical results)."""
    n = X.shape[0]
    w = c1 - c0
    first = np.empty(w)
    for j in range(w):
        first[j] = np.float64(X[0, c0 + j]) * inv[c0 + j]
    for i in range(n):
        row = X[i, c0:c1]
        yi = yc[i]
        for j in range(w):
            d = np.float64(row[j]) * inv[c0 + j] - first[j]
            s1[c0 + j] += d
            s2[c0 + j] += d * d
            sxy[c0 + j] += d * yi


@numba.njit(cache=True, nogil=True)
def _dense_xy_sums_columns(X, yc, inv, c0, c1, s1, s2, sxy):  # pragma: no cover - compiled
    """:func:`_dense_xy_sums` for Fortran-ordered X: column by column, each read
    contiguously, the same operations per column in the same row order."""
    n = X.shape[0]
    for j in range(c0, c1):
        col = X[:, j]
        first = np.float64(col[0]) * inv[j]
        a = 0.0
        b = 0.0
        c = 0.0
        for i in range(n):
            d = np.float64(col[i]) * inv[j] - first
            a += d
            b += d * d
            c += d * yc[i]
        s1[j] += a
        s2[j] += b
        sxy[j] += c


def f_from_r(r: np.ndarray, n_samples: int) -> np.ndarray:
    r"""The F statistic :math:`r^2 (n-2)/(1-r^2)`; ``+inf`` for :math:`|r| = 1`."""
    r2 = np.asarray(r, dtype=np.float64) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        f = r2 / (1.0 - r2) * (n_samples - 2)
    f[r2 >= 1.0] = np.inf
    return f


def pvalues_from_r(r: np.ndarray, n_samples: int) -> np.ndarray:
    r"""Two-sided p-values of :math:`H_0: \rho = 0` from :math:`F = r^2(n-2)/(1-r^2) \sim
    F_{1, n-2}` (the t test of a correlation); NaN when :math:`n \le 2`."""
    if n_samples <= 2:
        return np.full(np.shape(r), np.nan)
    return special.fdtrc(1, n_samples - 2, f_from_r(r, n_samples))


def spearman_correlations(X, y: np.ndarray, block_elements: int = 1 << 22) -> CorrelationResult:
    """Spearman's rho of every column with ``y``: Pearson's r of the average ranks.

    The ranks of a block of columns at a time (dense, about ``block_elements`` entries): sparse
    X is never densified beyond one block.
    """
    n, p = X.shape
    ry = stats.rankdata(np.asarray(y, dtype=np.float64))
    r = np.empty(p)
    constant = np.empty(p, dtype=bool)
    step = max(1, block_elements // max(n, 1))
    sparse = sp.issparse(X)
    if sparse:
        X = sp.csc_array(X)
    for j0 in range(0, p, step):
        B = X[:, j0:j0 + step]
        B = B.toarray() if sparse else np.asarray(B, dtype=np.float64)
        _check_finite(B)
        res = correlations(stats.rankdata(B, axis=0), ry)
        r[j0:j0 + step], constant[j0:j0 + step] = res.r, res.constant
    return CorrelationResult(r, constant)
