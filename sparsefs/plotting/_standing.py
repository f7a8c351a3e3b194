"""Figures of the standing page (``docs/standing.md``): a clustered heat map of ranking
similarity, score-against-k curves, interval plots (stability with its CI, scores over data
sets), score against run time, and the critical-difference diagrams; and
:func:`standing_figures`, which draws them all from an :class:`~sparsefs.harness.standing.
Analysis` (stored results; nothing is fitted here).

Methods are drawn by kind: sparsefs methods in colour and solid, peers in grey dashes,
baselines (random, all features) dotted black.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sparsefs.plotting._plots import _axes, plot_critical_difference

__all__ = [
    "plot_intervals",
    "plot_score_curves",
    "plot_score_vs_time",
    "plot_similarity_heatmap",
    "standing_figures",
]


def _style(kind: str, i: int) -> dict[str, Any]:
    if kind == "baseline":
        return {"color": "black", "linestyle": ":", "linewidth": 1.2}
    if kind == "peer":
        return {"color": str(0.25 + 0.5 * ((i * 0.37) % 1)), "linestyle": "--",
                "linewidth": 1.0}
    return {"color": f"C{i % 10}", "linestyle": "-", "linewidth": 1.4}


def plot_similarity_heatmap(similarity: pd.DataFrame, *, order: list[str] | None = None,
                            ax: Any = None, annotate: bool = False) -> Any:
    """A (clustered) heat map of a method x method similarity matrix (1 = identical).

    Parameters
    ----------
    similarity : DataFrame, square
    order : list of str, optional
        Row and column order (e.g. :func:`sparsefs.harness.standing.cluster_order`).
    ax : matplotlib Axes, optional
    annotate : bool, default=False
        Write the values in the cells.

    Returns
    -------
    matplotlib.axes.Axes
        The image is ``ax.images[0]``.
    """
    ax = _axes(ax)
    order = list(order) if order is not None else list(similarity.index)
    mat = similarity.loc[order, order].to_numpy(dtype=float)
    im = ax.imshow(mat, vmin=0.0, vmax=1.0, cmap="viridis", interpolation="nearest")
    ax.set_xticks(range(len(order)), order, rotation=90, fontsize="x-small")
    ax.set_yticks(range(len(order)), order, fontsize="x-small")
    if annotate:
        for i in range(len(order)):
            for j in range(len(order)):
                if np.isfinite(mat[i, j]):
                    ax.text(j, i, f"{mat[i, j]:.2f}", ha="center", va="center",
                            fontsize=5, color="white" if mat[i, j] < 0.6 else "black")
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.02)
    return ax


def plot_score_curves(curves: pd.DataFrame, *, kinds: Mapping[str, str] | None = None,
                      ylabel: str = "accuracy", ax: Any = None, log_x: bool = True) -> Any:
    """Scores against the number of selected features, one line per method (columns).

    Parameters
    ----------
    curves : DataFrame
        Index: k; columns: methods.
    kinds : mapping, optional
        Method -> ``sparsefs`` / ``peer`` / ``baseline`` (the line style).
    ylabel : str
    ax : matplotlib Axes, optional
    log_x : bool, default=True

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    kinds = dict(kinds or {})
    for i, m in enumerate(curves.columns):
        ax.plot(curves.index.to_numpy(), curves[m].to_numpy(dtype=float), label=m,
                **_style(kinds.get(m, "sparsefs"), i))
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel("number of selected features k")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=5, ncol=2, loc="lower right")
    return ax


