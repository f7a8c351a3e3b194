"""Figures of the harness and of fitted estimators. matplotlib is imported lazily.

Every function takes ``ax=None`` (then draws on ``plt.gca()``) and returns the Axes; none
calls ``plt.show()``. Nothing here fits a model or computes a selection: the inputs are results
tables, fitted estimators, or arrays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "method_styles",
    "place_legend",
    "plot_critical_difference",
    "plot_cv_curve",
    "plot_feature_scores",
    "plot_gap_curve",
    "plot_metric_vs_k",
    "plot_roc_curves",
]

_PLOT_HINT = 'sparsefs plotting needs matplotlib: pip install "sparsefs[plot]"'


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(_PLOT_HINT) from exc
    return plt


def _axes(ax):
    if ax is None:
        return _pyplot().gca()
    return ax


# --------------------------------------------------------------------------------------------
# metric vs number of selected features
# --------------------------------------------------------------------------------------------


def _frame(results) -> pd.DataFrame:
    table = getattr(results, "table", results)
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"expected Results or a DataFrame, got {type(results).__name__}.")
    return table


#: line styles combined with the ten default colours: 40 distinct (colour, line) pairs
_LINESTYLES = ("-", "--", ":", "-.")
_MARKERS = ("o", "s", "^", "D")


def method_styles(methods: Sequence[str]) -> dict[str, dict[str, Any]]:
    """A distinct ``color`` / ``linestyle`` / ``marker`` for each method, stable in the order
    given: the ten default colours first with solid lines, then again dashed, dotted and
    dash-dotted (and other markers), so that 40 methods stay distinguishable without relying on
    colour alone.

    Parameters
    ----------
    methods : sequence of str

    Returns
    -------
    dict
        method -> keyword arguments for ``Axes.plot``.
    """
    out = {}
    for i, m in enumerate(dict.fromkeys(methods)):
        group = (i // 10) % len(_LINESTYLES)
        out[m] = {"color": f"C{i % 10}", "linestyle": _LINESTYLES[group],
                  "marker": _MARKERS[group]}
    return out


def place_legend(ax: Any, n_entries: int, *, inside: str = "best", max_inside: int = 6) -> Any:
    """A legend inside the axes for a few entries; outside, to the right of the axes, in as
    many columns as needed to stay within the axes' height, for more (it then never covers the
    data). Returns the legend (None without labelled artists)."""
    handles, _ = ax.get_legend_handles_labels()
    if not handles:
        return None
    if n_entries <= max_inside:
        return ax.legend(loc=inside, fontsize="small")
    ncol = 1 + (n_entries - 1) // 18
    return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="x-small",
                     ncol=ncol, borderaxespad=0.0, frameon=False)


def _only(table: pd.DataFrame, column: str, value: Any, what: str) -> pd.DataFrame:
    present = list(dict.fromkeys(table[column]))
    if value is None:
        if len(present) > 1:
            raise ValueError(f"the results hold several {what}s {present}; pass {column}=...")
        return table
    if value not in present:
        raise ValueError(f"{column}={value!r} is not in the results ({present}).")
    return table[table[column] == value]


def plot_metric_vs_k(
    results: Any,
    metric: str = "accuracy",
    *,
    estimator: str | None = None,
    dataset: str | None = None,
    experiment: str | None = None,
    methods: Sequence[str] | None = None,
    show_sd: bool = True,
    styles: dict[str, dict[str, Any]] | None = None,
    legend: bool = True,
    ax: Any = None,
) -> Any:
    """A metric against the number of selected features, one line per method (the papers'
    curves), with a ±1 sd band over folds.

    Methods evaluated at a single k (the all-features baseline, a method's own rule) are drawn
    as dashed horizontal lines.

    Parameters
    ----------
    results : Results or DataFrame
        The tidy table of :func:`sparsefs.harness.run`.
    metric : str, default="accuracy"
    estimator : str, optional
        The downstream estimator; required when the table holds several.
    dataset, experiment : str, optional
        Required when the table holds several.
    methods : sequence of str, optional
        A subset (and order) of methods.
    show_sd : bool, default=True
    styles : dict, optional
        method -> line style (:func:`method_styles`; the default for the methods drawn).
    legend : bool, default=True
        Draw the legend (inside for up to 6 methods, else outside to the right,
        :func:`place_legend`); ``False`` leaves it to the caller (a figure-wide legend).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    from sparsefs.metrics._summary import summarize

    ax = _axes(ax)
    table = _frame(results)
    table = table[table["metric"] == metric]
    if table.empty:
        raise ValueError(f"no rows for metric {metric!r}.")
    table = table[table["estimator"] != "selection"] if metric not in (
        "fit_time", "n_selected", "relevant_kept", "noise_kept") else table
    if "experiment" in table.columns:
        table = _only(table, "experiment", experiment, "experiment")
    table = _only(table, "dataset", dataset, "data set")
    table = _only(table, "estimator", estimator, "estimator")
    summ = summarize(table)
    order = list(methods) if methods is not None else list(dict.fromkeys(summ["method"]))
    styles = styles or method_styles(order)
    many = len(order) > 10  # the bands of many methods hide each other
    for method in order:
        s = summ[summ["method"] == method].sort_values("k")
        if s.empty:
            raise ValueError(f"method {method!r} is not in the results.")
        style = styles.get(method) or method_styles([method])[method]
        color = style["color"]
        if s["k"].nunique() == 1:
            k = int(s["k"].iloc[0])
            label = f"{method} ({'own k' if k == 0 else f'k = {k}'})"
            ax.axhline(float(s["mean"].iloc[0]), color=color, linestyle="--", label=label,
                       linewidth=1.0)
            continue
        k, mean, sd = s["k"].to_numpy(), s["mean"].to_numpy(), s["sd"].to_numpy()
        marker = style["marker"] if len(k) < 40 else None
        ax.plot(k, mean, color=color, linestyle=style["linestyle"], marker=marker,
                markersize=3 if many else 5, linewidth=1.0 if many else 1.5, label=method)
        if show_sd and not many and np.isfinite(sd).any():
            sd = np.nan_to_num(sd)
            ax.fill_between(k, mean - sd, mean + sd, color=color, alpha=0.2, linewidth=0)
    ax.set_xlabel("number of selected features k")
    ax.set_ylabel(metric)
    title = [str(v) for v in (dataset, estimator) if v is not None]
    if title:
        ax.set_title(" — ".join(title))
    if legend:
        place_legend(ax, len(order))
    return ax


# --------------------------------------------------------------------------------------------
# ROC curves
# --------------------------------------------------------------------------------------------


def plot_roc_curves(
    y_true: Any,
    scores: Mapping[str, Any] | Any,
    *,
    label: str | None = None,
    ax: Any = None,
) -> Any:
    """ROC curves of one or more scorers on the same samples.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class labels; with two classes the larger label is the positive class; with more, the
        labels must be ``0..K-1`` (the column indices of ``scores``).
    scores : ndarray or mapping of name -> ndarray
        ``(n_samples,)`` (binary, positive-class score) or ``(n_samples, K)`` per-class scores
        (probabilities or decision values). For K > 2 the curve is the micro-average: all
        one-vs-rest (sample, class) pairs pooled. Columns of NaN (a class a model never saw)
        are left out.
    label : str, optional
        The legend label when ``scores`` is a single array.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    from sklearn.metrics import auc, roc_curve

    ax = _axes(ax)
    curves = dict(scores) if isinstance(scores, Mapping) else {label or "model": scores}
    y = np.asarray(y_true)
    classes = np.unique(y)
    styles = method_styles(list(curves))
    for name, s in curves.items():
        s = np.asarray(s, dtype=float)
        if s.ndim == 1 or (s.ndim == 2 and s.shape[1] == 2 and classes.shape[0] <= 2):
            score = s if s.ndim == 1 else s[:, 1]
            truth = y == classes[-1]
        else:
            onehot = np.zeros_like(s, dtype=bool)
            onehot[np.arange(y.shape[0]), y.astype(int)] = True
            keep = ~np.isnan(s).any(axis=0)
            truth, score = onehot[:, keep].ravel(), s[:, keep].ravel()
        fpr, tpr, _ = roc_curve(truth, score)
        style = styles[name]
        ax.plot(fpr, tpr, color=style["color"], linestyle=style["linestyle"],
                linewidth=1.0 if len(curves) > 10 else 1.5,
                label=f"{name} (AUC = {auc(fpr, tpr):.3f})")
    ax.plot([0, 1], [0, 1], color="0.6", linestyle=":", linewidth=1)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    place_legend(ax, len(curves), inside="lower right")
    return ax


# --------------------------------------------------------------------------------------------
# critical-difference diagram
# --------------------------------------------------------------------------------------------


def _cliques(ranks: np.ndarray, cd: float) -> list[tuple[int, int]]:
    """Maximal runs i..j of sorted ranks whose spread is below the critical difference."""
    out: list[tuple[int, int]] = []
    last_end = -1
    for i in range(ranks.shape[0]):
        j = i
        while j + 1 < ranks.shape[0] and ranks[j + 1] - ranks[i] < cd:
            j += 1
        if j > i and j > last_end:
            out.append((i, j))
            last_end = j
    return out


def plot_critical_difference(
    average_ranks: Mapping[str, float] | pd.Series,
    critical_difference: float,
    *,
    ax: Any = None,
) -> Any:
    """Demšar's critical-difference diagram.

    Methods are placed on a rank axis (1 = best, on the left); a bar of length CD is drawn
    above it, and methods whose average ranks differ by less than CD (not significantly
    different by the Nemenyi test) are joined by a thick line.

    Parameters
    ----------
    average_ranks : mapping or Series
        Method -> average rank (:func:`sparsefs.harness.friedman_nemenyi`).
    critical_difference : float
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        The method names are text artists; the clique lines carry the ``gid`` "clique".
    """
    ax = _axes(ax)
    series = pd.Series(dict(average_ranks), dtype=float).sort_values(kind="stable")
    names, ranks = list(series.index), series.to_numpy()
    k = len(names)
    if k < 2:
        raise ValueError("a critical-difference diagram needs at least 2 methods.")
    lo, hi = 1, max(k, int(np.ceil(ranks.max())))
    ax.set_xlim(lo - 0.3, hi + 0.3)
    n_left = (k + 1) // 2
    depth = max(n_left, k - n_left)
    ax.set_ylim(-(depth + 1.5), 1.6)
    ax.axis("off")
    ax.hlines(0, lo, hi, color="black", linewidth=1)
    step = 1 if hi - lo < 15 else 5  # two-digit ranks side by side would run together
    for t in range(lo, hi + 1):
        labelled = t in (lo, hi) or t % step == 0
        ax.vlines(t, 0, 0.15 if labelled else 0.08, color="black", linewidth=1)
        if labelled:
            ax.text(t, 0.25, str(t), ha="center", va="bottom", fontsize="small")
    # CD bar
    ax.hlines(1.2, lo, lo + critical_difference, color="black", linewidth=2, gid="cd")
    ax.text(lo + critical_difference / 2, 1.3, f"CD = {critical_difference:.2f}", ha="center",
            va="bottom", fontsize="small")
    for i, (name, r) in enumerate(zip(names, ranks)):
        if i < n_left:
            y = -(i + 1)
            x_text, ha = lo - 0.2, "right"
        else:
            y = -(k - i)
            x_text, ha = hi + 0.2, "left"
        ax.plot([r, r, x_text], [0, y, y], color="black", linewidth=0.8)
        ax.text(x_text, y, f"{name} ({r:.2f})", ha=ha, va="center", fontsize="small",
                gid="method")
    for n, (i, j) in enumerate(_cliques(ranks, critical_difference)):
        y = -0.4 - 0.25 * n
        ax.hlines(y, ranks[i] - 0.03, ranks[j] + 0.03, color="black", linewidth=4, gid="clique")
    return ax


# --------------------------------------------------------------------------------------------
# feature scores / weights
# --------------------------------------------------------------------------------------------


def plot_feature_scores(
    scores: Any,
    *,
    support: Any = None,
    true_support: Any = None,
    feature_names: Sequence[str] | None = None,
    top: int | None = None,
    ax: Any = None,
) -> Any:
    """Per-feature scores (or weights) with the selected features highlighted.

    All features: a stem plot over the feature index. With ``top``: a bar chart of the
    ``top`` highest scores, best first, labelled by name.

    Parameters
    ----------
    scores : fitted estimator or array-like of shape (n_features,)
        An estimator gives ``scores_`` (else ``feature_importances_`` or ``|coef_|``) and,
        unless ``support`` is passed, ``support_``.
    support : array-like of bool, optional
        The selected features (drawn in colour; the rest grey).
    true_support : array-like of bool, optional
        The truly relevant features (marked with a triangle), when known.
    feature_names : sequence of str, optional
        For ``top`` bars (default: ``x<index>``).
    top : int, optional
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    if hasattr(scores, "fit"):
        est = scores
        if hasattr(est, "scores_"):
            values = np.asarray(est.scores_, dtype=float)
        elif hasattr(est, "feature_importances_"):
            values = np.asarray(est.feature_importances_, dtype=float)
        elif hasattr(est, "coef_"):
            values = np.abs(np.atleast_2d(np.asarray(est.coef_, dtype=float))).sum(axis=0)
        else:
            raise TypeError(f"{type(est).__name__} has no scores_, feature_importances_ or coef_.")
        if support is None and hasattr(est, "support_"):
            support = est.support_
        if feature_names is None and hasattr(est, "feature_names_in_"):
            feature_names = est.feature_names_in_
    else:
        values = np.asarray(scores, dtype=float).ravel()
    p = values.shape[0]
    finite = values[np.isfinite(values)]
    cap = (finite.max() if finite.size else 1.0)
    shown = np.where(np.isposinf(values), cap * 1.05 if cap > 0 else 1.0, values)
    shown = np.where(np.isneginf(shown), finite.min() if finite.size else 0.0, shown)
    sel = np.zeros(p, dtype=bool) if support is None else np.asarray(support, dtype=bool)
    truth = None if true_support is None else np.asarray(true_support, dtype=bool)
    for name, arr in (("support", sel), ("true_support", truth)):
        if arr is not None and arr.shape != (p,):
            raise ValueError(f"{name} has shape {arr.shape}; expected ({p},).")
    names = (np.asarray(feature_names, dtype=str) if feature_names is not None
             else np.array([f"x{j}" for j in range(p)]))
    if top is not None:
        idx = np.argsort(-np.where(np.isnan(values), -np.inf, values), kind="stable")[:top]
        pos = np.arange(idx.shape[0])
        colors = ["C1" if sel[j] else "0.6" for j in idx]
        ax.bar(pos, shown[idx], color=colors, gid="scores")
        ax.set_xticks(pos)
        ax.set_xticklabels(names[idx], rotation=60, ha="right", fontsize="small")
        if truth is not None and truth[idx].any():
            hit = pos[truth[idx]]
            ax.plot(hit, shown[idx][truth[idx]], linestyle="none", marker="^", color="C3",
                    label="truly relevant", gid="truth")
        ax.set_xlabel("feature (best first)")
    else:
        x = np.arange(p)
        for mask, color, lab in ((~sel, "0.6", "not selected"), (sel, "C1", "selected")):
            if mask.any():
                ax.vlines(x[mask], 0, shown[mask], color=color, linewidth=1, label=lab,
                          gid="scores")
                ax.plot(x[mask], shown[mask], linestyle="none", marker="o", markersize=2.5,
                        color=color)
        if truth is not None and truth.any():
            ax.plot(x[truth], shown[truth], linestyle="none", marker="^", color="C3",
                    label="truly relevant", gid="truth")
        ax.set_xlabel("feature index")
    ax.set_ylabel("score")
    if support is not None or truth is not None:
        from matplotlib.patches import Patch

        handles, labels = ax.get_legend_handles_labels()
        if top is not None and support is not None:
            handles = [Patch(color="C1"), Patch(color="0.6"), *handles]
            labels = ["selected", "not selected", *labels]
        ax.legend(handles, labels, loc="best", fontsize="small")
    return ax


# --------------------------------------------------------------------------------------------
# tuning curves
# --------------------------------------------------------------------------------------------


def _curve(ax, x, mean, sd, chosen, xlabel, ylabel, chosen_label, band: bool):
    x = np.asarray(x, dtype=float)
    mean = np.asarray(mean, dtype=float)
    if x.shape != mean.shape or x.ndim != 1:
        raise ValueError(f"grid and values must be 1-D of one length; got {x.shape}, "
                         f"{mean.shape}.")
    if sd is not None:
        sd = np.asarray(sd, dtype=float)
        if sd.shape != x.shape:
            raise ValueError(f"sd has shape {sd.shape}; expected {x.shape}.")
        if band:
            ax.plot(x, mean, color="C0", marker=".")
            ax.fill_between(x, mean - sd, mean + sd, color="C0", alpha=0.2, linewidth=0)
        else:
            ax.errorbar(x, mean, yerr=sd, color="C0", marker=".", capsize=2)
    else:
        ax.plot(x, mean, color="C0", marker=".")
    if chosen is not None:
        ax.axvline(chosen, color="C3", linestyle="--", label=f"{chosen_label} = {chosen:g}",
                   gid="chosen")
        ax.legend(loc="best", fontsize="small")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return ax


def plot_gap_curve(
    grid: Any,
    gap: Any,
    sd: Any = None,
    chosen: float | None = None,
    *,
    xlabel: str = "number of features s",
    log_x: bool = False,
    ax: Any = None,
) -> Any:
    """The gap statistic over a grid of tuning values, with ±sd error bars and the choice.

    Parameters
    ----------
    grid : array-like
        The tuning values (e.g. sparsity levels s).
    gap : array-like
        Gap(s) = log O(s) - mean_b log O*_b(s).
    sd : array-like, optional
        sd_b of log O*_b(s) (error bars).
    chosen : float, optional
        The selected value (a dashed vertical line).
    xlabel : str
    log_x : bool, default=False
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    _curve(ax, grid, gap, sd, chosen, xlabel, "gap statistic", "chosen", band=False)
    if log_x:
        ax.set_xscale("log")
    return ax


def plot_cv_curve(
    k_grid: Any,
    mean: Any,
    sd: Any = None,
    chosen_k: float | None = None,
    *,
    ylabel: str = "CV error",
    ax: Any = None,
) -> Any:
    """Cross-validated error against k, with a ±sd band and the chosen k.

    Parameters
    ----------
    k_grid : array-like
    mean : array-like
        Mean CV error (or any score) at each k.
    sd : array-like, optional
    chosen_k : float, optional
    ylabel : str, default="CV error"
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    return _curve(ax, k_grid, mean, sd, chosen_k, "number of selected features k", ylabel,
                  "chosen k", band=True)
