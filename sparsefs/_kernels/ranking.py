"""Turning per-feature scores into ranks and supports, with deterministic ties."""

import numpy as np

__all__ = ["rank_scores", "top_k_mask"]


def rank_scores(scores: np.ndarray) -> np.ndarray:
    """Rank features by score: 1 = best (largest score).

    Ties are broken deterministically by the lower feature index (a stable sort of the negated
    scores), so ``ranking`` is always a permutation of ``1..p``. ``+inf`` ranks first and ``-inf``
    last; NaN is not allowed.

    Parameters
    ----------
    scores : ndarray of shape (n_features,)
        Higher is better.

    Returns
    -------
    ranking : ndarray of shape (n_features,), dtype int64
    """
    scores = np.asarray(scores, dtype=np.float64)
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN; a score must be a number or +/-inf.")
    order = np.argsort(-scores, kind="stable")
    ranking = np.empty(scores.shape[0], dtype=np.int64)
    ranking[order] = np.arange(1, scores.shape[0] + 1)
    return ranking


def top_k_mask(scores: np.ndarray, k: int) -> np.ndarray:
    """Boolean mask of the ``k`` best features under :func:`rank_scores`'s ordering."""
    return rank_scores(scores) <= k
