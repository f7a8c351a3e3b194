"""Markdown tables, and our numbers matched to a paper table: shared by the report and the
claims (which the report includes), in a module of their own so neither imports the other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sparsefs.harness._results import Results
from sparsefs.harness._spec import PaperTable
from sparsefs.metrics._summary import best_over_k, mean_over_k, summarize

__all__ = ["md_table", "paper_comparison"]


def md_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def paper_comparison(table: PaperTable, results: Results) -> pd.DataFrame:
    """Our numbers matched to one paper table.

    Parameters
    ----------
    table : PaperTable
    results : Results
        Of the experiment the table refers to.

    Returns
    -------
    DataFrame
        One row per paper value: ``dataset, method, paper, paper_sd, paper_k, ours, ours_sd,
        ours_k, difference, note``; ours are scaled by ``table.scale``; NaN where we have no
        number (data set not run).
    """
    if table.statistic == "mean_over_k":
        ours = mean_over_k(results, table.metric, table.estimator, k_max=table.k_max)
        ours = ours.rename(columns={"sd_over_k": "sd"}).assign(k=np.nan)
    else:
        k_max = table.k if table.statistic == "at_k" else table.k_max
        summ = best_over_k(results, table.metric, table.estimator, k_max=k_max) \
            if table.statistic == "best_over_k" else None
        if summ is None:
            s = summarize(results)
            s = s[(s["metric"] == table.metric) & (s["k"] == table.k)]
            if table.estimator is not None:
                s = s[s["estimator"] == table.estimator]
            summ = s.rename(columns={"mean": "value"})
        ours = summ
    rows = []
    for v in table.values:
        hit = ours[(ours["dataset"] == v.dataset) & (ours["method"] == v.method)]
        if len(hit):
            h = hit.iloc[0]
            val, sd = h["value"] * table.scale, h["sd"] * table.scale
            k = h["k"]
        else:
            val = sd = k = np.nan
        rows.append({
            "dataset": v.dataset, "method": v.method, "paper": v.value, "paper_sd": v.sd,
            "paper_k": v.k, "ours": val, "ours_sd": sd, "ours_k": k,
            "difference": val - v.value if np.isfinite(val) else np.nan, "note": v.note,
        })
    return pd.DataFrame(rows)
