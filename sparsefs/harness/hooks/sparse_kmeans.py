"""Report hook and claim checks of ``sparsefs reproduce sparse_kmeans``
(``configs/sparse_kmeans.toml``).

:func:`extra_sections` adds what the generic report cannot know: the gap curve of Experiment 1
(a table, and a figure when matplotlib is installed) and the mean CER of l0 against the others
on every data set. The other functions are the checks of the config's claims (Chang et al.,
arXiv:1403.7890 v1; spec ``sparse-kmeans.md`` 3.8): each reads the stored results and returns a
:class:`~sparsefs.harness.ClaimVerdict`, so a rerun (for example with a stronger optimiser)
updates the Claims table. Method labels come from the config (``args``).
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sparsefs.harness._claims import (
    ClaimNotRun,
    ClaimVerdict,
    experiment_results,
    fraction_verdict,
)

__all__ = ["extra_sections", "gap_choice", "kept_features", "lower_cer", "lowest_cer",
           "more_noise"]


def _joined_table(results: Any):
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
    lines = ["### Our numbers behind the claims (mean CER per data set)", ""]

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
    reproduction : sparsefs.harness.Reproduction
    outdir : pathlib.Path
        Where the gap-curve figure is saved (linked relative to the report).

    Returns
    -------
    str
    """
    table = _joined_table(reproduction.results)
    return _gap_section(reproduction.quick, outdir) + "\n\n" + _claims_section(table) + "\n"


# --------------------------------------------------------------------------------------------
# claim checks
# --------------------------------------------------------------------------------------------


def _cer(reproduction: Any, experiments: Sequence[str]):
    """Mean CER per (experiment, data set, method) over the repetitions."""
    frames = []
    for name in experiments:
        t = experiment_results(reproduction, name).table
        frames.append(t[(t["metric"] == "cer") & (t["estimator"] == "self")])
    import pandas as pd

    rows = pd.concat(frames, ignore_index=True)
    return rows.groupby(["experiment", "dataset", "method"], sort=False)["value"].mean()


def _need(means, method: str) -> None:
    if method not in set(means.index.get_level_values("method")):
        raise ClaimNotRun(f"method {method!r} was not run")


TIE = 1e-12
"""Two mean CERs closer than this are a tie (e.g. both 0: every repetition clustered perfectly)."""


def lowest_cer(reproduction: Any, *, method: str = "l0",
               experiments: Sequence[str] = ("exp1", "exp2", "exp3", "exp4")) -> ClaimVerdict:
    """``method`` has the lowest mean CER of all methods, data set by data set (a data set
    where it ties for the lowest with another method is left out and reported; all tied:
    ``inconclusive``)."""
    cer = _cer(reproduction, experiments)
    _need(cer, method)
    wins, n, ties, best_by = 0, 0, 0, {}
    for _, g in cer.groupby(level=[0, 1], sort=False):
        means = g.droplevel([0, 1])
        if method not in means.index:
            continue
        low = float(means.min())
        at_low = [m for m in means.index if means[m] - low <= TIE]
        if method in at_low and len(at_low) > 1:
            ties += 1
            continue
        n += 1
        wins += int(at_low == [method])
        best_by[at_low[0]] = best_by.get(at_low[0], 0) + 1
    who = ", ".join(f"{m} {c}" for m, c in sorted(best_by.items(), key=lambda x: -x[1]))
    tied = f"; tied for the lowest on {ties} data set(s), left out" if ties else ""
    if n == 0:
        return ClaimVerdict("inconclusive", f"tied for the lowest on all {ties} data sets",
                            "every data set is a tie at the lowest mean CER.")
    return ClaimVerdict(fraction_verdict(wins, n), f"lowest on {wins} of {n} data sets{tied}",
                        f"lowest mean CER by data set: {who}.")


def lower_cer(reproduction: Any, *, rivals: Sequence[str], method: str = "l0",
              experiments: Sequence[str] = ("exp1", "exp2", "exp3", "exp4"),
              datasets: Sequence[str] | None = None) -> ClaimVerdict:
    """``method`` has a lower mean CER than each of ``rivals`` on each data set.

    A (data set, rival) pair where the two mean CERs tie (within :data:`TIE`; typically both
    at the ceiling, CER 0) says nothing about "lower": it is left out of the count and
    reported. When every pair ties the verdict is ``inconclusive``.
    """
    cer = _cer(reproduction, experiments)
    _need(cer, method)
    per_rival, n_ok, n, n_tie, tie_at = [], 0, 0, 0, []
    for rival in rivals:
        wins = total = ties = 0
        for (_, ds), g in cer.groupby(level=[0, 1], sort=False):
            if datasets is not None and ds not in datasets:
                continue
            means = g.droplevel([0, 1])
            if method in means.index and rival in means.index:
                if abs(means[method] - means[rival]) <= TIE:
                    ties += 1
                    tie_at.append(float(means[method]))
                    continue
                total += 1
                wins += int(means[method] < means[rival])
        if total or ties:
            per_rival.append(f"{rival} {wins}/{total}" + (f" ({ties} tied)" if ties else ""))
            n_ok, n, n_tie = n_ok + wins, n + total, n_tie + ties
    if n == 0 and n_tie == 0:
        raise ClaimNotRun(f"none of {list(rivals)} was run beside {method}")
    tied = (f"; {n_tie} pair(s) tied at mean CER "
            + ", ".join(sorted({f'{v:.3g}' for v in tie_at})) + ", left out") if n_tie else ""
    if n == 0:
        return ClaimVerdict("inconclusive", f"{method} lower on: " + ", ".join(per_rival),
                            f"rule: lower mean CER on every (data set, rival) pair; every "
                            f"pair ties (mean CER {', '.join(sorted({f'{v:.3g}' for v in tie_at}))}"
                            f" for all): a ceiling, where no method can beat another.")
    return ClaimVerdict(fraction_verdict(n_ok, n), f"{method} lower on: " + ", ".join(per_rival),
                        f"rule: lower mean CER on every untied (data set, rival) pair; {n_ok} "
                        f"of {n} hold{tied}.")


