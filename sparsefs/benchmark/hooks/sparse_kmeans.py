"""Report hook of ``sparsefs reproduce sparse_kmeans`` (``configs/sparse_kmeans.toml``).

:func:`extra_sections` adds what the generic report cannot know: the gap curve of Experiment 1
(a table, and a figure when matplotlib is installed) and the paper's qualitative claims
checked against our numbers.
"""

from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["extra_sections"]


def _table(results: Any):
    import pandas as pd

    return pd.concat([r.table for r in results], ignore_index=True)


def _per_rep(table, metric: str, estimator: str):
    rows = table[(table["metric"] == metric) & (table["estimator"] == estimator)]
    return rows.groupby(["experiment", "dataset", "method"])["value"]


def _gap_section(quick: bool, outdir: Path | None = None) -> str:
    from sklearn.preprocessing import StandardScaler

    from sparsefs.clustering._sparse_kmeans import L0KMeans
    from sparsefs.datasets import make_sparse_clusters_exp1

    data = make_sparse_clusters_exp1(random_state=0)
    X = StandardScaler().fit_transform(data.X)
    params = {"n_permutations": 3} if quick else {}
    model = L0KMeans(n_clusters=6, random_state=0, **params).fit(X)
    gap = model.gap_
    lines = [
        "### Experiment 1: the gap curve",
        "",
        "One draw (`make_sparse_clusters_exp1(random_state=0)`, z-scored), "
        f"`L0KMeans(n_clusters=6, "
        f"random_state=0{', n_permutations=3' if quick else ''})`: B = "
        f"{gap.ref_log_objectives.shape[0]} permuted copies, {gap.grid.shape[0]} values of s. "
        f"Chosen s = {int(gap.best)} ({int((model.support_ & data.support).sum())} relevant, "
        f"{int((model.support_ & ~data.support).sum())} noise features kept).",
        "",
        "| s | gap | sd | log O(s) | mean log O*(s) |",
        "|---:|---:|---:|---:|---:|",
    ]
    ref = gap.ref_log_objectives.mean(axis=0)
    for i, s in enumerate(gap.grid):
        mark = " **(chosen)**" if i == gap.best_index else ""
        lines.append(f"| {int(s)}{mark} | {gap.gap[i]:.3f} | {gap.sd[i]:.3f} | "
                     f"{gap.log_objective[i]:.3f} | {ref[i]:.3f} |")
    figure = None if outdir is None else _gap_figure(gap, outdir)
    if figure is not None:
        lines += ["", f"![Experiment 1 gap curve]({figure})"]
    return "\n".join(lines)


def _gap_figure(gap: Any, outdir: Path) -> str | None:
    """Save the gap curve in ``outdir``; its link from the report (None without matplotlib)."""
    try:
        from sparsefs.plotting import new_figure, plot_gap_curve, save_figure

        fig, axes = new_figure()
    except ImportError:
        return None
    ax = axes[0, 0]
    plot_gap_curve(gap.grid, gap.gap, gap.sd, chosen=float(gap.best), ax=ax)
    ax.set_title("Experiment 1: gap statistic of L0KMeans")
    path = save_figure(fig, Path(outdir) / "exp1_gap_curve.png")
    return f"{Path(outdir).name}/{path.name}"  # the report sits beside outdir


def _claims_section(table) -> str:
    cer = _per_rep(table, "cer", "self").mean()
    kept = _per_rep(table, "n_selected", "selection").mean()
    noise = _per_rep(table, "noise_kept", "selection").mean()
    lines = ["### The paper's claims against our numbers", ""]

    if ("exp1", "exp1 (p=2000)", "l0") in kept.index:
        sel = table[(table["experiment"] == "exp1") & (table["method"] == "l0")
                    & (table["metric"] == "n_selected")]["value"]
        lines.append(
            f"- *Gap peaks near s = 200 (Exp. 1)*: l0 chose s = {int(sel.min())}–"
            f"{int(sel.max())} (mean {sel.mean():.0f}) over {sel.shape[0]} repetitions; "
            f"{'consistent' if 120 <= sel.mean() <= 300 else 'NOT consistent'} "
            "(regression target of the spec: [120, 300])."
        )
    p200 = [key for key in noise.index if key[0] == "exp2" and key[1].startswith("p=200")
            and key[2] not in ("k-means", "PCA+k-means")]
    if p200:
        parts = []
        for exp, ds, method in sorted(p200):
            parts.append(f"{method} on {ds}: {noise[(exp, ds, method)]:.1f}")
        lines.append(
            "- *l1 keeps all 150 noise features at p = 200 (Exp. 2)*: mean noise features kept — "
            + "; ".join(parts) + "."
        )
    lines.append("")
    lines.append("| experiment | data set | lowest mean CER | l0 | best other |")
    lines.append("|---|---|---|---:|---:|")
    n_l0_best, n_sets = 0, 0
    for (exp, ds), group in cer.groupby(level=[0, 1]):
        means = group.droplevel([0, 1])
        best = means.idxmin()
        others = means.drop("l0", errors="ignore")
        l0 = means.get("l0", np.nan)
        n_sets += 1
        n_l0_best += int(best == "l0")
        lines.append(f"| {exp} | {ds} | {best} | {l0:.3f} | "
                     f"{others.min():.3f} ({others.idxmin()}) |")
    lines.append("")
    lines.append(f"l0 has the lowest mean CER on {n_l0_best} of {n_sets} data sets.")
    for rival in ("k-means", "l1 (B=25)", "l1 (B=1)"):
        pairs = [(g.droplevel([0, 1]).get("l0"), g.droplevel([0, 1]).get(rival))
                 for _, g in cer.groupby(level=[0, 1])]
        pairs = [(a, b) for a, b in pairs if a is not None and b is not None]
        if pairs:
            wins = sum(a < b for a, b in pairs)
            lines.append(f"l0 has a lower mean CER than {rival} on {wins} of {len(pairs)}.")
    return "\n".join(lines)


def extra_sections(reproduction: Any, outdir: Path) -> str:
    """Markdown: the Experiment 1 gap curve and the claims checked (a report hook).

    Parameters
    ----------
    reproduction : sparsefs.benchmark.Reproduction
    outdir : pathlib.Path
        Where the gap-curve figure is saved (linked relative to the report).

    Returns
    -------
    str
    """
    table = _table(reproduction.results)
    return _gap_section(reproduction.quick, outdir) + "\n\n" + _claims_section(table) + "\n"
