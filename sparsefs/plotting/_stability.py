"""Stability figures: the stability path, the selection frequencies, the stability index.

matplotlib is imported lazily; every function takes ``ax=None`` and returns the Axes. The
inputs are fitted :class:`~sparsefs.selection.StabilitySelector` objects, stability estimates
(:class:`~sparsefs.metrics.StabilityEstimate`) or tables; nothing here fits or selects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sparsefs.base import declared_outputs
from sparsefs.plotting._plots import _axes

__all__ = ["plot_selection_frequencies", "plot_stability_index", "plot_stability_path"]


def _fitted_selector(selector: Any) -> Any:
    fitted = getattr(selector, "support_", None) is not None
    if "frequencies_" not in declared_outputs(selector) or not fitted:
        raise TypeError(
            f"expected a fitted StabilitySelector (with frequencies_), got "
            f"{type(selector).__name__}."
        )
    return selector


def _names(selector: Any, feature_names: Sequence[str] | None, p: int) -> np.ndarray:
    if feature_names is None and hasattr(selector, "feature_names_in_"):
        feature_names = selector.feature_names_in_
    if feature_names is None:
        return np.array([f"x{j}" for j in range(p)])
    names = np.asarray(feature_names, dtype=str)
    if names.shape != (p,):
        raise ValueError(f"feature_names has {names.shape[0]} names for {p} features.")
    return names


def plot_stability_path(
    selector: Any,
    *,
    feature_names: Sequence[str] | None = None,
    n_background: int = 200,
    ax: Any = None,
) -> Any:
    r"""The stability path: each feature's selection frequency :math:`\hat\Pi_j(k)` against the
    number :math:`k` of features each resample keeps, or against the refitted parameter
    (``path_param``, e.g. the lasso penalty; log scale when it spans a factor 10 or more)
    (Meinshausen & Bühlmann 2010, Fig. 1).

    The selected features (``support_``) are drawn in colour and named; the other features
    grey (only the ``n_background`` with the highest frequency along the path, for
    readability); the threshold ``threshold_`` as a dashed horizontal line and the base
    estimator's own count (``q_``) as a dotted vertical line.

    Parameters
    ----------
    selector : fitted StabilitySelector
        With ``frequency_path_`` (a base estimator that gives a full ranking).
    feature_names : sequence of str, optional
        Default: ``feature_names_in_`` or ``x<index>``.
    n_background : int, default=200
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    ValueError
        When the selector has no path (its base estimator gives no full ranking).
    """
    sel = _fitted_selector(selector)
    path = getattr(sel, "frequency_path_", None)
    if path is None:
        raise ValueError(
            "this StabilitySelector has no frequency_path_: its base estimator gives no full "
            "ranking (use plot_selection_frequencies)."
        )
    ax = _axes(ax)
    x = np.asarray(sel.path_values_)
    support = np.asarray(sel.support_, dtype=bool)
    names = _names(sel, feature_names, path.shape[0])
    others = np.flatnonzero(~support)
    peak = path[others].max(axis=1) if others.size else np.empty(0)
    keep = others[np.argsort(-peak, kind="stable")[: max(0, int(n_background))]]
    keep = keep[path[keep].max(axis=1) > 0] if keep.size else keep
    for j in keep:
        ax.plot(x, path[j], color="0.75", linewidth=0.8, gid="path_other")
    for i, j in enumerate(np.flatnonzero(support)):
        ax.plot(x, path[j], color=f"C{i % 10}", linewidth=1.8, label=names[j],
                gid="path_selected")
    ax.axhline(sel.threshold_, color="k", linestyle="--", linewidth=1,
               label=f"threshold {sel.threshold_:.2f}", gid="threshold")
    param = getattr(sel, "path_param_", "n_features_to_select")
    if param == "n_features_to_select":
        if getattr(sel, "path_param", None) is None:  # the count path: q is on it
            ax.axvline(sel.q_, color="k", linestyle=":", linewidth=1,
                       label=f"q = {sel.q_:.3g}", gid="q")
        ax.set_xlabel("features kept per resample (k)")
    else:
        ax.set_xlabel(f"{param} of the base estimator")
    numeric = np.issubdtype(np.asarray(x).dtype, np.number)
    if numeric and x.size > 1 and np.all(x > 0) and x.max() / x.min() >= 10:
        ax.set_xscale("log")
    ax.set_ylabel("selection frequency")
    ax.set_ylim(-0.02, 1.02)
    if numeric and x.size > 1:
        ax.set_xlim(x.min(), x.max())
    base = type(sel.estimator_).__name__ if hasattr(sel, "estimator_") else "selector"
    ax.set_title(f"stability path: {base}, {sel.n_resamples_} resamples")
    if support.sum() <= 15:
        ax.legend(loc="lower right", fontsize="small")
    return ax


def plot_selection_frequencies(
    selector: Any,
    *,
    top: int = 20,
    feature_names: Sequence[str] | None = None,
    ax: Any = None,
) -> Any:
    """A bar chart of the ``top`` most frequently selected features, most frequent first;
    the selected ones in colour, the threshold as a dashed line.

    Parameters
    ----------
    selector : fitted StabilitySelector
    top : int, default=20
    feature_names : sequence of str, optional
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    sel = _fitted_selector(selector)
    if top < 1:
        raise ValueError(f"top={top!r} must be >= 1.")
    ax = _axes(ax)
    freq = np.asarray(sel.frequencies_, dtype=float)
    support = np.asarray(sel.support_, dtype=bool)
    names = _names(sel, feature_names, freq.shape[0])
    idx = np.argsort(-freq, kind="stable")[:top]
    pos = np.arange(idx.shape[0])
    ax.bar(pos, freq[idx], color=["C0" if support[j] else "0.6" for j in idx], gid="frequency")
    ax.axhline(sel.threshold_, color="k", linestyle="--", linewidth=1, gid="threshold")
    ax.set_xticks(pos)
    ax.set_xticklabels(names[idx], rotation=60, ha="right", fontsize="small")
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("selection frequency")
    ax.set_xlabel("feature (most frequent first)")
    return ax


