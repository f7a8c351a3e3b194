"""Per-class moments of the columns of X, for dense and CSR matrices.

One pass over X, by compiled loops that accumulate in float64 whatever X's dtype (no copy or
upcast of X; extra memory O(n_classes x n_features) per thread):

* dense X: class sums of the values shifted by each class's first row, and of their squares,
  row by row (the shifted algorithm of Chan, Golub & LeVeque: no division in the loop, a
  feature constant within every class gets exactly 0), on threads over column blocks from
  ``_BLOCK_ELEMENTS`` entries;
* sparse X (CSR or CSC, each read in its own format): class sums and total sums of squares
  over the stored values only, then the moment identity ``sum x^2 - sum_c n_c m_c^2`` (the
  implicit zeros add nothing; forming residuals would densify the matrix), on threads over row
  (CSR) or column (CSC) chunks from ``_BLOCK_ELEMENTS`` stored values.
"""

from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp

from sparsefs._kernels import threads as _threads

__all__ = [
    "ClassMoments",
    "class_moments",
    "column_signatures",
    "one_hot",
    "one_hot_dense",
    "sparse_class_sums",
    "sparse_constant_columns",
]

# From this many entries (dense) or stored values (sparse), the pass runs on threads.
_BLOCK_ELEMENTS = _threads.MIN_POOL_ELEMENTS


@numba.njit(cache=True, nogil=True)
def _shifted_block(X, y_idx, first, c0, c1, means, m2):
    """Class means / sums of squared deviations of the columns ``c0:c1`` of ``X``, one pass.

    Sums of ``x``, of ``x - s`` and of ``(x - s)^2`` with the shift ``s`` = the class's first
    row (``first[c]``): the mean is the plain sum over the count, the scatter comes from the
    shifted sums; no division in the loop (it runs at the speed of reading X), the
    cancellation of ``sum d^2 - (sum d)^2 / n`` is that of data centred within
    ``|s - mean|`` of a class sample (the shifted algorithm of Chan, Golub & LeVeque), and a
    feature constant within a class gets exactly 0. The whole X is passed (a C-contiguous
    array: compiled for unit stride) with the column range of this thread.
    """
    n = X.shape[0]
    n_classes = first.shape[0]
    width = c1 - c0
    shift = np.zeros((n_classes, width))
    counts = np.zeros(n_classes)
    for c in range(n_classes):
        if first[c] >= 0:
            for j in range(width):
                shift[c, j] = np.float64(X[first[c], c0 + j])
    dev = np.zeros((n_classes, width))
    for i in range(n):
        c = y_idx[i]
        counts[c] += 1.0
        # 1-D row views: unit stride that LLVM vectorises (2-D offsets measured 3x slower)
        x, s0, s1, s2, sh = X[i, c0:c1], means[c, c0:c1], dev[c], m2[c, c0:c1], shift[c]
        for j in range(width):
            v = np.float64(x[j])
            d = v - sh[j]
            s0[j] += v
            s1[j] += d
            s2[j] += d * d
    for c in range(n_classes):
        if counts[c] == 0.0:
            continue
        inv = 1.0 / counts[c]
        s0, s1, s2 = means[c, c0:c1], dev[c], m2[c, c0:c1]
        for j in range(width):
            s = s1[j]
            s2[j] = max(s2[j] - s * s * inv, 0.0)
            # the mean from the plain sum: classes of equal mean get bit-equal means (a between
            # scatter of exactly 0, as the sparse and dask paths give)
            s0[j] = s0[j] / counts[c]


@numba.njit(cache=True, nogil=True)
def _shifted_columns(X, y_idx, first, c0, c1, means, m2):
    """:func:`_shifted_block` for Fortran-ordered X: column by column, each read contiguously,
    with the same operations per column in the same row order."""
    n = X.shape[0]
    n_classes = first.shape[0]
    counts = np.zeros(n_classes)
    for i in range(n):
        counts[y_idx[i]] += 1.0
    sh = np.zeros(n_classes)
    s0 = np.zeros(n_classes)
    s1 = np.zeros(n_classes)
    s2 = np.zeros(n_classes)
    for j in range(c0, c1):
        col = X[:, j]
        for c in range(n_classes):
            sh[c] = np.float64(col[first[c]]) if first[c] >= 0 else 0.0
            s0[c] = 0.0
            s1[c] = 0.0
            s2[c] = 0.0
        for i in range(n):
            c = y_idx[i]
            v = np.float64(col[i])
            d = v - sh[c]
            s0[c] += v
            s1[c] += d
            s2[c] += d * d
        for c in range(n_classes):
            if counts[c] == 0.0:
                continue
            inv = 1.0 / counts[c]
            s = s1[c]
            m2[c, j] = max(s2[c] - s * s * inv, 0.0)
            means[c, j] = s0[c] / counts[c]


