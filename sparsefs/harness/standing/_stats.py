r"""Statistics of the standing page: ranks, Friedman / Iman-Davenport / Nemenyi (Demšar 2006),
Wilcoxon signed-rank against the simple winner with Holm's correction, ranking similarity,
selection stability (Nogueira et al. 2018), and the plain-language verdicts computed from them.

Everything here reads a *scores* table (data sets as rows, methods as columns, one number per
cell: e.g. the nested-CV accuracy) or the stored top-k feature lists; nothing is fitted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from sparsefs._kernels.multiple_testing import adjust_pvalues
from sparsefs.metrics._summary import RankTestResult, average_ranks, friedman_nemenyi

__all__ = [
    "TIE_TOL",
    "PairwiseResult",
    "cluster_order",
    "pairwise_wilcoxon_holm",
    "rank_tests",
    "ranking_similarity",
    "simple_winner",
    "stability_by_dataset",
    "summarise_stability",
    "verdict",
]

TIE_TOL = 1e-9
"""Two scores closer than this are a tie (a "tie" in the win / tie / loss counts)."""


def rank_tests(scores: pd.DataFrame, *, greater_is_better: bool = True,
               alpha: float = 0.05) -> RankTestResult:
    """Friedman's test with the Iman-Davenport F and Nemenyi's critical difference
    (:func:`sparsefs.harness.friedman_nemenyi`) on the complete rows of ``scores``."""
    return friedman_nemenyi(scores, greater_is_better=greater_is_better, alpha=alpha)


def simple_winner(scores: pd.DataFrame, candidates: Sequence[str], *,
                  greater_is_better: bool = True) -> str:
    """The candidate with the best average rank (ranks over every method of ``scores``, on
    its complete rows); ties go to the first candidate listed.

    Raises
    ------
    ValueError
        When no candidate is a column of ``scores``.
    """
    present = [c for c in candidates if c in scores.columns]
    if not present:
        raise ValueError(f"none of the simple methods {list(candidates)} has scores.")
    full = scores.dropna(axis=0, how="any")
    ranks = average_ranks(full, greater_is_better=greater_is_better)
    best = min(ranks[c] for c in present)
    return next(c for c in present if abs(ranks[c] - best) <= TIE_TOL)


@dataclass(frozen=True)
class PairwiseResult:
    """Every method against one reference: Wilcoxon signed-rank tests, Holm-adjusted.

    Attributes
    ----------
    reference : str
    table : DataFrame
        Indexed by method: ``n`` (data sets with both scores), ``wins`` / ``ties`` /
        ``losses`` (against the reference, ties within :data:`TIE_TOL`), ``mean_diff``
        (method minus reference, in the direction "higher is better"), ``r_plus`` /
        ``r_minus`` (the rank sums of the positive and negative differences, zero differences
        split evenly, Demšar 2006 section 3.1.3), ``pvalue`` (two-sided), ``p_holm`` (Holm
        over the methods compared), ``significant`` (``p_holm < alpha``), ``direction``
        (``"better"``, ``"worse"`` or ``""``).
    alpha : float
    """

    reference: str
    table: pd.DataFrame
    alpha: float


def _rank_sums(d: np.ndarray) -> tuple[float, float]:
    """R+ and R- with the ranks of zero differences split evenly between them."""
    ranks = stats.rankdata(np.abs(d))
    zero = d == 0
    half = ranks[zero].sum() / 2.0
    return float(ranks[d > 0].sum() + half), float(ranks[d < 0].sum() + half)


def pairwise_wilcoxon_holm(scores: pd.DataFrame, reference: str, *,
                           methods: Sequence[str] | None = None,
                           greater_is_better: bool = True,
                           alpha: float = 0.05) -> PairwiseResult:
    """Each method against ``reference`` over the data sets: the Wilcoxon signed-rank test
    (two-sided; zero differences split, ``zero_method="zsplit"``, as Demšar recommends), then
    Holm's step-down correction over the methods compared.

    Parameters
    ----------
    scores : DataFrame of shape (n_datasets, n_methods)
    reference : str
        A column of ``scores`` (the simple winner).
    methods : sequence of str, optional
        The methods compared (default: every other column).
    greater_is_better : bool, default=True
    alpha : float, default=0.05

    Returns
    -------
    PairwiseResult
    """
    if reference not in scores.columns:
        raise ValueError(f"reference {reference!r} is not a column of the scores.")
    methods = [m for m in (methods if methods is not None else scores.columns)
               if m != reference]
    sign = 1.0 if greater_is_better else -1.0
    rows = []
    for m in methods:
        pair = scores[[m, reference]].dropna()
        d = sign * (pair[m].to_numpy(float) - pair[reference].to_numpy(float))
        d = np.where(np.abs(d) <= TIE_TOL, 0.0, d)
        n = int(d.shape[0])
        wins, ties, losses = int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum())
        if n == 0:
            rows.append((m, 0, 0, 0, 0, np.nan, np.nan, np.nan, np.nan))
            continue
        r_plus, r_minus = _rank_sums(d)
        if ties == n:
            p = 1.0
        else:
            p = float(stats.wilcoxon(d, zero_method="zsplit", alternative="two-sided").pvalue)
        rows.append((m, n, wins, ties, losses, float(d.mean()), r_plus, r_minus, p))
    table = pd.DataFrame(rows, columns=["method", "n", "wins", "ties", "losses", "mean_diff",
                                        "r_plus", "r_minus", "pvalue"]).set_index("method")
    ok = table["pvalue"].notna().to_numpy()
    holm = np.full(len(table), np.nan)
    if ok.any():
        holm[ok] = adjust_pvalues(table["pvalue"].to_numpy(float)[ok], method="holm")
    table["p_holm"] = holm
    table["significant"] = table["p_holm"] < alpha
    table["direction"] = np.where(~table["significant"], "",
                                  np.where(table["mean_diff"] > 0, "better", "worse"))
    return PairwiseResult(reference=reference, table=table, alpha=alpha)


def ranking_similarity(tops: Mapping[tuple, Mapping[str, Sequence[int]]], k: int,
                       methods: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean overlap of the methods' top-k feature sets, :math:`|A \\cap B| / k`.

    Parameters
    ----------
    tops : mapping
        ``(data set, fold) -> {method: feature indices best first}`` (at least k of them;
        shorter lists are used as they are, the overlap still divided by k).
    k : int
    methods : sequence of str, optional
        Order of the result (default: order of first appearance).

    Returns
    -------
    DataFrame of shape (n_methods, n_methods)
        The mean over the (data set, fold) pairs where both methods have a list; 1 on the
        diagonal; NaN for pairs never seen together.
    """
    if methods is None:
        methods = list(dict.fromkeys(m for v in tops.values() for m in v))
    idx = {m: i for i, m in enumerate(methods)}
    total = np.zeros((len(methods), len(methods)))
    count = np.zeros_like(total)
    for lists in tops.values():
        sets = {m: {int(j) for j in list(v)[:k]} for m, v in lists.items() if m in idx}
        names = list(sets)
        for a in range(len(names)):
            for b in range(a, len(names)):
                ov = len(sets[names[a]] & sets[names[b]]) / float(k)
                i, j = idx[names[a]], idx[names[b]]
                total[i, j] += ov
                count[i, j] += 1
                if i != j:
                    total[j, i] += ov
                    count[j, i] += 1
    with np.errstate(invalid="ignore"):
        sim = total / count
    return pd.DataFrame(sim, index=list(methods), columns=list(methods))


