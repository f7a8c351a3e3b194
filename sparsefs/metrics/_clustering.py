"""Agreement between two partitions: CER, clustering accuracy, NMI."""

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

__all__ = ["clustering_accuracy", "clustering_error_rate", "normalized_mutual_info"]


def _check_pair(labels_true, labels_pred) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(labels_true).ravel(), np.asarray(labels_pred).ravel()
    if a.shape != b.shape:
        raise ValueError(
            f"labels_true and labels_pred must have the same length; got {a.shape[0]} and "
            f"{b.shape[0]}."
        )
    if a.shape[0] == 0:
        raise ValueError("labels_true and labels_pred are empty.")
    return a, b


def _pairs(counts: np.ndarray) -> float:
    counts = np.asarray(counts, dtype=np.float64)
    return float((counts * (counts - 1) / 2).sum())


def clustering_error_rate(labels_true, labels_pred) -> float:
    r"""Clustering error rate: the share of sample pairs on which two partitions disagree.

    .. math::

        \mathrm{CER}(P, Q) = \binom{n}{2}^{-1} \sum_{i < i'}
            \left| 1\{P(i) = P(i')\} - 1\{Q(i) = Q(i')\} \right|,

    which equals one minus the Rand index (Witten & Tibshirani 2010; Chang et al. 2018, used in
    the sparse k-means experiments). Computed from the contingency table in
    :math:`O(n + K_P K_Q)`, not over the :math:`n^2` pairs.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_samples,)

    Returns
    -------
    float in [0, 1]
        0 for identical partitions (up to relabelling). One sample: 0.
    """
    a, b = _check_pair(labels_true, labels_pred)
    n = a.shape[0]
    if n < 2:
        return 0.0
    table = contingency_matrix(a, b, sparse=True)
    both = _pairs(table.data)
    same_a = _pairs(np.asarray(table.sum(axis=1)).ravel())
    same_b = _pairs(np.asarray(table.sum(axis=0)).ravel())
    disagree = same_a + same_b - 2 * both
    return disagree / (n * (n - 1) / 2)


def clustering_accuracy(labels_true, labels_pred) -> float:
    """Accuracy of the best one-to-one matching of clusters to classes (Hungarian algorithm).

    With more clusters than classes (or the reverse), unmatched clusters count as errors.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_samples,)

    Returns
    -------
    float in [0, 1]
    """
    a, b = _check_pair(labels_true, labels_pred)
    table = contingency_matrix(a, b)
    rows, cols = linear_sum_assignment(table, maximize=True)
    return float(table[rows, cols].sum() / a.shape[0])


def normalized_mutual_info(
    labels_true, labels_pred, *, average_method: str = "arithmetic"
) -> float:
    """Normalised mutual information.

    A thin wrapper of :func:`sklearn.metrics.normalized_mutual_info_score`, so that every
    clustering metric of the harness lives in one namespace.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_samples,)
    average_method : {"arithmetic", "geometric", "min", "max"}, default="arithmetic"
        The normaliser of I(P; Q): scikit-learn's default is the arithmetic mean of the
        entropies; the unsupervised feature-selection literature (e.g. UFCM, spec B.9) often
        uses the geometric mean sqrt(H(P) H(Q)).
    """
    a, b = _check_pair(labels_true, labels_pred)
    if average_method not in ("arithmetic", "geometric", "min", "max"):
        raise ValueError(
            f"average_method={average_method!r} is not one of 'arithmetic', 'geometric', "
            "'min', 'max'."
        )
    return float(normalized_mutual_info_score(a, b, average_method=average_method))
