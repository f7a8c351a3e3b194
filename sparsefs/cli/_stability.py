"""``select --stability [N]``: stability selection around the chosen method.

The method (with its ``-k`` and ``--param`` settings) becomes the base estimator of a
:class:`~sparsefs.selection.StabilitySelector` refitted on N complementary half-samples. The
output table keeps the method's own scores, ranks and selection on all the data, and adds each
feature's selection ``frequency`` over the half-samples and whether it is ``stable`` (kept by
the stability rule: ``--pfer`` or the default threshold 0.6). ``--stability-plot FILE`` draws
the stability path (or, without a path, the frequencies of the top features).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sparsefs.cli._checks import convert

__all__ = ["add_stability_arguments", "stability_output", "wrap_for_stability"]

DEFAULT_RESAMPLES = 50


def _positive_int(text: str) -> int:
    value = convert(int, text, f"--stability {text!r}: give an even count")
    if value < 2 or value % 2:
        raise argparse.ArgumentTypeError(
            f"--stability {value}: give an even count >= 2 (pairs of half-samples)")
    return value


def _positive_float(text: str) -> float:
    value = convert(float, text, f"--pfer {text!r}: give a number > 0")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"--pfer {text!r}: give a number > 0")
    return value


def add_stability_arguments(group: Any) -> None:
    """The stability options of ``select`` (in its "selection rule" group)."""
    group.add_argument(
        "--stability", type=_positive_int, nargs="?", const=DEFAULT_RESAMPLES, default=None,
        metavar="N",
        help=f"stability selection: refit the method on N half-samples (default "
        f"{DEFAULT_RESAMPLES}) and add each feature's selection frequency and 'stable' column; "
        "the method's -k is what each half-sample keeps (without -k and with --pfer: the largest "
        "count the bound allows)")
    group.add_argument(
        "--pfer", type=_positive_float, default=None, metavar="V",
        help="with --stability: keep the features whose frequency bounds the expected number of "
        "false selections by V (Shah & Samworth); default: frequency >= 0.6")
    group.add_argument(
        "--stability-plot", default=None, metavar="FILE",
        help="with --stability: draw the stability path to FILE (.png, .pdf or .svg)")


def wrap_for_stability(est: Any, args: argparse.Namespace) -> Any:
    """``est`` inside a StabilitySelector when ``--stability`` is given, else ``est``."""
    n = getattr(args, "stability", None)
    if n is None:
        for flag in ("pfer", "stability_plot"):
            if getattr(args, flag, None) is not None:
                raise ValueError(f"--{flag.replace('_', '-')} needs --stability")
        return est
    from sparsefs.selection import StabilitySelector

    if isinstance(est, StabilitySelector):
        raise ValueError("--stability wraps a method; -m stability is one already")
    plot = getattr(args, "stability_plot", None)
    if plot is not None and Path(plot).suffix.lower() not in (".png", ".pdf", ".svg"):
        raise ValueError(f"--stability-plot {plot}: the extension must be .png, .pdf or .svg")
    return StabilitySelector(est, n_resamples=n, pfer=getattr(args, "pfer", None),
                             random_state=getattr(args, "seed", 0))


def stability_output(est: Any, frame: Any, X: Any, y: Any, feature_names: Any,
                     args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The output table and the ``stability`` entry of the run's metadata.

    For a fitted StabilitySelector ``est``: the base method refitted on all the data gives the
    ``score``, ``rank`` and ``selected`` columns (as without ``--stability``); ``frequency`` and
    ``stable`` are added. Anything else is returned unchanged (with an empty dict).
    """
    from sparsefs.selection import StabilitySelector

    if not isinstance(est, StabilitySelector):
        return frame, {}
    from sklearn.base import clone

    from sparsefs.utils._results import scores_frame

    base = clone(est.estimator_).fit(X, y)
    out = scores_frame(base, feature_names=feature_names)
    out["frequency"] = est.frequencies_[out["index"].to_numpy()]
    out["stable"] = est.support_[out["index"].to_numpy()]
    index = est.stability_index_
    meta = {
        "n_resamples": int(est.n_resamples_),
        "scheme": est.scheme,
        "q": float(est.q_),
        "threshold": float(est.threshold_),
        "pfer": est.pfer,
        "pfer_bound": float(est.pfer_bound_),
        "bound": est.bound_,
        "n_stable": int(est.support_.sum()),
        "nogueira": {"value": index.value, "ci_low": index.ci_low, "ci_high": index.ci_high},
    }
    plot = getattr(args, "stability_plot", None)
    if plot is not None:
        from sparsefs.plotting import (
            new_figure,
            plot_selection_frequencies,
            plot_stability_path,
            save_figure,
        )

        fig, axes = new_figure()
        ax = axes[0, 0]
        if est.frequency_path_ is not None:
            plot_stability_path(est, feature_names=feature_names, ax=ax)
        else:
            plot_selection_frequencies(est, feature_names=feature_names, ax=ax)
        meta["plot"] = str(save_figure(fig, plot))
    return out, meta


def stability_figures(results: Any, outdir: Path, dpi: int = 110) -> list[tuple[str, str]]:
    """``compare --stability``: the per-method Nogueira index across folds with its interval,
    one PNG per data set; ``[(caption, file name), ...]``."""
    from sparsefs.harness._stability import stability_table
    from sparsefs.plotting import new_figure, plot_stability_index, save_figure
    from sparsefs.plotting._figures import _slug

    table = stability_table(results)
    out = []
    for dataset, group in table.groupby("dataset", sort=False):
        group = group.assign(method=[f"{m} (k={k})" if k else m
                                     for m, k in zip(group["method"], group["k"])])
        fig, axes = new_figure(width=min(max(5.0, 0.9 * len(group) + 2.0), 17.0),
                               height=4.2 + (1.0 if len(group) > 12 else 0.0))
        plot_stability_index(group, ax=axes[0, 0])
        axes[0, 0].set_title(f"{dataset}: stability across folds", fontsize="medium")
        name = f"stability_{_slug(dataset)}.png"
        save_figure(fig, outdir / name, dpi=dpi)
        out.append((f"Stability across folds on {dataset} (Nogueira et al. 2018, 95 % CI)",
                    name))
    return out
