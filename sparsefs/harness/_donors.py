"""Error control across donors, measured: false discoveries and power on multi-donor simulations.

One trial (:func:`donor_error_control_trial`) runs every procedure on one data set of
:func:`sparsefs.datasets.make_multi_donor_counts` and counts its discoveries against the planted
markers; :func:`donor_monte_carlo` repeats it over seeds and summarises (mean FDP with its
standard error, power, stability's false selections beside its bound). Used by
``benchmarks/bench_donors.py`` (>= 50 data sets per design) and by a slow test (fewer).

Procedures (``q`` the target FDR):

* ``scanpy_ttest`` / ``scanpy_wilcoxon``: scanpy's ``rank_genes_groups`` (cells as the unit,
  each group against the rest, Benjamini-Hochberg within each group: ``pvals_adj <= q``);
* ``cell_f``: :class:`~sparsefs.selection.ErrorControlSelector` without ``groups`` (the F test
  on cells, BH);
* ``donor_f``: the same with ``groups=donors`` (pseudobulk F test when nested, randomised-block
  F when crossed);
* ``donor_per_group``: the donor-level group-vs-rest tests that ``tl.select(sample_key=)``
  writes (Welch on donor pseudobulks / paired t of within-donor differences), BH within each
  group;
* ``stability_cell`` / ``stability_donor``: :class:`~sparsefs.selection.StabilitySelector`
  over the Fisher score with ``pfer`` (the base's size from the bound), halves of the cells /
  of the donors; its false selections are compared with ``pfer_bound_``.

A gene is non-null when it is a planted marker of any group (``data.support``): for the
global tests it differs between groups; for a group-vs-rest test, a marker of another group is
lower in this group than in the rest. Per-group procedures report the FDP and power averaged
over the groups.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np

__all__ = ["PROCEDURES", "donor_error_control_trial", "donor_monte_carlo", "summarize_trials"]

PROCEDURES = ("scanpy_ttest", "scanpy_wilcoxon", "cell_f", "donor_f", "donor_per_group",
              "stability_cell", "stability_donor")


def _counts(selected: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    n_sel = int(selected.sum())
    n_false = int((selected & ~truth).sum())
    return {
        "n_selected": n_sel,
        "n_false": n_false,
        "fdp": n_false / max(1, n_sel),
        "power": float((selected & truth).sum() / max(1, truth.sum())),
    }


def _per_group(selected_by_group: list[np.ndarray], truth: np.ndarray) -> dict[str, float]:
    parts = [_counts(s, truth) for s in selected_by_group]
    return {key: float(np.mean([p[key] for p in parts])) for key in parts[0]}


def donor_error_control_trial(data, q: float = 0.1, procedures=PROCEDURES,
                              n_resamples: int = 50, pfer: float = 1.0,
                              random_state: int = 0) -> dict[str, dict[str, float]]:
    """Run the procedures on one multi-donor data set; discoveries against ``data.support``.

    Parameters
    ----------
    data : MultiDonorCounts
        From :func:`sparsefs.datasets.make_multi_donor_counts`.
    q : float, default=0.1
        Target FDR (BH level).
    procedures : sequence of str
        A subset of :data:`PROCEDURES` (the scanpy ones are skipped when scanpy is absent).
    n_resamples : int, default=50
        Stability's resamples.
    pfer : float, default=1.0
        Stability's target bound on the expected number of false selections.
    random_state : int, default=0

    Returns
    -------
    dict
        Procedure -> ``n_selected``, ``n_false``, ``fdp``, ``power`` (and ``bound``, the PFER
        bound, for stability; ``seconds`` for all).
    """
    from sparsefs._kernels.donors import group_vs_rest_pvalues, pseudobulk
    from sparsefs._kernels.multiple_testing import adjust_pvalues
    from sparsefs.exceptions import NoFeatureSelectedWarning
    from sparsefs.selection import ErrorControlSelector, FisherScore, StabilitySelector

    truth = np.asarray(data.support, dtype=bool)
    groups = list(data.markers)
    out: dict[str, dict[str, float]] = {}
    sc = None
    if any(p.startswith("scanpy") for p in procedures):
        try:
            import scanpy as sc
        except ImportError:  # pragma: no cover - scanpy is a test dependency
            sc = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NoFeatureSelectedWarning)
        for proc in procedures:
            t0 = time.perf_counter()
            if proc.startswith("scanpy"):
                if sc is None:
                    continue
                adata = data.to_anndata()
                method = "t-test" if proc == "scanpy_ttest" else "wilcoxon"
                sc.tl.rank_genes_groups(adata, "group", method=method, n_genes=adata.n_vars)
                df = sc.get.rank_genes_groups_df(adata, group=None)
                names = np.asarray(data.feature_names)
                sel = []
                for g in groups:
                    part = df[df["group"] == g]
                    hit = set(part.loc[part["pvals_adj"] <= q, "names"])
                    sel.append(np.isin(names, list(hit)))
                res = _per_group(sel, truth)
            elif proc in ("cell_f", "donor_f"):
                kw = {"groups": data.donors} if proc == "donor_f" else {}
                est = ErrorControlSelector(level=q).fit(data.X, data.y, **kw)
                res = _counts(est.support_, truth)
            elif proc == "donor_per_group":
                y_idx = np.searchsorted(groups, data.y)
                g_names, g_idx = np.unique(data.donors, return_inverse=True)
                design = "nested" if data.design == "nested" else "crossed"
                pb = pseudobulk(data.X, y_idx, g_idx, len(groups), g_names.shape[0])
                pvals = group_vs_rest_pvalues(pb, design)
                sel = []
                for row in pvals:
                    tested = ~np.isnan(row)
                    s = np.zeros(row.shape[0], dtype=bool)
                    if tested.any():
                        s[tested] = adjust_pvalues(row[tested], "bh") <= q
                    sel.append(s)
                res = _per_group(sel, truth)
            elif proc in ("stability_cell", "stability_donor"):
                kw = {"groups": data.donors} if proc == "stability_donor" else {}
                est = StabilitySelector(FisherScore(), n_resamples=n_resamples, pfer=pfer,
                                        random_state=random_state).fit(data.X, data.y, **kw)
                res = _counts(est.support_, truth)
                res["bound"] = float(est.pfer_bound_)
                res["q"] = float(est.q_)
            else:
                raise ValueError(f"unknown procedure {proc!r}; one of {PROCEDURES}.")
            res["seconds"] = time.perf_counter() - t0
            out[proc] = res
    return out


def summarize_trials(trials: list[dict[str, dict[str, float]]]) -> list[dict[str, Any]]:
    """Per procedure: mean FDP and its standard error, mean power, mean selections and false
    selections (and the mean stability bound), over the trials."""
    rows = []
    for proc in PROCEDURES:
        vals = [t[proc] for t in trials if proc in t]
        if not vals:
            continue
        fdp = np.array([v["fdp"] for v in vals])
        row = {
            "procedure": proc,
            "n_datasets": len(vals),
            "mean_fdp": float(fdp.mean()),
            "se_fdp": float(fdp.std(ddof=1) / np.sqrt(len(vals))) if len(vals) > 1 else 0.0,
            "power": float(np.mean([v["power"] for v in vals])),
            "mean_selected": float(np.mean([v["n_selected"] for v in vals])),
            "mean_false": float(np.mean([v["n_false"] for v in vals])),
            "seconds": float(np.mean([v["seconds"] for v in vals])),
        }
        if "bound" in vals[0]:
            false = np.array([v["n_false"] for v in vals])
            row["se_false"] = float(false.std(ddof=1) / np.sqrt(len(vals))) if len(vals) > 1 \
                else 0.0
            row["bound"] = float(np.mean([v["bound"] for v in vals]))
        rows.append(row)
    return rows


def donor_monte_carlo(design: str, n_datasets: int, donors_per_class: int, *, q: float = 0.1,
                      procedures=PROCEDURES, seed: int = 0, n_resamples: int = 50,
                      progress=None, **simulation: Any) -> tuple[list[dict], list[dict]]:
    """Repeat :func:`donor_error_control_trial` over seeded data sets of one design.

    Parameters
    ----------
    design : {"nested", "crossed"}
    n_datasets : int
    donors_per_class : int
        Nested: donors of each of the ``n_groups`` conditions; crossed: donors (each holds
        every type).
    q : float, default=0.1
    procedures : sequence of str
    seed : int, default=0
        Data set ``i`` is simulated with ``random_state = seed + i``.
    n_resamples : int, default=50
    progress : callable or None
        Called with ``(i, n_datasets)`` after each data set.
    **simulation
        Passed to :func:`~sparsefs.datasets.make_multi_donor_counts` (``n_groups`` defaults to
        2 when nested and 4 when crossed).

    Returns
    -------
    summary : list of dict
        :func:`summarize_trials` of the trials.
    trials : list of dict
        Every trial's result.
    """
    from sparsefs.datasets import make_multi_donor_counts

    n_groups = simulation.pop("n_groups", 2 if design == "nested" else 4)
    n_donors = donors_per_class * (n_groups if design == "nested" else 1)
    trials = []
    for i in range(n_datasets):
        data = make_multi_donor_counts(n_groups=n_groups, design=design, n_donors=n_donors,
                                       random_state=seed + i, **simulation)
        trials.append(donor_error_control_trial(data, q=q, procedures=procedures,
                                                n_resamples=n_resamples,
                                                random_state=seed + i))
        if progress is not None:
            progress(i + 1, n_datasets)
    return summarize_trials(trials), trials