@numba.njit(cache=True, nogil=True)
def _csr_sums(data, indices, indptr, y_idx, start, stop, sums, sq_total):
    for i in range(start, stop):
        c = y_idx[i]
        for t in range(indptr[i], indptr[i + 1]):
            v = np.float64(data[t])
            j = indices[t]
            sums[c, j] += v
            sq_total[j] += v * v


@numba.njit(cache=True, nogil=True)
def _csc_sums(data, indices, indptr, y_idx, start, stop, sums, sq_total):
    """The same sums for the columns ``start:stop`` of a CSC matrix (disjoint outputs)."""
    for j in range(start, stop):
        for t in range(indptr[j], indptr[j + 1]):
            v = np.float64(data[t])
            sums[y_idx[indices[t]], j] += v
            sq_total[j] += v * v


@numba.njit(cache=True, nogil=True)
def _signature_pass(data, indices, indptr, by_column, nnz, s1, s2):
    """Stored count, sum and sum of squares per column, each in storage order."""
    for a in range(indptr.shape[0] - 1):
        for t in range(indptr[a], indptr[a + 1]):
            v = np.float64(data[t])
            if v == 0.0:
                continue  # an explicitly stored zero is a zero
            j = a if by_column else indices[t]
            nnz[j] += 1
            s1[j] += v
            s2[j] += v * v


def column_signatures(X) -> np.ndarray:
    """Per column of a CSR/CSC matrix: (nonzero count, sum, sum of squares), shape (p, 3).

    One compiled pass, no copy of X. Each column's values are summed in the order they are
    stored (row order for a canonical matrix), so two identical columns get bitwise-identical
    signatures: the candidates of :func:`sparsefs._kernels.columns.duplicate_column_groups`.
    """
    if X.format not in ("csr", "csc"):
        X = sp.csr_array(X)
    p = X.shape[1]
    nnz, s1, s2 = np.zeros(p), np.zeros(p), np.zeros(p)
    _signature_pass(X.data, X.indices, X.indptr, X.format == "csc", nnz, s1, s2)
    return np.column_stack([nnz, s1 + 0.0, s2])


@numba.njit(cache=True, nogil=True)
def _range_pass(data, indices, indptr, by_column, n_cols, stored, lo, hi):
    """Stored count, min and max per column, each in storage order."""
    for a in range(indptr.shape[0] - 1):
        for t in range(indptr[a], indptr[a + 1]):
            v = data[t]
            j = a if by_column else indices[t]
            if stored[j] == 0:
                lo[j] = v
                hi[j] = v
            else:
                lo[j] = min(lo[j], v)
                hi[j] = max(hi[j], v)
            stored[j] += 1


def sparse_constant_columns(X) -> np.ndarray:
    """Columns of a CSR/CSC matrix with a single value, from one compiled pass over the stored
    values in their own format (no conversion or copy of X).

    A column is constant when nothing is stored, or all its stored values are equal and
    either every row is stored or they are (explicit) zeros.
    """
    if X.format not in ("csr", "csc"):
        X = sp.csr_array(X)
    n, p = X.shape
    stored = np.zeros(p, dtype=np.int64)
    lo = np.zeros(p, dtype=X.dtype)
    hi = np.zeros(p, dtype=X.dtype)
    _range_pass(X.data, X.indices, X.indptr, X.format == "csc", p, stored, lo, hi)
    return (stored == 0) | ((lo == hi) & ((stored == n) | (lo == 0)))


@dataclass(frozen=True)
class ClassMoments:
    """Counts, means and scatter of each feature within each class.

    Attributes
    ----------
    counts : ndarray of shape (n_classes,)
    means : ndarray of shape (n_classes, n_features)
        Class means :math:`m_{cj}`.
    grand_mean : ndarray of shape (n_features,)
    within_ss : ndarray of shape (n_features,)
        :math:`\\sum_c \\sum_{i \\in c} (x_{ij} - m_{cj})^2`.
    between_ss : ndarray of shape (n_features,)
        :math:`\\sum_c n_c (m_{cj} - m_j)^2`.
    """

    counts: np.ndarray
    means: np.ndarray
    grand_mean: np.ndarray
    within_ss: np.ndarray
    between_ss: np.ndarray


def one_hot(y_idx: np.ndarray, n_classes: int) -> sp.csr_array:
    """Sparse n_samples x n_classes indicator matrix of integer labels ``0..n_classes-1``."""
    n = y_idx.shape[0]
    return sp.csr_array(
        (np.ones(n), (np.arange(n), y_idx)), shape=(n, n_classes), dtype=np.float64
    )


