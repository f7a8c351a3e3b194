"""Small readers of stored results shared by the claim checks of the reproduction hooks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sparsefs.harness._claims import ClaimNotRun, experiment_results
from sparsefs.metrics._summary import best_over_k

__all__ = ["best_cells", "close_to_best", "fmt_ranking", "lower_cost", "mean_by_method",
           "need_dataset", "stable_across", "support_frequency"]


def need_dataset(frame: pd.DataFrame, dataset: str, what: str = "results") -> pd.DataFrame:
    """Rows of ``dataset``; :class:`ClaimNotRun` when there are none."""
    rows = frame[frame["dataset"] == dataset]
    if rows.empty:
        raise ClaimNotRun(f"no {what} for {dataset} (not run here)")
    return rows


def mean_by_method(reproduction: Any, experiment: str, dataset: str, metric: str,
                   estimator: str) -> pd.Series:
    """Mean over folds / splits / repetitions of ``metric`` per method (sorted, best first
    for error-like metrics is the caller's business)."""
    table = experiment_results(reproduction, experiment).table
    rows = table[(table["metric"] == metric) & (table["estimator"] == estimator)]
    rows = need_dataset(rows, dataset)
    return rows.groupby("method", sort=False)["value"].mean()


def fmt_ranking(means: pd.Series, *, ascending: bool, digits: int = 3, top: int | None = None
                ) -> str:
    """``"a 0.011, b 0.024, ..."`` best first."""
    order = means.sort_values(ascending=ascending)
    if top is not None:
        order = order.iloc[:top]
    return ", ".join(f"{m} {v:.{digits}f}" for m, v in order.items())


def support_frequency(reproduction: Any, experiment: str, dataset: str, method: str
                      ) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """Share of folds / splits in which each feature is selected, its mean score, and the
    per-fold rows (columns ``fold, feature, score, selected``)."""
    res = experiment_results(reproduction, experiment)
    if res.supports is None:
        raise ClaimNotRun(f"experiment `{experiment}` recorded no per-split selections")
    sup = res.supports[(res.supports["method"] == method)]
    sup = need_dataset(sup, dataset, f"selections of {method}")
    freq = sup.groupby("feature")["selected"].mean().sort_index().to_numpy(dtype=float)
    score = sup.groupby("feature")["score"].mean().sort_index().to_numpy(dtype=float)
    return freq, score, sup


def best_cells(reproduction: Any, experiment: str, metric: str, estimator: str | None,
               k_max: int | None = None) -> pd.DataFrame:
    """:func:`~sparsefs.harness.best_over_k` of a stored experiment (the one tie rule);
    :class:`ClaimNotRun` when the metric or estimator was not recorded."""
    try:
        return best_over_k(experiment_results(reproduction, experiment), metric, estimator,
                           k_max=k_max)
    except ValueError as exc:
        raise ClaimNotRun(f"`{experiment}`: {exc}") from exc


def close_to_best(reproduction: Any, *, experiments: Sequence[str], method: str,
                  rivals: Sequence[str], tolerance: float, metric: str = "accuracy",
                  estimator: str | None = None, k_max: int | None = None):
    """``method``'s best-over-k ``metric`` within ``tolerance`` of the best of ``rivals``, data
    set by data set (a :class:`~sparsefs.harness.ClaimVerdict`: ``reproduced`` when it holds
    on every data set)."""
    from sparsefs.harness._claims import ClaimVerdict, fraction_verdict

    ok, parts = 0, []
    for exp in experiments:
        best = best_cells(reproduction, exp, metric, estimator, k_max)
        best = best[best["estimator"] != "selection"]
        for ds, g in best.groupby("dataset", sort=False):
            by = g.set_index("method")["value"]
            others = by[by.index.isin(list(rivals))]
            if method not in by.index or others.empty:
                continue
            gap = float(by[method] - others.max())
            ok += int(gap >= -tolerance)
            parts.append(f"{ds} {gap:+.3f}")
    if not parts:
        raise ClaimNotRun(f"{method} and {list(rivals)} were not run together")
    return ClaimVerdict(
        fraction_verdict(ok, len(parts), all_for_reproduced=False),
        f"{method} − best rival: " + ", ".join(parts),
        f"rule: best {metric} over k within {tolerance:g} of the best of "
        f"{', '.join(rivals)} on ≥ 75% of the data sets; {ok} of {len(parts)}.")


def lower_cost(reproduction: Any, *, experiments: Sequence[str], method: str,
               rivals: Sequence[str], factor: float = 1.0):
    """``method``'s mean fit time at least ``factor`` times smaller than each rival's, data set
    by data set (timings of one run, so comparable with each other)."""
    from sparsefs.harness._claims import ClaimVerdict, fraction_verdict

    ok, n, ratios = 0, 0, []
    for exp in experiments:
        t = experiment_results(reproduction, exp).table
        ft = t[t["metric"] == "fit_time"].groupby(["dataset", "method"])["value"].mean()
        for ds in ft.index.get_level_values(0).unique():
            by = ft.loc[ds]
            if method not in by.index:
                continue
            for rival in rivals:
                if rival in by.index and by[method] > 0:
                    r = float(by[rival] / by[method])
                    ratios.append(r)
                    n += 1
                    ok += int(r >= factor)
    if not n:
        raise ClaimNotRun(f"{method} and {list(rivals)} were not timed together")
    return ClaimVerdict(
        fraction_verdict(ok, n, all_for_reproduced=False),
        f"rival / {method} fit time: median ×{np.median(ratios):.1f} (range "
        f"×{min(ratios):.1f}-×{max(ratios):.0f}) over {n} (data set, rival) pairs",
        f"rule: ≥ ×{factor:g} faster than {', '.join(rivals)} on ≥ 75% of the pairs; "
        f"{ok} of {n}.")


def stable_across(reproduction: Any, *, experiment: str, metric: str, estimator: str | None,
                  methods: Sequence[str], spread: float, k_max: int | None = None):
    """The best-over-k ``metric`` varies by at most ``spread`` across ``methods`` (one method's
    settings, or its variants with other classifiers), data set by data set."""
    from sparsefs.harness._claims import ClaimVerdict, fraction_verdict

    best = best_cells(reproduction, experiment, metric, estimator, k_max)
    mat = best.pivot_table(index="dataset", columns="method", values="value", sort=False)
    ours = [m for m in methods if m in mat.columns]
    if len(ours) < 2:
        raise ClaimNotRun(f"fewer than two of the settings {list(methods)} were run")
    rng = mat[ours].max(axis=1) - mat[ours].min(axis=1)
    ok = int((rng <= spread).sum())
    return ClaimVerdict(fraction_verdict(ok, len(rng), all_for_reproduced=False),
                        "range over settings: " + ", ".join(f"{d} {v:.3f}" for d, v in
                                                            rng.items()),
                        f"rule: range ≤ {spread:g} on ≥ 75% of the data sets; {ok} of "
                        f"{len(rng)}; settings: {', '.join(ours)}.")
