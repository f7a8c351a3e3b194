"""Kernel of the cross-validated sparse center classifier: every k of a grid in one pass.

The sparse center solution for ``k`` frees the top ``k`` features of one ranking, and its
decision scores are sums over the free features
(:func:`sparsefs._kernels.sparse_centers.center_scores`). So the predictions for a whole grid
``k_1 < k_2 < ...`` come from one fitted model: add the scores of the features ranked
``k_{g-1}+1 .. k_g`` to a running total and take the argmax at each grid value. The cost is
that of one prediction with the largest ``k``.
"""

import numpy as np

from sparsefs._kernels.sparse_centers import center_scores

__all__ = ["grid_predictions"]


def grid_predictions(
    X,
    order: np.ndarray,
    grid: np.ndarray,
    class_centers: np.ndarray,
    shared_center: np.ndarray,
    norm: str,
    scale: np.ndarray | None = None,
    unit: float = 1.0,
) -> np.ndarray:
    """Predicted class indices of the sparse center classifier for every ``k`` in ``grid``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    order : ndarray of int
        Features best first (the ranking as an order: ties already broken).
    grid : ndarray of int
        Increasing values of ``k`` in ``[1, len(order)]``.
    class_centers, shared_center : ndarray
        As in :class:`sparsefs._kernels.sparse_centers.CenterStats`.
    norm : {"l2", "l1"}
    scale : ndarray, optional
        Per-feature scale of the standardised classifier (see ``center_scores``).
    unit : float, default=1.0
        The power-of-two unit of X (see ``center_scores``): the argmax at any scale of X.

    Returns
    -------
    ndarray of shape (len(grid), n_samples)
        Class indices; ties go to the lower class index, as in ``predict``.
    """
    grid = np.asarray(grid, dtype=np.intp)
    if grid.size and (np.any(np.diff(grid) <= 0) or grid[0] < 1 or grid[-1] > len(order)):
        raise ValueError(f"grid={grid.tolist()!r} must increase within [1, {len(order)}].")
    scores = np.zeros((X.shape[0], class_centers.shape[0]))
    out = np.empty((grid.size, X.shape[0]), dtype=np.intp)
    start = 0
    for g, k in enumerate(grid):
        scores += center_scores(
            X, order[start:k], class_centers, shared_center, norm, scale, unit
        )
        start = k
        out[g] = np.argmax(scores, axis=1)
    return out
