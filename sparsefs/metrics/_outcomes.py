"""Prediction quality for continuous and survival targets: R², RMSE, Harrell's C-index."""

from __future__ import annotations

import numpy as np

__all__ = ["concordance_index", "r2", "rmse"]


def r2(y_true, y_pred) -> float:
    r"""The coefficient of determination :math:`1 - \sum (y - \hat y)^2 / \sum (y - \bar y)^2`.

    As :func:`sklearn.metrics.r2_score` (negative when the prediction is worse than the mean
    of the test fold; NaN for a constant ``y_true``).
    """
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    ss_tot = float(np.sum((y_true - y_true.mean()) ** 2))
    if ss_tot == 0:
        return float("nan")
    return 1.0 - float(np.sum((y_true - y_pred) ** 2)) / ss_tot


def rmse(y_true, y_pred) -> float:
    r"""Root mean squared error :math:`\sqrt{\frac1n\sum (y - \hat y)^2}`."""
    d = np.asarray(y_true, dtype=np.float64) - np.asarray(y_pred, dtype=np.float64)
    return float(np.sqrt(np.mean(d * d)))


def concordance_index(time, event, risk, block: int = 2048) -> float:
    r"""Harrell's concordance index of a risk score for censored survival times.

    A pair :math:`(i, j)` is *comparable* when the earlier time is an observed event:
    :math:`\delta_i = 1` and :math:`t_i < t_j`, or :math:`t_i = t_j` with :math:`j` censored
    (a sample censored at the time of an event outlived it). It is *concordant* when the
    earlier event has the higher risk, :math:`r_i > r_j`; tied risks count one half; two
    events at the same time are not comparable. The index is the share of concordant pairs
    among the comparable ones (Harrell, Califf, Pryor, Lee & Rosati, JAMA 247, 1982; the
    conventions of lifelines' ``concordance_index``, called with ``-risk``). 0.5: no
    discrimination, 1: a perfect ordering. NaN when no pair is comparable.

    Parameters
    ----------
    time : array-like of shape (n,)
    event : array-like of bool, shape (n,)
    risk : array-like of shape (n,)
        Higher = earlier event (e.g. a Cox model's linear predictor).
    block : int
        Pairs are counted for blocks of this many events at a time (O(n * block) memory).

    Returns
    -------
    float
    """
    t = np.asarray(time, dtype=np.float64)
    e = np.asarray(event, dtype=bool)
    r = np.asarray(risk, dtype=np.float64)
    if not (t.shape == e.shape == r.shape) or t.ndim != 1:
        raise ValueError(f"time, event and risk must be 1-d of one length; got {t.shape}, "
                         f"{e.shape}, {r.shape}.")
    deaths = np.flatnonzero(e)
    pairs = 0.0
    score = 0.0
    for start in range(0, deaths.shape[0], block):
        i = deaths[start:start + block]
        ti, ri = t[i][:, None], r[i][:, None]
        comparable = (ti < t[None, :]) | ((ti == t[None, :]) & ~e[None, :])
        pairs += float(comparable.sum())
        score += float(((ri > r[None, :]) & comparable).sum())
        score += 0.5 * float(((ri == r[None, :]) & comparable).sum())
    return score / pairs if pairs else float("nan")