def _index_rows(estimates: Any) -> pd.DataFrame:
    if isinstance(estimates, pd.DataFrame):
        missing = {"method", "value", "ci_low", "ci_high"} - set(estimates.columns)
        if missing:
            raise ValueError(f"the table lacks the columns {sorted(missing)}.")
        return estimates[["method", "value", "ci_low", "ci_high"]].reset_index(drop=True)
    if not isinstance(estimates, Mapping):
        raise TypeError(
            "expected a mapping method -> StabilityEstimate (or fitted StabilitySelector), or a "
            f"DataFrame with method, value, ci_low, ci_high; got {type(estimates).__name__}."
        )
    rows = []
    for method, est in estimates.items():
        est = getattr(est, "stability_index_", est)
        rows.append((str(method), float(est.value), float(est.ci_low), float(est.ci_high)))
    return pd.DataFrame(rows, columns=["method", "value", "ci_low", "ci_high"])


def plot_stability_index(estimates: Any, *, ax: Any = None) -> Any:
    """The Nogueira stability index of each method with its confidence interval.

    Parameters
    ----------
    estimates : mapping or DataFrame
        ``{method: StabilityEstimate or fitted StabilitySelector}``, or a table with columns
        ``method``, ``value``, ``ci_low``, ``ci_high`` (the harness's stability table).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    rows = _index_rows(estimates)
    ax = _axes(ax)
    pos = np.arange(len(rows))
    value = rows["value"].to_numpy()
    err = np.vstack([value - rows["ci_low"].to_numpy(), rows["ci_high"].to_numpy() - value])
    ax.errorbar(pos, value, yerr=np.where(np.isfinite(err), err, 0.0), fmt="o", capsize=4,
                color="C0", gid="stability_index")
    ax.axhline(0.0, color="0.6", linewidth=0.8, gid="zero")
    ax.set_xticks(pos)
    ax.set_xticklabels(rows["method"], rotation=30, ha="right")
    ax.set_xlim(-0.5, len(rows) - 0.5)
    ax.set_ylabel("stability (Nogueira et al. 2018)")
    ax.set_ylim(min(-0.05, float(np.nanmin(rows["ci_low"])) - 0.05) if len(rows) else -0.05,
                1.05)
    return ax