def gap_choice(reproduction: Any, *, experiment: str = "exp1", method: str = "l0",
               low: float = 120, high: float = 300) -> ClaimVerdict:
    """The gap statistic's s (features kept by ``method``) lies in ``[low, high]`` on average."""
    t = experiment_results(reproduction, experiment).table
    sel = t[(t["method"] == method) & (t["metric"] == "n_selected")]["value"]
    if sel.empty:
        raise ClaimNotRun(f"method {method!r} was not run in `{experiment}`")
    inside = float(((sel >= low) & (sel <= high)).mean())
    verdict = ("reproduced" if low <= sel.mean() <= high and inside >= 0.75 else
               "partly" if inside >= 0.25 else "not reproduced")
    return ClaimVerdict(verdict, f"s = {int(sel.min())}-{int(sel.max())} (mean {sel.mean():.0f}) "
                        f"over {sel.shape[0]} repetitions",
                        f"rule: mean s in [{low:g}, {high:g}] (the spec's regression target) "
                        f"and ≥ 75% of the repetitions inside; {inside:.0%} inside.")


def _kept(reproduction: Any, experiment: str, method: str, prefix: str):
    res = experiment_results(reproduction, experiment)
    t = res.table
    info = {d["dataset"]: d for d in res.meta.get("datasets", [])}
    rows = t[(t["method"] == method) & (t["estimator"] == "selection")
             & t["dataset"].str.startswith(prefix)]
    if rows.empty:
        raise ClaimNotRun(f"method {method!r} was not run on `{experiment}` {prefix}*")
    means = rows.groupby(["dataset", "metric"])["value"].mean().unstack()
    out = {}
    for ds, r in means.iterrows():
        d = info[ds]
        n_rel = d["n_relevant"]
        out[ds] = (r["relevant_kept"] / n_rel, r["noise_kept"] / (d["n_features"] - n_rel),
                   r["noise_kept"], d["n_features"] - n_rel)
    return out


def kept_features(reproduction: Any, *, experiment: str, method: str = "l0",
                  prefix: str = "", relevant_at_least: float = 0.8,
                  noise_at_most: float = 0.1) -> ClaimVerdict:
    """``method`` keeps at least ``relevant_at_least`` of the relevant and at most
    ``noise_at_most`` of the noise features on every data set (means over repetitions)."""
    kept = _kept(reproduction, experiment, method, prefix)
    ok = [rel >= relevant_at_least and noise <= noise_at_most for rel, noise, _, _ in
          kept.values()]
    text = "; ".join(f"{ds}: {rel:.0%} relevant, {noise:.0%} noise" for ds, (rel, noise, _, _)
                     in kept.items())
    return ClaimVerdict(fraction_verdict(sum(ok), len(ok)), text,
                        f"rule: ≥ {relevant_at_least:.0%} of the relevant and ≤ "
                        f"{noise_at_most:.0%} of the noise features kept; {sum(ok)} of "
                        f"{len(ok)} data sets.")


def more_noise(reproduction: Any, *, experiment: str = "exp2", more: str = "l1 (B=25)",
               less: str = "l0", prefix: str = "", all_share: float | None = None
               ) -> ClaimVerdict:
    """``more`` keeps more noise features than ``less`` on every data set; with ``all_share``,
    ``more`` keeps at least that share of all noise features ("all of them")."""
    a = _kept(reproduction, experiment, more, prefix)
    b = _kept(reproduction, experiment, less, prefix)
    if all_share is not None:
        ok = [a[ds][1] >= all_share for ds in a]
        text = "; ".join(f"{ds}: {more} {a[ds][2]:.0f} of {a[ds][3]:.0f}" for ds in a)
        return ClaimVerdict(fraction_verdict(sum(ok), len(ok)), text,
                            f"rule: ≥ {all_share:.0%} of the noise features kept by {more}; "
                            f"{sum(ok)} of {len(ok)} data sets.")
    common = [ds for ds in a if ds in b]
    ok = [a[ds][2] > b[ds][2] for ds in common]
    text = "; ".join(f"{ds}: {a[ds][2]:.0f} vs {b[ds][2]:.0f}" for ds in common)
    return ClaimVerdict(fraction_verdict(sum(ok), len(ok)),
                        f"noise kept, {more} vs {less}: {text}",
                        f"rule: {more} keeps more noise on every data set; {sum(ok)} of "
                        f"{len(ok)}.")
