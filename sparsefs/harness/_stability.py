"""Stability of each method's selection across the folds of a run (Nogueira et al. 2018).

Reads the per-fold supports that the runner records with ``record_support = true``
(:attr:`Results.supports`): for each (data set, method, k), the supports of the folds form the
binary matrix of :func:`sparsefs.metrics.nogueira_index`; the report shows its value with the
confidence interval and the features chosen in at least 80 % of the folds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sparsefs.metrics import nogueira_index

__all__ = ["STABLE_SHARE", "stability_markdown", "stability_table"]

#: a feature is reported as stable when chosen in at least this share of the folds
STABLE_SHARE = 0.8

_COLUMNS = ["dataset", "method", "k", "n_folds", "mean_selected", "value", "ci_low",
            "ci_high", "n_stable", "stable_features"]


def stability_table(results: Any, *, min_share: float = STABLE_SHARE,
                    confidence: float = 0.95) -> pd.DataFrame:
    """Per (data set, method, k): the Nogueira index of the fold supports and the stable set.

    Parameters
    ----------
    results : Results
        With ``supports`` (a run with ``record_support = true``).
    min_share : float in (0, 1], default=0.8
        A feature is stable when selected in at least this share of the folds.
    confidence : float in (0, 1), default=0.95

    Returns
    -------
    pandas.DataFrame
        Columns ``dataset, method, k, n_folds, mean_selected, value, ci_low, ci_high,
        n_stable, stable_features`` (feature indices, most frequent first, as a list).
        ``value`` and the interval are NaN with fewer than 2 folds or when every fold keeps
        no feature or every feature (the index is then undefined).

    Raises
    ------
    ValueError
        When the results hold no supports.
    """
    supports = getattr(results, "supports", None)
    if supports is None:
        raise ValueError(
            "these results hold no per-fold supports; run the spec with record_support = true."
        )
    if not 0 < min_share <= 1:
        raise ValueError(f"min_share={min_share!r} must be in (0, 1].")
    rows = []
    for (dataset, method, k), group in supports.groupby(["dataset", "method", "k"], sort=False):
        p = int(group["feature"].max()) + 1
        folds = list(dict.fromkeys(group["fold"]))
        Z = np.zeros((len(folds), p), dtype=bool)
        fold_row = {f: i for i, f in enumerate(folds)}
        chosen = group[group["selected"].astype(bool)]
        Z[chosen["fold"].map(fold_row).to_numpy(), chosen["feature"].to_numpy(dtype=np.int64)] = 1
        freq = Z.mean(axis=0)
        kbar = float(Z.sum(axis=1).mean())
        value = lo = hi = float("nan")
        if Z.shape[0] >= 2 and 0 < kbar < p:
            est = nogueira_index(Z, confidence=confidence)
            value, lo, hi = est.value, est.ci_low, est.ci_high
        stable = np.flatnonzero(freq >= min_share - 1e-12)
        stable = stable[np.argsort(-freq[stable], kind="stable")]
        rows.append((dataset, method, int(k), len(folds), kbar, value, lo, hi, int(stable.size),
                     stable.tolist()))
    return pd.DataFrame(rows, columns=_COLUMNS)


def _features_text(features: list[int], names: Any, limit: int = 12) -> str:
    if not features:
        return "—"
    shown = [str(names[j]) if names is not None and j < len(names) else f"x{j}"
             for j in features[:limit]]
    more = f" (+{len(features) - limit} more)" if len(features) > limit else ""
    return ", ".join(shown) + more


def stability_markdown(results: Any, *, feature_names: Any = None) -> list[str]:
    """The report's "Stability across folds" section (empty when no supports were recorded).

    Parameters
    ----------
    results : Results
    feature_names : sequence of str, optional
        Names for the feature indices (default ``x<index>``).

    Returns
    -------
    list of str
        Markdown lines.
    """
    if getattr(results, "supports", None) is None or results.supports.empty:
        return []
    table = stability_table(results)
    pct = round(100 * STABLE_SHARE)
    out = ["### Stability across folds", "",
           "Nogueira, Sechidis & Brown (JMLR 2018) stability of each method's selected set over "
           "the folds (1: the same features in every fold; about 0: as different as random sets "
           f"of the same sizes), with its 95 % confidence interval, and the features chosen in "
           f"at least {pct} % of the folds (most frequent first; x<j> is the 0-based column j). "
           "`k = 0`: the method's own "
           "rule.", ""]
    header = ["data set", "method", "k", "folds", "mean kept", "stability [95 % CI]",
              f"features in ≥ {pct} % of folds"]
    rows = []
    for r in table.itertuples(index=False):
        stab = ("undefined" if np.isnan(r.value) else
                f"{r.value:.3f} [{r.ci_low:.3f}, {r.ci_high:.3f}]")
        rows.append([r.dataset, r.method, r.k, r.n_folds, f"{r.mean_selected:.3g}", stab,
                     _features_text(r.stable_features, feature_names)])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return [*out, *lines, ""]