def cluster_order(similarity: pd.DataFrame) -> list[str]:
    """Methods in the leaf order of an average-linkage clustering of ``1 - similarity``
    (the order of the clustered heat map). NaN similarities count as 0."""
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    names = list(similarity.index)
    if len(names) < 3:
        return names
    dist = 1.0 - np.nan_to_num(similarity.to_numpy(float), nan=0.0)
    dist = np.clip((dist + dist.T) / 2.0, 0.0, None)
    np.fill_diagonal(dist, 0.0)
    tree = linkage(squareform(dist, checks=False), method="average")
    return [names[i] for i in leaves_list(tree)]


def stability_by_dataset(supports: Mapping[tuple[str, str], np.ndarray],
                         confidence: float = 0.95) -> pd.DataFrame:
    """The Nogueira stability of each (data set, method)'s fold supports, with its CI.

    Parameters
    ----------
    supports : mapping
        ``(data set, method) -> bool array (n_folds, n_features)``.
    confidence : float, default=0.95

    Returns
    -------
    DataFrame
        Columns ``dataset, method, value, variance, ci_low, ci_high, n_folds`` (NaN when
        undefined: fewer than 2 folds, or every fold keeps nothing or everything).
    """
    from sparsefs.metrics import nogueira_index

    rows = []
    for (ds, m), Z in supports.items():
        Z = np.asarray(Z, dtype=bool)
        kbar = Z.sum(axis=1).mean() if Z.size else 0.0
        if Z.shape[0] < 2 or not 0 < kbar < Z.shape[1]:
            rows.append((ds, m, np.nan, np.nan, np.nan, np.nan, Z.shape[0]))
            continue
        est = nogueira_index(Z, confidence=confidence)
        rows.append((ds, m, est.value, est.variance, est.ci_low, est.ci_high, Z.shape[0]))
    return pd.DataFrame(rows, columns=["dataset", "method", "value", "variance", "ci_low",
                                       "ci_high", "n_folds"])