def one_hot_dense(y_idx: np.ndarray, n_classes: int) -> np.ndarray:
    """Dense n_samples x n_classes 0/1 indicator matrix (:func:`one_hot`, dense).

    Examples
    --------
    >>> one_hot_dense(np.array([1, 0, 1]), 2).tolist()
    [[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]
    """
    Y = np.zeros((y_idx.shape[0], n_classes))
    Y[np.arange(y_idx.shape[0]), y_idx] = 1.0
    return Y


def sparse_class_sums(X, y_idx: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-class column sums and total column sums of squares of a CSR/CSC matrix.

    One compiled pass over the stored values in their own format (float64 accumulation, no
    copy or conversion of X): CSR on threads over row chunks, each with its own
    O(n_classes x n_features) accumulator; CSC on threads over column chunks, which write
    disjoint parts of one accumulator. Other sparse formats are converted to CSR.
    """
    n, p = X.shape
    if X.format not in ("csr", "csc"):
        X = sp.csr_array(X)
    y_idx = np.ascontiguousarray(y_idx, dtype=np.intp)
    csc = X.format == "csc"
    extent = p if csc else n
    n_threads = min(_threads.pool_threads(X.nnz), max(1, X.nnz // _BLOCK_ELEMENTS), max(1, extent))
    bounds = np.linspace(0, extent, n_threads + 1).astype(np.intp)
    n_parts = 1 if csc else n_threads
    parts = [(np.zeros((n_classes, p)), np.zeros(p)) for _ in range(n_parts)]
    kernel = _csc_sums if csc else _csr_sums

    def run(t):
        out = parts[0] if csc else parts[t]
        kernel(X.data, X.indices, X.indptr, y_idx, bounds[t], bounds[t + 1], *out)

    _threads.run_tasks(run, n_threads, n_threads)
    sums, sq_total = parts[0]
    for extra_sums, extra_sq in parts[1:]:
        sums += extra_sums
        sq_total += extra_sq
    return sums, sq_total


def _dense_moments(X, y_idx: np.ndarray, n_classes: int):
    """``(means, within_ss)`` of dense X (shifted sums), threads over column blocks."""
    n, p = X.shape
    # C order: rows streamed; Fortran order (pandas, column stacks): columns streamed, the
    # same arithmetic per column in the same row order (bitwise the same moments); other
    # strides are copied once
    by_column = X.flags.f_contiguous and not X.flags.c_contiguous
    if not (X.flags.c_contiguous or by_column):
        X = np.ascontiguousarray(X)
    kernel = _shifted_columns if by_column else _shifted_block
    y_idx = np.ascontiguousarray(y_idx, dtype=np.intp)
    first = np.full(n_classes, -1, dtype=np.intp)
    present, at = np.unique(y_idx, return_index=True)  # each class's first row
    first[present] = at
    means = np.zeros((n_classes, p))
    m2 = np.zeros((n_classes, p))
    n_threads = min(_threads.pool_threads(n * p), max(1, (n * p) // _BLOCK_ELEMENTS), p)
    cols = np.linspace(0, p, n_threads + 1).astype(np.intp)

    def run(t):
        kernel(X, y_idx, first, cols[t], cols[t + 1], means, m2)

    _threads.run_tasks(run, n_threads, n_threads)
    return means, m2.sum(axis=0)


def class_moments(X, y_idx: np.ndarray, n_classes: int) -> ClassMoments:
    """Per-class counts, means and within/between sums of squares of every column.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Floating point; computations are done in float64.
    y_idx : ndarray of shape (n_samples,)
        Class index of each sample, in ``0..n_classes-1``.
    n_classes : int

    Returns
    -------
    ClassMoments
    """
    counts = np.bincount(y_idx, minlength=n_classes).astype(np.float64)
    if sp.issparse(X):
        sums, sq_total = sparse_class_sums(X, y_idx, n_classes)
        means = sums / counts[:, None]
        within = sq_total - (counts[:, None] * means**2).sum(axis=0)
        # The identity cancels; what is left at rounding level is exactly zero scatter.
        scale = np.maximum(sq_total, 1e-300)
        within[within <= 1e-12 * scale] = 0.0
    else:
        X = np.asarray(X)
        means, within = _dense_moments(X, y_idx, n_classes)
    # class by class, not a matrix-vector product: the rounding of a column then does not
    # depend on its position (exact copies of a column get bit-identical moments)
    # the grand mean as the first class's mean plus the weighted mean deviation: exactly that
    # mean when every class mean is equal (a between-class scatter of exactly 0)
    grand_mean = np.zeros(means.shape[1])
    for c in range(1, n_classes):
        grand_mean += counts[c] * (means[c] - means[0])
    grand_mean /= counts.sum()
    grand_mean += means[0]
    between = np.zeros(means.shape[1])
    dev = np.empty(means.shape[1])
    for c in range(n_classes):
        np.subtract(means[c], grand_mean, out=dev)
        dev *= dev
        dev *= counts[c]
        between += dev
    return ClassMoments(counts, means, grand_mean, within, between)
