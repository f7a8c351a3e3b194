"""Harness metrics that scikit-learn spreads over several calls: fast per-fold blocks.

The clustering metrics (CER, ACC, NMI) and the support scores come from
:mod:`sparsefs.metrics`; what is here is specific to scoring one test fold quickly.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

__all__ = ["binary_roc_auc", "classification_metrics", "macro_prf", "roc_auc_ovr"]


def macro_prf(y_true: np.ndarray, y_pred: np.ndarray) -> tuple[float, float, float]:
    """Macro-averaged precision, recall and F1 (scikit-learn's definitions).

    The average runs over the labels present in ``y_true`` or ``y_pred``; a label never
    predicted has precision 0 and one never true has recall 0 (``zero_division=0``); F1 is the
    mean of the per-label F1 scores, as :func:`sklearn.metrics.f1_score` with
    ``average="macro"``.

    Parameters
    ----------
    y_true, y_pred : ndarray of shape (n_samples,)

    Returns
    -------
    precision, recall, f1 : float
    """
    labels, inv = np.unique(np.concatenate([y_true, y_pred]), return_inverse=True)
    n = y_true.shape[0]
    t, p = inv[:n], inv[n:]
    k = labels.shape[0]
    tp = np.bincount(t[t == p], minlength=k).astype(float)
    n_pred = np.bincount(p, minlength=k).astype(float)
    n_true = np.bincount(t, minlength=k).astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        prec = np.where(n_pred > 0, tp / n_pred, 0.0)
        rec = np.where(n_true > 0, tp / n_true, 0.0)
        f1 = np.where(prec + rec > 0, 2 * prec * rec / (prec + rec), 0.0)
    return float(prec.mean()), float(rec.mean()), float(f1.mean())


def binary_roc_auc(positive: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve by the rank-sum (Mann-Whitney) formula; ties count one half.

    Equal to :func:`sklearn.metrics.roc_auc_score` for a binary target. NaN when only one class
    is present.

    Parameters
    ----------
    positive : ndarray of bool of shape (n_samples,)
    score : ndarray of shape (n_samples,)
        Higher = more likely positive.

    Returns
    -------
    float
    """
    positive = np.asarray(positive, dtype=bool)
    n_pos = int(positive.sum())
    n_neg = positive.shape[0] - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(score)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def roc_auc_ovr(y_true: np.ndarray, scores: np.ndarray) -> float:
    """ROC AUC: binary, or one-vs-rest macro average for more classes.

    Parameters
    ----------
    y_true : ndarray of int of shape (n_samples,)
        Class indices ``0..K-1``.
    scores : ndarray of shape (n_samples, K)
        Column ``c`` scores class ``c`` (probabilities or decision values; a column of NaN
        marks a class the model never saw). With ``K == 2`` the AUC of column 1 is returned.

    Returns
    -------
    float
        For ``K > 2``: the mean over the classes present in ``y_true`` (and absent from at
        least one sample) of the AUC of ``y_true == c`` against ``scores[:, c]`` - what
        :func:`sklearn.metrics.roc_auc_score` computes with ``multi_class="ovr"``,
        ``average="macro"``, but also for decision values that do not sum to one. NaN when no
        class can be scored.
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2:
        raise ValueError(f"scores must be 2-D (n_samples, n_classes), got {scores.shape}.")
    if scores.shape[1] == 2:
        if np.isnan(scores[:, 1]).any():
            return float("nan")
        return binary_roc_auc(y_true == 1, scores[:, 1])
    values = []
    for c in range(scores.shape[1]):
        pos = y_true == c
        if not pos.any() or pos.all() or np.isnan(scores[:, c]).any():
            continue
        values.append(binary_roc_auc(pos, scores[:, c]))
    return float(np.mean(values)) if values else float("nan")


def classification_metrics(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    scores: np.ndarray | None,
    metrics: tuple[str, ...],
) -> dict[str, float]:
    """The supervised protocol's metrics on one test fold.

    Parameters
    ----------
    y_true, y_pred : ndarray of int
        Class indices.
    scores : ndarray of shape (n_samples, K) or None
        Per-class scores for ROC AUC (NaN when None).
    metrics : tuple of str
        Any of ``accuracy``, ``error``, ``precision_macro``, ``recall_macro``, ``f1_macro``,
        ``roc_auc``.

    Returns
    -------
    dict
    """
    out: dict[str, float] = {}
    acc = float(np.mean(y_true == y_pred)) if y_true.size else float("nan")
    prf = None
    for m in metrics:
        if m == "accuracy":
            out[m] = acc
        elif m == "error":
            out[m] = 1.0 - acc
        elif m in ("precision_macro", "recall_macro", "f1_macro"):
            if prf is None:
                prf = macro_prf(y_true, y_pred)
            out[m] = prf[("precision_macro", "recall_macro", "f1_macro").index(m)]
        elif m == "roc_auc":
            out[m] = float("nan") if scores is None else roc_auc_ovr(y_true, scores)
        else:  # pragma: no cover - validated by the spec
            raise ValueError(f"unknown metric {m!r}")
    return out