def summarise_stability(table: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    r"""Per method: the mean Nogueira stability over data sets, with the interval
    :math:`\bar\Phi \pm z \sqrt{\sum_d \widehat{\mathrm{Var}}_d} / D` (data sets are
    independent, each estimate asymptotically normal).

    Returns
    -------
    DataFrame
        Indexed by method: ``value, ci_low, ci_high, n_datasets``.
    """
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    rows = []
    for m, g in table.groupby("method", sort=False):
        g = g.dropna(subset=["value"])
        if g.empty:
            rows.append((m, np.nan, np.nan, np.nan, 0))
            continue
        mean = float(g["value"].mean())
        half = z * float(np.sqrt(np.clip(g["variance"], 0, None).sum())) / len(g)
        rows.append((m, mean, mean - half, mean + half, len(g)))
    return pd.DataFrame(rows, columns=["method", "value", "ci_low", "ci_high",
                                       "n_datasets"]).set_index("method")


def _fmt_p(p: float) -> str:
    if not np.isfinite(p):
        return "n/a"
    return f"{p:.2g}" if p >= 0.001 else "< 0.001"


def verdict(method: str, pairwise: PairwiseResult, scores: pd.DataFrame, *,
            metric: str, ranks: pd.Series | None = None, digits: int = 3) -> str:
    """One plain-language sentence: ``method`` against the simple winner, from the numbers.

    "beats X" / "worse than X" when Holm's correction leaves the Wilcoxon test significant,
    else "indistinguishable from X"; then the win / tie / loss counts, the mean difference,
    the data sets where it is ahead, and its average rank.
    """
    ref = pairwise.reference
    if method == ref:
        return f"the simple winner (reference of the pairwise tests) on {metric}."
    row = pairwise.table.loc[method]
    if row["n"] == 0:
        return f"not comparable with {ref}: no data set where both ran."
    head = {"better": f"beats {ref}", "worse": f"worse than {ref}"}.get(
        row["direction"], f"indistinguishable from {ref}")
    pair = scores[[method, ref]].dropna()
    ahead = [str(d) for d in pair.index if pair.loc[d, method] - pair.loc[d, ref] > TIE_TOL]
    where = (f"; ahead on {', '.join(ahead)}" if 0 < len(ahead) <= 4 else
             f"; ahead on {len(ahead)} of {int(row['n'])}" if ahead else "; ahead on none")
    rank = f"; average rank {ranks[method]:.1f}" if ranks is not None and method in ranks else ""
    return (f"{head} on {metric} over {int(row['n'])} data sets (wins / ties / losses "
            f"{int(row['wins'])} / {int(row['ties'])} / {int(row['losses'])}, mean "
            f"{row['mean_diff']:+.{digits}f}, Holm p = {_fmt_p(row['p_holm'])}){where}{rank}.")
