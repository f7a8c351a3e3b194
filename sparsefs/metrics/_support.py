"""How well a selected feature set matches a known true support."""

import numpy as np

__all__ = ["support_scores"]


def _as_mask(value, n_features: int | None, name: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == bool:
        return arr.ravel()
    if n_features is None:
        raise ValueError(f"{name} given as indices needs a boolean mask on the other side.")
    idx = arr.astype(np.int64).ravel()
    if idx.size and (idx.min() < 0 or idx.max() >= n_features):
        raise ValueError(f"{name} has indices outside [0, {n_features}).")
    mask = np.zeros(n_features, dtype=bool)
    mask[idx] = True
    return mask


def support_scores(true_support, selected) -> dict[str, float]:
    """Precision, recall and F1 of a selection against the true support.

    Parameters
    ----------
    true_support : array-like of bool (n_features,) or of int indices
    selected : array-like of bool (n_features,) or of int indices
        At least one of the two must be a boolean mask (it fixes ``n_features``).

    Returns
    -------
    dict
        ``precision`` (relevant kept / selected; 0 when nothing is selected), ``recall``
        (relevant kept / relevant; 0 when there is no relevant feature), ``f1``,
        ``relevant_kept``, ``noise_kept``, ``n_selected``, ``n_relevant``, and
        ``noise_zeroed`` (the share of noise features left out; the sparse k-means papers'
        "PZW" as read in the spec).
    """
    n = None
    for v in (true_support, selected):
        if np.asarray(v).dtype == bool:
            n = np.asarray(v).size
    truth = _as_mask(true_support, n, "true_support")
    kept = _as_mask(selected, n, "selected")
    if truth.shape != kept.shape:
        raise ValueError(
            f"true_support has {truth.size} features and selected has {kept.size}."
        )
    relevant = int((truth & kept).sum())
    noise = int((~truth & kept).sum())
    n_sel, n_rel, n_noise = int(kept.sum()), int(truth.sum()), int((~truth).sum())
    precision = relevant / n_sel if n_sel else 0.0
    recall = relevant / n_rel if n_rel else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "relevant_kept": relevant,
        "noise_kept": noise,
        "n_selected": n_sel,
        "n_relevant": n_rel,
        "noise_zeroed": (n_noise - noise) / n_noise if n_noise else 1.0,
    }
