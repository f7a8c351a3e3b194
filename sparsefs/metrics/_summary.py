"""Summaries of a results table: mean ± sd, best over k, mean over k, Friedman / Nemenyi."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "GREATER_IS_BETTER",
    "TIE_DECIMALS",
    "RankTestResult",
    "average_ranks",
    "best_over_k",
    "friedman_nemenyi",
    "mean_over_k",
    "nemenyi_critical_difference",
    "score_matrix",
    "summarize",
]

logger = logging.getLogger("sparsefs.harness")

GREATER_IS_BETTER: dict[str, bool] = {
    "accuracy": True,
    "error": False,
    "precision_macro": True,
    "recall_macro": True,
    "f1_macro": True,
    "roc_auc": True,
    "acc": True,
    "nmi": True,
    "cer": False,
    "r2": True,
    "rmse": False,
    "c_index": True,
    "fit_time": False,
    "n_selected": False,
    "relevant_kept": True,
    "noise_kept": False,
    "support_precision": True,
    "support_recall": True,
    "support_f1": True,
}
"""Direction of every metric the harness writes (used when a summary picks a best value)."""

_KEYS = ["experiment", "dataset", "method", "estimator", "metric", "k"]

TIE_DECIMALS = 9
"""The tie rule of :func:`best_over_k` (and of every report): fold means are rounded to this
many decimals before the best is chosen, and ties go to the smallest k. Fold means that are
equal in exact arithmetic can differ in the last bits (a mean of 13/15 and 15/15 against one of
14/15 and 14/15), which would otherwise make the chosen k depend on rounding noise."""


def _direction(metric: str, greater_is_better: bool | None) -> bool:
    if greater_is_better is not None:
        return bool(greater_is_better)
    if metric not in GREATER_IS_BETTER:
        raise ValueError(
            f"metric {metric!r} has no known direction; pass greater_is_better explicitly."
        )
    return GREATER_IS_BETTER[metric]


def _table(results) -> pd.DataFrame:
    table = getattr(results, "table", results)
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"expected Results or a DataFrame, got {type(results).__name__}.")
    if "experiment" not in table.columns:
        table = table.assign(experiment="experiment")
    return table


def summarize(results, *, ddof: int = 1) -> pd.DataFrame:
    """Mean, standard deviation and count over folds (and k-means runs) of every cell.

    Parameters
    ----------
    results : Results or DataFrame
        The tidy table of :func:`sparsefs.harness.run`.
    ddof : int, default=1
        Delta degrees of freedom of the sd (1: the sample sd; NaN with one fold).

    Returns
    -------
    DataFrame
        Columns ``experiment, dataset, method, estimator, metric, k, mean, sd, n``; NaN values
        (e.g. an AUC on a fold with one class) are left out of the mean.
    """
    table = _table(results)
    # a Results object keeps the summary of its table (claims and tables summarise the same
    # stored run many times; the per-group sd is the slow part): recomputed when the table
    # object or its shape changes
    cache = getattr(results, "__dict__", {}).get("_summaries") if table is not results else None
    token = (id(table), table.shape, ddof)
    if cache is not None and cache[0] == token and cache[1] is table:
        return cache[2].copy()
    grouped = table.groupby(_KEYS, sort=False, dropna=False)["value"]
    out = grouped.agg(mean="mean", sd=lambda v: v.std(ddof=ddof), n="count").reset_index()
    if table is not results and hasattr(results, "__dict__"):
        results.__dict__["_summaries"] = (token, table, out)
        return out.copy()
    return out


def _summary_rows(summary: pd.DataFrame, metric: str, estimator: str | None, k_max: int | None
            ) -> pd.DataFrame:
    sub = summary[summary["metric"] == metric]
    if estimator is not None:
        sub = sub[sub["estimator"] == estimator]
    if k_max is not None:
        # a method evaluated at a single k (all features, its own rule) is exempt from k_max
        n_k = sub.groupby(["experiment", "dataset", "method", "estimator"], sort=False)[
            "k"].transform("nunique")
        sub = sub[(sub["k"] <= k_max) | (n_k == 1)]
    if sub.empty:
        raise ValueError(
            f"no rows for metric={metric!r}"
            + (f", estimator={estimator!r}" if estimator is not None else "")
            + (f", k <= {k_max}" if k_max is not None else "")
            + f"; metrics present: {sorted(summary['metric'].unique())}, estimators: "
            f"{sorted(summary['estimator'].unique())}."
        )
    return sub


def best_over_k(
    results,
    metric: str,
    estimator: str | None = None,
    *,
    k_max: int | None = None,
    greater_is_better: bool | None = None,
    decimals: int = TIE_DECIMALS,
) -> pd.DataFrame:
    """The papers' table cell: the best fold-mean over k, and the k that achieves it.

    For every (experiment, data set, method, estimator), the fold-mean of ``metric`` is
    computed at each k; the best one (largest, or smallest for error-like metrics) is
    reported with its sd over folds and its k. The tie rule: the fold means are rounded to
    ``decimals`` decimals, then ties go to the smallest k (:data:`TIE_DECIMALS`); the value
    reported is the unrounded mean at that k. This is how the SMBA-CSFS tables are built ("max
    over m <= 20 of the fold-mean accuracy, (argmax m)").

    Parameters
    ----------
    results : Results or DataFrame
    metric : str
    estimator : str, optional
        Keep one downstream estimator (default: all, one row each).
    k_max : int, optional
        Only k <= k_max; a method evaluated at a single k (the all-features baseline, a
        method's own rule) is kept whatever its k.
    greater_is_better : bool, optional
        Default from :data:`GREATER_IS_BETTER`.
    decimals : int, default=TIE_DECIMALS
        The fold means are rounded to this many decimals before ties are broken.

    Returns
    -------
    DataFrame
        Columns ``experiment, dataset, method, estimator, metric, value, sd, k, n``.
    """
    up = _direction(metric, greater_is_better)
    sub = _summary_rows(summarize(results), metric, estimator, k_max).dropna(subset=["mean"])
    if sub.empty:
        raise ValueError(f"every value of {metric!r} is NaN.")
    sub = sub.sort_values("k", kind="stable")
    group = ["experiment", "dataset", "method", "estimator", "metric"]
    key = sub["mean"].round(decimals)
    key = key if up else -key
    idx = key.groupby([sub[c] for c in group], sort=False).idxmax()
    best = sub.loc[idx.to_numpy()]
    return best.rename(columns={"mean": "value"})[[*group, "value", "sd", "k", "n"]].reset_index(
        drop=True
    )


def mean_over_k(
    results,
    metric: str,
    estimator: str | None = None,
    *,
    k_max: int | None = None,
) -> pd.DataFrame:
    """The fold-mean of ``metric`` averaged over the k grid (area-under-the-curve style).

    Returns
    -------
    DataFrame
        Columns ``experiment, dataset, method, estimator, metric, value, sd_over_k, n_k``.
    """
    sub = _summary_rows(summarize(results), metric, estimator, k_max)
    group = ["experiment", "dataset", "method", "estimator", "metric"]
    out = sub.groupby(group, sort=False)["mean"].agg(
        value="mean", sd_over_k=lambda v: v.std(ddof=1), n_k="count"
    )
    return out.reset_index()


def score_matrix(best: pd.DataFrame, *, value: str = "value") -> pd.DataFrame:
    """Pivot a per-(data set, method) table into data sets x methods (order of appearance)."""
    methods = list(dict.fromkeys(best["method"]))
    datasets = list(dict.fromkeys(best["dataset"]))
    mat = best.pivot_table(index="dataset", columns="method", values=value, aggfunc="first",
                           sort=False)
    return mat.reindex(index=datasets, columns=methods)


# --------------------------------------------------------------------------------------------
# Friedman test with the Nemenyi post-hoc (Demšar 2006)
# --------------------------------------------------------------------------------------------


def average_ranks(scores: pd.DataFrame, *, greater_is_better: bool = True) -> pd.Series:
    """Average rank of every method (column) over data sets (rows); 1 = best, ties averaged.

    Parameters
    ----------
    scores : DataFrame of shape (n_datasets, n_methods)
    greater_is_better : bool, default=True

    Returns
    -------
    Series
        Indexed by method, in the columns' order.
    """
    values = scores.to_numpy(dtype=float)
    if np.isnan(values).any():
        raise ValueError("scores hold NaN; drop the data sets a method has no value for.")
    ranks = stats.rankdata(-values if greater_is_better else values, axis=1)
    return pd.Series(ranks.mean(axis=0), index=scores.columns, name="average_rank")


def nemenyi_critical_difference(n_methods: int, n_datasets: int, alpha: float = 0.05) -> float:
    r"""Critical difference of the Nemenyi test (Demšar 2006, eq. 5).

    .. math:: CD = q_\alpha \sqrt{\frac{k(k+1)}{6N}}, \qquad
              q_\alpha = \frac{Q_{1-\alpha}(k, \infty)}{\sqrt 2}

    where :math:`Q` is the studentized range distribution
    (:data:`scipy.stats.studentized_range`) for ``k`` methods and infinite degrees of
    freedom. Two methods differ significantly when their average ranks differ by at least CD.

    Parameters
    ----------
    n_methods : int
        k >= 2.
    n_datasets : int
        N >= 1.
    alpha : float, default=0.05

    Returns
    -------
    float

    Examples
    --------
    Demšar's example: 4 methods on 14 data sets, q_0.05 = 2.569.

    >>> round(nemenyi_critical_difference(4, 14), 2)
    1.25
    """
    if n_methods < 2 or n_datasets < 1:
        raise ValueError(f"need >= 2 methods and >= 1 data set, got {n_methods}, {n_datasets}.")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r} must be in (0, 1).")
    q = stats.studentized_range.ppf(1 - alpha, n_methods, np.inf) / np.sqrt(2)
    return float(q * np.sqrt(n_methods * (n_methods + 1) / (6.0 * n_datasets)))


@dataclass(frozen=True)
class RankTestResult:
    """Friedman test and Nemenyi post-hoc on a data sets x methods table.

    Attributes
    ----------
    average_ranks : Series
        1 = best.
    statistic, pvalue : float
        Friedman's chi-square (with the tie correction, as :func:`scipy.stats.friedmanchisquare`)
        and its p-value (chi-square with k - 1 degrees of freedom).
    iman_davenport, iman_davenport_pvalue : float
        Iman and Davenport's F statistic, F(k - 1, (k - 1)(N - 1)), which Demšar recommends.
        When every data set ranks the methods alike its denominator is 0: F = inf and the
        p-value is undefined (NaN), whatever the Friedman p-value (0.135 for 3 methods on 2
        data sets).
    critical_difference : float
        Nemenyi's CD at ``alpha``.
    pairwise : DataFrame
        ``method_a, method_b, rank_difference, pvalue, significant`` for every pair.
    n_datasets, n_methods : int
    alpha : float
    """

    average_ranks: pd.Series
    statistic: float
    pvalue: float
    iman_davenport: float
    iman_davenport_pvalue: float
    critical_difference: float
    pairwise: pd.DataFrame
    n_datasets: int
    n_methods: int
    alpha: float


def friedman_nemenyi(
    scores: pd.DataFrame,
    *,
    greater_is_better: bool = True,
    alpha: float = 0.05,
) -> RankTestResult:
    """Friedman test over data sets, then Nemenyi's all-pairs comparison (Demšar 2006).

    Parameters
    ----------
    scores : DataFrame of shape (n_datasets, n_methods)
        One value per (data set, method), e.g. the best-over-k accuracy
        (:func:`best_over_k` then :func:`score_matrix`). Rows with NaN are dropped (logged).
    greater_is_better : bool, default=True
    alpha : float, default=0.05

    Returns
    -------
    RankTestResult
    """
    full = scores.dropna(axis=0, how="any")
    if len(full) < len(scores):
        logger.warning("Friedman test: dropped data sets with missing values: %s",
                       sorted(set(scores.index) - set(full.index)))
    n, k = full.shape
    if n < 2 or k < 2:
        raise ValueError(f"the Friedman test needs >= 2 data sets and >= 2 methods; got {n} x {k}.")
    values = full.to_numpy(dtype=float)
    ranks = stats.rankdata(-values if greater_is_better else values, axis=1)
    avg = ranks.mean(axis=0)
    # Friedman's statistic with the tie correction (as scipy.stats.friedmanchisquare).
    ssbn = (ranks.sum(axis=0) ** 2).sum()
    chi2 = 12.0 / (n * k * (k + 1)) * ssbn - 3.0 * n * (k + 1)
    ties = 0.0
    for row in ranks:
        _, counts = np.unique(row, return_counts=True)
        ties += (counts**3 - counts).sum()
    correction = 1.0 - ties / (n * (k**3 - k))
    chi2 = chi2 / correction if correction > 0 else 0.0
    pvalue = float(stats.chi2.sf(chi2, k - 1))
    denom = n * (k - 1) - chi2
    if denom > 0:
        ff = (n - 1) * chi2 / denom
        ff_p = float(stats.f.sf(ff, k - 1, (k - 1) * (n - 1)))
    else:  # perfect agreement of all data sets: the F approximation is undefined
        ff, ff_p = float("inf"), float("nan")
    cd = nemenyi_critical_difference(k, n, alpha)
    se = np.sqrt(k * (k + 1) / (6.0 * n))
    methods = list(full.columns)
    rows = []
    for a in range(k):
        for b in range(a + 1, k):
            diff = abs(avg[a] - avg[b])
            p = float(stats.studentized_range.sf(diff / se * np.sqrt(2), k, np.inf))
            rows.append((methods[a], methods[b], diff, min(1.0, p), diff >= cd))
    pairwise = pd.DataFrame(rows, columns=["method_a", "method_b", "rank_difference", "pvalue",
                                           "significant"])
    return RankTestResult(
        average_ranks=pd.Series(avg, index=methods, name="average_rank"),
        statistic=float(chi2),
        pvalue=pvalue,
        iman_davenport=float(ff),
        iman_davenport_pvalue=ff_p,
        critical_difference=cd,
        pairwise=pairwise,
        n_datasets=n,
        n_methods=k,
        alpha=alpha,
    )


def format_mean_sd(value: float, sd: float | None, k: int | None = None, *, digits: int = 3
                   ) -> str:
    """``"0.953 ± 0.021 (12)"``; NaN parts are left out."""
    if value is None or not np.isfinite(value):
        return "n/a"
    text = f"{value:.{digits}f}"
    if sd is not None and np.isfinite(sd):
        text += f" ± {sd:.{digits}f}"
    if k is not None:
        text += f" ({int(k)})"
    return text
