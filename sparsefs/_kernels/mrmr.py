r"""Minimum-redundancy maximum-relevance greedy selection (Peng, Long & Ding 2005).

Having selected the set :math:`S` (:math:`|S| = t \ge 1`), the next feature maximises

.. math::

    \text{difference: } D_j - \frac1t \sum_{s \in S} R_{js}, \qquad
    \text{quotient: } D_j \Big/ \frac1t \sum_{s \in S} R_{js},

with relevance :math:`D_j` and redundancy :math:`R_{js} \ge 0`: mutual information (MID, MIQ;
Peng et al.) or the F statistic and the absolute correlation (FCD, FCQ; Ding & Peng). The first
feature is the most relevant one.

Because :math:`R \ge 0`, the redundancies already computed give an upper bound of every
candidate's criterion; candidates are evaluated lazily, best bound first, and a feature is
selected once its exact criterion beats every other bound. The result is the exact greedy
selection while, for the difference form, the redundancy of most weak candidates is never
computed (the costly part when :math:`R` is a nearest-neighbour MI estimate).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["MRMRPath", "abs_correlation", "mrmr_greedy", "standardize_columns"]


@dataclass
class MRMRPath:
    """Outcome of :func:`mrmr_greedy`.

    Attributes
    ----------
    order : ndarray of int
        The selected features, in selection order.
    criterion : ndarray
        The criterion of each selected feature when it was selected (the first one: its
        relevance).
    redundancy : ndarray
        Its mean redundancy with the features selected before it (0 for the first).
    n_evaluations : int
        Redundancy values computed.
    """

    order: np.ndarray
    criterion: np.ndarray
    redundancy: np.ndarray
    n_evaluations: int


def standardize_columns(X: np.ndarray) -> np.ndarray:
    """Columns centred and scaled to unit norm (constant columns: zero), overflow-safe."""
    X = np.asarray(X, dtype=np.float64)
    amax = np.abs(X).max(axis=0) if X.shape[0] else np.zeros(X.shape[1])
    Xs = X / np.where(amax > 0, amax, 1.0)
    Xs = Xs - Xs.mean(axis=0)
    norms = np.sqrt(np.einsum("ij,ij->j", Xs, Xs))
    Xs /= np.where(norms > 0, norms, 1.0)
    return Xs


def abs_correlation(Xs: np.ndarray, s: int, columns: np.ndarray) -> np.ndarray:
    """|Pearson correlation| of feature ``s`` with ``columns``, for :func:`standardize_columns`
    output (0 for a constant column)."""
    return np.minimum(np.abs(Xs[:, columns].T @ Xs[:, s]), 1.0)


def mrmr_greedy(
    relevance: np.ndarray,
    redundancy: Callable[[int, np.ndarray], np.ndarray],
    n_select: int | None,
    *,
    quotient: bool = False,
    eligible: np.ndarray | None = None,
    floor: float = 1e-12,
    batch: int = 64,
) -> MRMRPath:
    r"""Greedy mRMR selection with lazy evaluation of the redundancy terms.

    Parameters
    ----------
    relevance : ndarray of shape (n_features,)
        :math:`D_j`.
    redundancy : callable ``(s, columns) -> ndarray``
        :math:`R_{js} \ge 0` for ``j`` in ``columns`` and a selected feature ``s``.
    n_select : int or None
        How many features to select; ``None`` selects while the criterion shows a gain
        (difference > 0, quotient > 1), i.e. while the next feature's relevance exceeds its
        mean redundancy with those already selected.
    quotient : bool, default=False
        Quotient (MIQ / FCQ) instead of difference (MID / FCD) form.
    eligible : ndarray of bool, optional
        Features that may be selected (default: all).
    floor : float, default=1e-12
        The mean redundancy is floored here in the quotient, so a relevant candidate with no
        redundancy gets a huge (finite) criterion.
    batch : int, default=64
        Candidates whose redundancies are brought up to date together.

    Returns
    -------
    MRMRPath
    """
    d = relevance.shape[0]
    eligible = np.ones(d, dtype=bool) if eligible is None else eligible.copy()
    limit = int(eligible.sum()) if n_select is None else min(n_select, int(eligible.sum()))
    order, crit, reds = [], [], []
    if limit == 0:
        return MRMRPath(np.zeros(0, dtype=np.intp), np.zeros(0), np.zeros(0), 0)
    cand = np.flatnonzero(eligible)
    first = int(cand[np.argmax(relevance[cand])])  # argmax: the lowest index among ties
    if n_select is None and not (relevance[first] > 0):
        return MRMRPath(np.zeros(0, dtype=np.intp), np.zeros(0), np.zeros(0), 0)
    order.append(first)
    crit.append(float(relevance[first]))
    reds.append(0.0)
    eligible[first] = False
    red_sum = np.zeros(d)
    n_done = np.zeros(d, dtype=np.intp)  # how many selected features red_sum[j] includes
    n_eval = 0
    while len(order) < limit:
        t = len(order)
        cand = np.flatnonzero(eligible)
        while True:
            mean_lb = red_sum[cand] / t  # lower bound of the mean redundancy
            bound = (relevance[cand] / np.maximum(mean_lb, floor) if quotient
                     else relevance[cand] - mean_lb)
            # best bound first; ties: lower feature index
            rank = np.lexsort((cand, -bound))
            top = cand[rank[0]]
            if n_done[top] == t:
                break
            stale = cand[rank][n_done[cand[rank]] < t][:batch]
            for pos in range(int(n_done[stale].min()), t):
                cols = stale[n_done[stale] <= pos]
                red_sum[cols] += redundancy(order[pos], cols)
                n_done[cols] = pos + 1
                n_eval += cols.size
        value = float(bound[rank[0]])
        if n_select is None and not (value > (1.0 if quotient else 0.0)):
            break
        order.append(int(top))
        crit.append(value)
        reds.append(float(red_sum[top] / t))
        eligible[top] = False
    return MRMRPath(np.asarray(order, dtype=np.intp), np.asarray(crit), np.asarray(reds), n_eval)
