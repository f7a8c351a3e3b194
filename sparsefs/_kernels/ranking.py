"""Turning per-feature scores into ranks and supports, with deterministic ties."""

from numbers import Integral

import numpy as np

__all__ = ["is_top_set", "rank_scores", "resolve_n_features_to_select", "top_k_mask"]

_INT64_MAGNITUDE = np.int64(0x7FFFFFFFFFFFFFFF)


def _ascending_int_keys(keys: np.ndarray) -> np.ndarray:
    """int64 keys in the same order as the float64 ``keys`` (no NaN; ``-0.0`` == ``0.0``).

    The IEEE-754 bit pattern of a float read as a signed integer is monotone for positive
    floats and reversed for negative ones; flipping the magnitude bits of the negative ones
    makes the whole map monotone. ``-0.0`` is first turned into ``+0.0`` (``x + 0.0``) so that
    the two zeros tie, as they do under comparison.
    """
    bits = (keys + 0.0).view(np.int64)
    return bits ^ ((bits >> 63) & _INT64_MAGNITUDE)


def is_top_set(ranking: np.ndarray, support: np.ndarray) -> bool:
    """Whether the boolean ``support`` is exactly the best ``support.sum()`` of ``ranking``.

    ``ranking`` is a permutation of ``1..p`` (:func:`rank_scores`). This is the contract of a
    selector's own support, and the test the tie rules use before they give copies of a
    column equal scores.
    """
    support = np.asarray(support, dtype=bool)
    return bool(np.array_equal(support, np.asarray(ranking) <= support.sum()))


def rank_scores(scores: np.ndarray) -> np.ndarray:
    """Rank features by score: 1 = best (largest score).

    Ties are broken deterministically by the lower feature index (the order of a stable sort
    of the negated scores), so ``ranking`` is always a permutation of ``1..p``. ``+inf`` ranks
    first and ``-inf`` last; ``-0.0`` ties with ``0.0``; NaN is not allowed.

    Implementation: the negated scores are mapped to order-preserving int64 keys, the low bits
    of each key are replaced by the feature index and the packed keys are sorted by value
    (numpy's SIMD sort, ~15x faster than the stable argsort at p = 20000). The result is then
    checked in O(p): when two different scores agree in all but the dropped low bits
    (relative difference below ~2**-37 at p = 20000), the packed order may be wrong and the
    stable argsort is used instead. Either way the result equals the stable sort's.

    Parameters
    ----------
    scores : ndarray of shape (n_features,)
        Higher is better.

    Returns
    -------
    ranking : ndarray of shape (n_features,), dtype int64
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1:
        scores = scores.ravel()
    if np.isnan(scores).any():
        raise ValueError("scores contain NaN; a score must be a number or +/-inf.")
    p = scores.shape[0]
    ranking = np.empty(p, dtype=np.int64)
    if p == 0:
        return ranking
    keys = _ascending_int_keys(-scores)
    shift = max(1, int(p - 1).bit_length())
    index = np.arange(p, dtype=np.int64)
    packed = keys >> shift
    packed <<= shift
    packed |= index
    packed.sort()
    order = packed & ((1 << shift) - 1)
    ordered = keys[order]
    if p > 1 and bool((ordered[1:] < ordered[:-1]).any()):  # near-ties lost in the low bits
        order = np.argsort(keys, kind="stable")
    ranking[order] = index + 1
    return ranking


def top_k_mask(scores: np.ndarray, k: int) -> np.ndarray:
    """Boolean mask of the ``k`` best features under :func:`rank_scores`'s ordering."""
    return rank_scores(scores) <= k


def resolve_n_features_to_select(value: int | float | None, n_features: int) -> int | None:
    """Turn ``n_features_to_select`` into a count for ``n_features`` features.

    Parameters
    ----------
    value : int, float in (0, 1] or None
        An int is a count and must not exceed ``n_features``; a float is a fraction, rounded down
        and at least 1; ``None`` is returned unchanged (the method's own rule).
    n_features : int

    Returns
    -------
    int or None

    Raises
    ------
    ValueError
        If an int count exceeds ``n_features``.
    """
    if value is None:
        return None
    if isinstance(value, bool | np.bool_):
        raise ValueError(
            f"n_features_to_select={value!r} is a bool; pass an int count, a fraction in (0, 1], "
            "or None."
        )
    if isinstance(value, Integral):
        if value > n_features:
            raise ValueError(
                f"n_features_to_select={value!r} exceeds n_features={n_features}; pass an int "
                f"<= {n_features}, a fraction in (0, 1], or None."
            )
        return int(value)
    return max(1, int(value * n_features))