def plot_intervals(table: pd.DataFrame, *, kinds: Mapping[str, str] | None = None,
                   xlabel: str = "", ax: Any = None, reference: float | None = None) -> Any:
    """A dot per method with its interval (``value``, ``ci_low``, ``ci_high`` columns, indexed
    by method), sorted by value (best on top).

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    kinds = dict(kinds or {})
    t = table.dropna(subset=["value"]).sort_values("value")
    y = np.arange(len(t))
    for i, (m, r) in enumerate(t.iterrows()):
        st = _style(kinds.get(m, "sparsefs"), i)
        ax.hlines(y[i], r["ci_low"], r["ci_high"], color=st["color"], linewidth=1.5)
        ax.plot([r["value"]], [y[i]], "o", color=st["color"], markersize=4)
    if reference is not None:
        ax.axvline(reference, color="0.6", linestyle=":", linewidth=1)
    ax.set_yticks(y, list(t.index), fontsize="x-small")
    ax.set_xlabel(xlabel)
    return ax


def plot_score_vs_time(scores: pd.Series, times: pd.Series, *,
                       kinds: Mapping[str, str] | None = None, xlabel: str = "fit time (s)",
                       ylabel: str = "score", ax: Any = None) -> Any:
    """Each method's mean score against its typical fit time (log scale), labelled."""
    ax = _axes(ax)
    kinds = dict(kinds or {})
    both = pd.concat([scores.rename("s"), times.rename("t")], axis=1).dropna()
    both = both[both["t"] > 0]
    for i, (m, r) in enumerate(both.iterrows()):
        st = _style(kinds.get(m, "sparsefs"), i)
        ax.plot([r["t"]], [r["s"]], "o" if kinds.get(m) != "peer" else "s",
                color=st["color"], markersize=4)
        ax.annotate(m, (r["t"], r["s"]), fontsize=5, xytext=(2, 2),
                    textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return ax


def _save(fig, outdir: Path, name: str, dpi: int) -> str:
    from sparsefs.plotting._figures import save_figure

    save_figure(fig, outdir / name, dpi)
    return name


def standing_figures(analysis: Any, outdir: str | os.PathLike[str], *, dpi: int = 100
                     ) -> dict[str, tuple[str, str]]:
    """Draw the figures of one benchmark of the standing page into ``outdir``.

    Parameters
    ----------
    analysis : sparsefs.harness.standing.Analysis
    outdir : path
        Created if needed.
    dpi : int, default=100

    Returns
    -------
    dict
        Figure key -> (caption, file name relative to ``outdir``). Keys: ``cd_<headline>``,
        ``curves_<metric>``, ``similarity``, ``stability``, ``time``.
    """
    from sparsefs.plotting._figures import new_figure

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    bench = analysis.spec.benchmark
    kinds = {m.label: m.kind for m in analysis.spec.methods}
    made: dict[str, tuple[str, str]] = {}
    for h in analysis.headlines:
        if h.tests is None:
            continue
        fig, axes = new_figure(7.5, 1.4 + 0.28 * len(h.ranked))
        plot_critical_difference(h.tests.average_ranks, h.tests.critical_difference,
                                 ax=axes[0, 0])
        name = _save(fig, outdir, f"{bench}_cd_{h.key}.png", dpi)
        made[f"cd_{h.key}"] = (
            f"Average ranks by {h.title} over {h.tests.n_datasets} data sets (1 = best); "
            f"methods joined by a bar do not differ significantly (Nemenyi, α = "
            f"{h.tests.alpha}, CD = {h.tests.critical_difference:.2f})", name)
    tables = analysis.tables
    words = {"svm": ("linear SVM", "accuracy"), "knn": ("5-NN", "accuracy"),
             "ari": ("k-means", "ARI"), "nmi": ("k-means", "NMI")}
    curve_keys = [k for k in tables if k.startswith("curves_")]
    if curve_keys:
        fig, axes = new_figure(6.0 * len(curve_keys), 4.6, 1, len(curve_keys))
        for ax, key in zip(axes.ravel(), curve_keys):
            who, what = words.get(key.removeprefix("curves_"), ("", key))
            curves = tables[key]
            if curves.empty:
                ax.set_visible(False)
                continue
            plot_score_curves(curves, kinds=kinds, ylabel=f"{what} ({who})", ax=ax)
            ax.set_title(f"{what} against k, {who}: mean over the data sets with the whole "
                         "grid", fontsize="small")
        name = _save(fig, outdir, f"{bench}_curves.png", dpi)
        made["curves"] = ("Scores against the number of selected features (mean over folds "
                          "and the data sets that have every k of the grid); sparsefs "
                          "solid, peers dashed grey, baselines dotted", name)
    sim = tables.get("similarity")
    if sim is not None and len(sim) >= 3:
        n = len(sim)
        fig, axes = new_figure(3.0 + 0.22 * n, 2.4 + 0.22 * n)
        plot_similarity_heatmap(sim, order=tables.get("similarity_order"), ax=axes[0, 0])
        name = _save(fig, outdir, f"{bench}_similarity.png", dpi)
        made["similarity"] = (
            f"Similarity of the methods' rankings: mean share of common features in the "
            f"top {tables.get('similarity_k')} (over the data sets"
            + (" and outer folds" if bench == "microarray" else "") + "); rows and columns "
            "in the order of an average-linkage clustering", name)
    summ = tables.get("stability_summary")
    if summ is not None and len(summ):
        fig, axes = new_figure(6.0, 1.2 + 0.2 * len(summ))
        plot_intervals(summ, kinds=kinds, ax=axes[0, 0], reference=0.0,
                       xlabel=f"Nogueira stability of the top {tables.get('stability_k')} "
                       "over the outer folds (mean over data sets, 95 % CI)")
        name = _save(fig, outdir, f"{bench}_stability.png", dpi)
        made["stability"] = ("Selection stability (Nogueira et al. 2018) of each method's "
                             f"top {tables.get('stability_k')} across the outer training "
                             "folds, mean over the data sets with its 95 % interval", name)
    times = tables.get("fit_time")
    if times is not None and analysis.headlines and not times.dropna(how="all").empty:
        h = analysis.headlines[0]
        t = np.exp(np.log(times.clip(lower=1e-4)).mean(axis=0, skipna=True))
        fig, axes = new_figure(6.5, 4.8)
        plot_score_vs_time(h.scores.mean(axis=0, skipna=True), t, kinds=kinds, ax=axes[0, 0],
                           xlabel="fit time, geometric mean over data sets (s)",
                           ylabel=h.title)
        name = _save(fig, outdir, f"{bench}_time.png", dpi)
        made["time"] = (f"{h.title} (mean over data sets) against the fit time of the "
                        "method (geometric mean over data sets; one thread)", name)
    return made
