"""Figures: metric-vs-k curves, ROC curves, critical-difference diagrams, feature scores,
gap-statistic and CV-error curves, stability paths, selection frequencies and stability indices,
and the figures of the standing page (similarity heat maps, score curves, intervals).

matplotlib is imported lazily (``pip install "sparsefs[plot]"``); every ``plot_*`` function
takes ``ax=None`` and returns the Axes, and none calls ``plt.show()``. Plotting reads results
and fitted estimators; it never fits or selects anything.
"""

from sparsefs.plotting._figures import new_figure, panel_grid, report_figures, save_figure
from sparsefs.plotting._plots import (
    method_styles,
    place_legend,
    plot_critical_difference,
    plot_cv_curve,
    plot_feature_scores,
    plot_gap_curve,
    plot_metric_vs_k,
    plot_roc_curves,
)
from sparsefs.plotting._stability import (
    plot_selection_frequencies,
    plot_stability_index,
    plot_stability_path,
)
from sparsefs.plotting._standing import (
    plot_intervals,
    plot_score_curves,
    plot_score_vs_time,
    plot_similarity_heatmap,
    standing_figures,
)

__all__ = [
    "method_styles",
    "new_figure",
    "panel_grid",
    "place_legend",
    "plot_critical_difference",
    "plot_cv_curve",
    "plot_feature_scores",
    "plot_gap_curve",
    "plot_intervals",
    "plot_metric_vs_k",
    "plot_roc_curves",
    "plot_score_curves",
    "plot_score_vs_time",
    "plot_selection_frequencies",
    "plot_similarity_heatmap",
    "plot_stability_index",
    "plot_stability_path",
    "report_figures",
    "save_figure",
    "standing_figures",
]
