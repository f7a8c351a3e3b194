"""The figures of a harness report, written as PNG files (no pyplot state involved)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from sparsefs.plotting._plots import (
    _PLOT_HINT,
    method_styles,
    plot_critical_difference,
    plot_metric_vs_k,
    plot_roc_curves,
)

__all__ = ["MAX_FIGURE_INCHES", "new_figure", "panel_grid", "report_figures", "save_figure"]

#: The largest width and height of a report figure, in inches (at the reports' 110 dpi:
#: 1870 x 1760 pixels); many panels go to several figures instead.
MAX_FIGURE_INCHES = (17.0, 16.0)


def new_figure(width: float = 6.4, height: float = 4.2, nrows: int = 1, ncols: int = 1):
    """A :class:`matplotlib.figure.Figure` and its axes, without touching pyplot's state."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ImportError(_PLOT_HINT) from exc
    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes


def panel_grid(n_panels: int, *, panel: tuple[float, float] = (4.2, 3.2),
               max_cols: int = 4) -> list[tuple[Any, np.ndarray]]:
    """Figures for ``n_panels`` panels of about ``panel`` inches each: one figure when they
    fit in :data:`MAX_FIGURE_INCHES` (at most ``max_cols`` across), else several pages of the
    same grid. Returns ``[(figure, axes 2-D array), ...]``; the caller hides unused axes."""
    if n_panels < 1:
        return []
    ncols = min(max_cols, n_panels, max(1, int(MAX_FIGURE_INCHES[0] // panel[0])))
    max_rows = max(1, int(MAX_FIGURE_INCHES[1] // panel[1]))
    nrows_total = -(-n_panels // ncols)
    pages = -(-nrows_total // max_rows)
    out = []
    per_page = ncols * max_rows
    for page in range(pages):
        count = min(per_page, n_panels - page * per_page)
        nrows = -(-count // ncols)
        out.append(new_figure(panel[0] * ncols, panel[1] * nrows, nrows, ncols))
    return out


def save_figure(fig: Any, path: str | os.PathLike[str], dpi: int = 110) -> Path:
    """Write ``fig`` as PNG (Agg) and return the path."""
    path = Path(path)
    fig.savefig(path, dpi=dpi)
    return path


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_") or "x"


def report_figures(
    results: Any,
    outdir: str | os.PathLike[str],
    *,
    prefix: str = "",
    metric: str | None = None,
    estimator: str | None = None,
    dpi: int = 110,
) -> list[tuple[str, str]]:
    """Draw the standard figures of a run into ``outdir``.

    * per data set: the headline metric against k, one panel per downstream estimator;
    * per data set, with ``results.predictions``: ROC curves of every method at its best k;
    * with >= 2 data sets and >= 2 methods: the critical-difference diagram.

    Parameters
    ----------
    results : sparsefs.harness.Results
    outdir : path
        Created if needed.
    prefix : str
        Prepended to the file names.
    metric, estimator : str, optional
        Default: the report's headline (``results.headline()``).
    dpi : int, default=110

    Returns
    -------
    list of (caption, file name)
        File names relative to ``outdir``.
    """
    from sparsefs.metrics._summary import (
        GREATER_IS_BETTER,
        best_over_k,
        friedman_nemenyi,
        score_matrix,
    )

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    h_metric, h_est, k_max = results.headline()
    metric = metric or h_metric
    estimator = estimator or h_est
    table = results.table
    if table.empty:
        return []
    made: list[tuple[str, str]] = []
    estimators = [e for e in dict.fromkeys(table["estimator"]) if e != "selection"]
    has_curve = table["k"].nunique() > 1
    methods = list(dict.fromkeys(table["method"]))
    styles = method_styles(methods)
    many = len(methods) > 6
    for dataset in dict.fromkeys(table["dataset"]):
        sub = table[table["dataset"] == dataset]
        if has_curve and metric in set(sub["metric"]):
            n = len(estimators)
            ncols = min(2, n)
            nrows = int(np.ceil(n / ncols))
            # many methods: one legend for the figure, outside the panels, on the right
            width = 6.0 * ncols + (2.2 + 2.0 * (len(methods) // 19) if many else 0.0)
            fig, axes = new_figure(min(width, MAX_FIGURE_INCHES[0]), 3.8 * nrows, nrows,
                                   ncols)
            for ax, est in zip(axes.ravel(), estimators):
                plot_metric_vs_k(sub, metric, estimator=est, dataset=dataset, styles=styles,
                                 legend=not many, ax=ax)
            lows, highs = zip(*(ax.get_ylim() for ax in axes.ravel()[:n]))
            for ax in axes.ravel()[:n]:  # one y range: the estimators compare at a glance
                ax.set_ylim(min(lows), max(highs))
            for ax in axes.ravel()[n:]:
                ax.set_visible(False)
            if many:
                handles, labels = axes.ravel()[0].get_legend_handles_labels()
                fig.legend(handles, labels, loc="outside right upper", fontsize="x-small",
                           ncol=1 + (len(labels) - 1) // 19, frameon=False)
            name = f"{prefix}{_slug(dataset)}_{_slug(metric)}_vs_k.png"
            save_figure(fig, outdir / name, dpi)
            made.append((f"{dataset}: {metric} against the number of selected features "
                         "(mean ± sd over folds)", name))
        preds = getattr(results, "predictions", None)
        if preds:
            try:
                best = best_over_k(results, metric, estimator, k_max=k_max)
            except ValueError:
                best = None
            curves, y_true = {}, None
            if best is not None:
                for r in best[best["dataset"] == dataset].itertuples():
                    key = (dataset, r.method, estimator, int(r.k))
                    if key in preds:
                        y_true, scores = preds[key]
                        curves[f"{r.method}, k = {int(r.k)}"] = scores
            if curves and y_true is not None and np.unique(y_true).shape[0] > 1:
                extra = 0.0 if len(curves) <= 6 else 3.0 + 2.6 * ((len(curves) - 1) // 18)
                fig, axes = new_figure(5.2 + extra, 4.6)
                plot_roc_curves(y_true, curves, ax=axes[0, 0])
                axes[0, 0].set_title(f"{dataset} — {estimator}, pooled test folds")
                name = f"{prefix}{_slug(dataset)}_roc.png"
                save_figure(fig, outdir / name, dpi)
                made.append((f"{dataset}: ROC curves ({estimator}) of each method at its best "
                             "k, test folds pooled" + (" (micro-average over classes)"
                                                       if np.unique(y_true).shape[0] > 2 else ""),
                             name))
    try:
        best = best_over_k(results, metric, estimator, k_max=k_max)
        mat = score_matrix(best).dropna(axis=0, how="any")
    except ValueError:
        mat = None
    if mat is not None and mat.shape[0] >= 2 and mat.shape[1] >= 2:
        res = friedman_nemenyi(mat, greater_is_better=GREATER_IS_BETTER.get(metric, True))
        fig, axes = new_figure(7.0 + 0.12 * max(0, mat.shape[1] - 10),
                               min(1.2 + 0.45 * mat.shape[1], MAX_FIGURE_INCHES[1]))
        plot_critical_difference(res.average_ranks, res.critical_difference, ax=axes[0, 0])
        name = f"{prefix}critical_difference.png"
        save_figure(fig, outdir / name, dpi)
        made.append((f"Average ranks of best {metric} over k ({estimator}) on "
                     f"{res.n_datasets} data sets; methods joined by a bar do not differ "
                     f"significantly (Nemenyi, α = {res.alpha})", name))
    return made
