"""Per-class moments of the columns of X, for dense and CSR matrices.

Class sums are one product of the sparse class-indicator matrix with X for dense X, and one
``bincount`` over the stored values for sparse X (one pass over X either way);
within-class sums of squares come from a second, row-blocked pass over the residuals
``X - M[y]`` for dense X (exact, no cancellation: a feature constant within every class gets
exactly 0), or from the moment identity ``sum x^2 - sum_c n_c m_c^2`` for sparse X, where
forming residuals would densify the matrix.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = ["ClassMoments", "class_moments", "one_hot"]

# Rows per block in the residual pass: keeps the temporary near 8 MB whatever n is.
_BLOCK_ELEMENTS = 1 << 20


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


def _sparse_class_sums(X, y_idx: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-class column sums and total column sums of squares of a CSR/CSC matrix.

    One ``bincount`` over the stored values each: no format conversion, no copy of X.
    """
    n, p = X.shape
    if X.format not in ("csr", "csc"):
        X = sp.csr_array(X)
    data = np.asarray(X.data, dtype=np.float64)
    lengths = np.diff(X.indptr)
    if X.format == "csr":
        rows, cols = np.repeat(np.arange(n), lengths), X.indices
    else:
        rows, cols = X.indices, np.repeat(np.arange(p), lengths)
    flat = y_idx[rows].astype(np.int64) * p + cols
    sums = np.bincount(flat, weights=data, minlength=n_classes * p).reshape(n_classes, p)
    sq_total = np.bincount(cols, weights=data * data, minlength=p)
    return sums, sq_total


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
        sums, sq_total = _sparse_class_sums(X, y_idx, n_classes)
        means = sums / counts[:, None]
        within = sq_total - (counts[:, None] * means**2).sum(axis=0)
        # The identity cancels; what is left at rounding level is exactly zero scatter.
        scale = np.maximum(sq_total, 1e-300)
        within[within <= 1e-12 * scale] = 0.0
    else:
        X = np.asarray(X)
        Yt = one_hot(y_idx, n_classes).T.tocsr()
        sums = Yt @ X if X.dtype == np.float64 else Yt @ X.astype(np.float64)
        means = np.asarray(sums) / counts[:, None]
        within = np.zeros(X.shape[1])
        step = max(1, _BLOCK_ELEMENTS // max(1, X.shape[1]))
        for start in range(0, X.shape[0], step):
            block = np.asarray(X[start : start + step], dtype=np.float64)
            block = block - means[y_idx[start : start + step]]
            within += np.einsum("ij,ij->j", block, block)
    grand_mean = counts @ means / counts.sum()
    between = counts @ (means - grand_mean) ** 2
    return ClassMoments(counts, means, grand_mean, within, between)
