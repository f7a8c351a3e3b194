"""``docs/standing.md``: the standing page, rendered from the analyses of the stored results.

Every number and every verdict on the page is computed here from an :class:`Analysis`
(``_analysis.py``); the only hand-written text is the description of the protocols, which is
generated from the specs' numbers too. Figures are drawn by :mod:`sparsefs.plotting` and passed
in as ``(caption, path)`` pairs (the harness never imports plotting).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sparsefs.harness._tables import md_table
from sparsefs.harness.standing._analysis import STATUS_WORDS, Analysis, Headline

__all__ = ["render_page", "summary_lines"]

LETTER = {"microarray": "a", "markers": "b", "clustering": "c"}
PAPERS = {
    "microarray": "Bommert, Sun, Bischl, Rahnenführer & Lang, \"Benchmark for filter methods "
                  "for feature selection in high-dimensional classification data\", CSDA "
                  "143:106839 (2020)",
    "markers": "Pullin & McCarthy, \"A comparison of marker gene selection methods for "
               "single-cell RNA sequencing data\", Genome Biology 25:56 (2024)",
    "clustering": "Cho et al., \"Characterizing efficient feature selection for single-cell "
                  "expression analysis\", Briefings in Bioinformatics 25(4):bbae317 (2024)",
}
_SHORT = {"better": "beats", "worse": "worse than", "": "≈"}


def _f(x: Any, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "—"
    return f"{x:.{digits}f}"


def _t(seconds: float) -> str:
    if seconds is None or not np.isfinite(seconds):
        return "—"
    if seconds < 0.01:
        return f"{seconds * 1000:.1f} ms"
    if seconds < 100:
        return f"{seconds:.2g} s" if seconds < 1 else f"{seconds:.1f} s"
    return f"{seconds / 60:.1f} min"


def _p(p: float) -> str:
    if p is None or not np.isfinite(p):
        return "—"
    return f"{p:.2g}" if p >= 0.001 else "< 0.001"


def _figure(figs: Mapping[str, tuple[str, str]], key: str) -> list[str]:
    if key not in figs:
        return []
    caption, path = figs[key]
    return [f"![{caption}]({path})", "", f"*{caption}.*", ""]


def _kind_word(kind: str) -> str:
    return {"sparsefs": "sparsefs", "peer": "peer", "baseline": "baseline"}[kind]


# --------------------------------------------------------------------------------------------
# per-benchmark verdict summaries
# --------------------------------------------------------------------------------------------


def _left_out_words(h: Headline) -> str:
    if not h.left_out:
        return ""
    return "; not yet in the tests: " + ", ".join(f"{d} ({why})" for d, why in h.left_out.items())


def _headline_summary(a: Analysis, h: Headline) -> str:
    """One computed sentence: the winner, how many sparsefs methods beat / tie / lose."""
    if h.tests is None or h.winner is None or h.pairwise is None:
        return (f"**{h.title}**: not enough complete results for the rank tests yet "
                f"({a.n_ok} cells stored{_left_out_words(h)}).")
    kinds = {m.label: m.kind for m in a.spec.methods}
    table = h.pairwise.table
    ours = [m for m in table.index if kinds.get(m) == "sparsefs"]
    better = [m for m in ours if table.loc[m, "direction"] == "better"]
    worse = [m for m in ours if table.loc[m, "direction"] == "worse"]
    same = [m for m in ours if m not in better and m not in worse]
    ranks = h.tests.average_ranks.sort_values()
    top = ranks.index[0]
    text = (f"**{h.title}** ({h.tests.n_datasets} data sets, {len(h.ranked)} methods in the "
            f"rank test{_left_out_words(h)}): the simple winner is **{h.winner}** (average rank "
            f"{ranks[h.winner]:.1f}); the best average rank is {top} ({ranks[top]:.1f}). "
            f"Friedman p = {_p(h.tests.pvalue)}, Iman–Davenport p = "
            f"{_p(h.tests.iman_davenport_pvalue)}. Against {h.winner} (Wilcoxon signed-rank, "
            f"Holm over {len(table)} comparisons): ")
    if better:
        text += f"{len(better)} sparsefs method(s) beat it ({', '.join(better)}); "
    else:
        text += "**no sparsefs method beats it**; "
    text += f"{len(same)} are indistinguishable"
    text += f", {len(worse)} are worse ({', '.join(worse)})." if worse else ", none is worse."
    # the baselines, on the data sets where every ranked method has a score
    full = h.scores.loc[h.scores[h.ranked].notna().all(axis=1)]
    means = full[h.ranked].mean()
    for base in [m for m in h.scores.columns if kinds.get(m) == "baseline"]:
        if full[base].notna().all():
            b = float(full[base].mean())
            above = int((means > b + 1e-9).sum())
            text += (f" The *{base}* baseline averages {b:.3f} (best method: "
                     f"{means.idxmax()} {means.max():.3f}); {above} of {len(means)} ranked "
                     f"methods average above it.")
    return text


def summary_lines(analyses: Mapping[str, Analysis | None]) -> list[str]:
    """The page's opening verdicts, one bullet per headline of each benchmark."""
    out = []
    for bench in ("microarray", "markers", "clustering"):
        a = analyses.get(bench)
        if a is None:
            out.append(f"- ({LETTER[bench]}) {bench}: not run yet (no stored results).")
            continue
        if not a.headlines:
            out.append(f"- ({LETTER[bench]}) {a.spec.title}: no results yet.")
            continue
        for h in a.headlines:
            out.append(f"- ({LETTER[bench]}) {_headline_summary(a, h)}")
    return out


def _helps(analyses: Mapping[str, Analysis | None]) -> list[str]:
    """Where a sparsefs method still helps, computed: smaller panels at equal accuracy,
    stability, its own classifier, no labels."""
    out = []
    a = analyses.get("microarray")
    if a is not None and a.headlines:
        kinds = {m.label: m.kind for m in a.spec.methods}
        for h in a.headlines:
            if h.pairwise is None:
                continue
            kstar = a.tables.get(f"k_star_{h.key}")
            if kstar is None:
                continue
            med = kstar.median(axis=0, skipna=True)
            ref = med.get(h.winner, np.nan)
            small = [m for m in h.pairwise.table.index
                     if kinds.get(m) == "sparsefs"
                     and h.pairwise.table.loc[m, "direction"] != "worse"
                     and med.get(m, np.nan) < ref]
            if small:
                out.append(f"- **Smaller panels** ({h.title}): no worse than {h.winner} while "
                           f"choosing fewer features (median chosen k over data sets; "
                           f"{h.winner}: {ref:g}): " + ", ".join(
                               f"{m} ({med[m]:g})" for m in small) + ".")
        summ = a.tables.get("stability_summary")
        win = a.headlines[0].winner
        if summ is not None and len(summ) and win in summ.index:
            ref = summ.loc[win]
            above = [m for m in summ.index if kinds.get(m) == "sparsefs"
                     and summ.loc[m, "ci_low"] > ref["ci_high"]]
            if above:
                out.append(f"- **Stability** (microarray, top {a.tables['stability_k']}): "
                           f"more stable across the outer folds than {win} "
                           f"({_f(ref['value'])}), intervals not overlapping: " + ", ".join(
                               f"{m} ({_f(summ.loc[m, 'value'])})" for m in above) + ".")
            else:
                out.append(f"- **Stability** (microarray, top {a.tables['stability_k']}): no "
                           f"sparsefs method is more stable than {win} "
                           f"({_f(ref['value'])}) with non-overlapping intervals.")
        own = a.tables.get("own")
        if own is not None and len(own.columns) and a.headlines[0].winner:
            h = a.headlines[0]
            for m in own.columns:
                pair = pd.concat([own[m], h.scores[h.winner]], axis=1).dropna()
                if pair.empty:
                    continue
                d = pair.iloc[:, 0] - pair.iloc[:, 1]
                out.append(f"- **Own classifier** ({m}): its own predictions average "
                           f"{_f(own[m].mean())} against {_f(pair.iloc[:, 1].mean())} for "
                           f"{h.winner} + {h.title.split(', ')[-1]}; ahead on "
                           f"{int((d > 1e-9).sum())} of {len(d)} data sets.")
    c = analyses.get("clustering")
    if c is not None and c.headlines and c.headlines[0].pairwise is not None:
        h = c.headlines[0]
        kinds = {m.label: m.kind for m in c.spec.methods}
        ok = [m for m in h.pairwise.table.index if kinds.get(m) == "sparsefs"
              and h.pairwise.table.loc[m, "direction"] == "better"]
        rnd = h.scores.get("random")
        beats_random = []
        if rnd is not None:
            for m in h.scores.columns:
                if kinds.get(m) == "sparsefs":
                    pair = pd.concat([h.scores[m], rnd], axis=1).dropna()
                    if len(pair) and (pair.iloc[:, 0] > pair.iloc[:, 1]).mean() > 0.5:
                        beats_random.append(m)
        out.append(f"- **No labels** (clustering, {h.title}): "
                   + (f"beat {h.winner}: {', '.join(ok)}; " if ok else
                      f"no sparsefs method beats {h.winner}; ")
                   + (f"above a random ranking on most data sets: {', '.join(beats_random)}."
                      if beats_random else "none is above a random ranking on most data sets."))
    out.append("- **Error control**: `error_control`, `knockoffs` and `stability` are judged "
               "here only by the accuracy of their rankings; what they add is a selection "
               "with a stated error guarantee (FDR, PFER), which no benchmark above measures "
               "(see docs/methods/error_control.md, knockoffs.md, stability.md).")
    return out


# --------------------------------------------------------------------------------------------
# sections
# --------------------------------------------------------------------------------------------


def _datasets_table(a: Analysis, with_half: bool) -> list[str]:
    header = ["data set", "n", "p", "classes"] + (["half"] if with_half else []) + ["notes"]
    rows = []
    for r in a.datasets.itertuples(index=False):
        row = [r.dataset, r.n if r.n is not None else "—", r.p if r.p is not None else "—",
               r.n_classes if r.n_classes is not None else "—"]
        if with_half:
            row.append(r.half or "—")
        rows.append([*row, r.note])
    return [md_table(header, rows), ""]


def _methods_table(a: Analysis) -> list[str]:
    rows = []
    for m in a.spec.methods:
        what = f"`{m.stem}`" if m.stem else (f"`{m.estimator.rsplit(':', 1)[-1]}`"
                                             if m.estimator else "—")
        params = ", ".join(f"{k}={v}" for k, v in m.params.items()) or "defaults"
        extra = []
        if m.input == "raw":
            extra.append("data as stored")
        if m.k_choice == "own":
            extra.append("k: own rule")
        if m.own_predictions:
            extra.append("own predictions scored")
        base = "log1p expression" if a.spec.benchmark == "markers" else "z-scored"
        rows.append([m.label, _kind_word(m.kind), what, params,
                     "; ".join(extra) or base, m.note])
    return [md_table(["method", "kind", "estimator", "parameters", "input", "notes"], rows), ""]


def _status_lines(a: Analysis) -> list[str]:
    bad = a.cells[a.cells["status"] != "ok"]
    stale = a.cells[(a.cells["status"] != "absent") & ~a.cells["current"]]
    out = [f"{a.n_ok} of {len(a.cells)} cells (data set × method) have results."]
    if len(bad):
        rows = [[r.dataset, r.method, STATUS_WORDS[r.status], r.message or "—"]
                for r in bad.itertuples(index=False)]
        out += ["", md_table(["data set", "method", "status", "why"], rows)]
    if len(stale):
        out += ["", f"**Note:** {len(stale)} stored cell(s) were computed with another "
                "definition than the current config (a rerun recomputes them): "
                + ", ".join(f"{r.dataset} / {r.method}" for r in stale.itertuples()) + "."]
    return [*out, ""]


def _score_table(scores: pd.DataFrame, kinds: Mapping[str, str], *, digits: int = 3,
                 ranks: pd.Series | None = None, transpose: bool = True) -> list[str]:
    """Methods as rows, data sets as columns, the best non-baseline value of each data set in
    bold, then the mean and the average rank."""
    datasets = [d for d in scores.index if scores.loc[d].notna().any()]
    sc = scores.loc[datasets]
    ranked_cols = [m for m in sc.columns if kinds.get(m) != "baseline"]
    best = sc[ranked_cols].max(axis=1) if ranked_cols else pd.Series(dtype=float)
    header = ["method", *datasets, "mean", "avg rank"]
    rows = []
    order = list(sc.columns)
    if ranks is not None:
        order = sorted(order, key=lambda m: (ranks.get(m, np.inf), order.index(m)))
    for m in order:
        cells = []
        for d in datasets:
            v = sc.loc[d, m]
            txt = _f(v, digits)
            if np.isfinite(v) and kinds.get(m) != "baseline" and abs(v - best[d]) <= 1e-9:
                txt = f"**{txt}**"
            cells.append(txt)
        name = m if kinds.get(m) != "baseline" else f"*{m}*"
        mean = sc[m].mean() if sc[m].notna().all() else np.nan
        rows.append([name, *cells, _f(mean, digits),
                     _f(ranks.get(m), 1) if ranks is not None and m in ranks else "—"])
    return [md_table(header, rows), ""]


def _pairwise_table(h: Headline, kinds: Mapping[str, str]) -> list[str]:
    t = h.pairwise.table
    rows = []
    for m in t.sort_values(["mean_diff"], ascending=False).index:
        r = t.loc[m]
        rows.append([m, _kind_word(kinds.get(m, "peer")), int(r["n"]),
                     f"{int(r['wins'])} / {int(r['ties'])} / {int(r['losses'])}",
                     f"{r['mean_diff']:+.3f}" if np.isfinite(r["mean_diff"]) else "—",
                     f"{r['r_plus']:g} / {r['r_minus']:g}" if np.isfinite(r["r_plus"]) else "—",
                     _p(r["pvalue"]), _p(r["p_holm"]),
                     {"better": "**better**", "worse": "**worse**"}.get(r["direction"], "—")])
    return [md_table(["method", "kind", "data sets", "wins / ties / losses", "mean difference",
                      "R+ / R−", "p", "p (Holm)", "significant"], rows), ""]


def _methods_cells_headlines(a: Analysis, figs: Mapping[str, tuple[str, str]]) -> list[str]:
    """The methods, the status of the cells and every headline metric (each benchmark)."""
    out = ["### Methods", "", *_methods_table(a)]
    out += ["### Cells", "", *_status_lines(a)]
    for h in a.headlines:
        out += _headline_section(a, h, figs)
    return out


def _headline_section(a: Analysis, h: Headline, figs: Mapping[str, tuple[str, str]],
                      level: str = "###") -> list[str]:
    kinds = {m.label: m.kind for m in a.spec.methods}
    ranks = h.tests.average_ranks if h.tests is not None else None
    out = [f"{level} {h.title[0].upper()}{h.title[1:]}", ""]
    out += ["Rows sorted by average rank (1 = best) among the methods with a score on every "
            "data set; the best value of each data set in bold; baselines in italics (not "
            "ranked).", ""]
    out += _score_table(h.scores, kinds, ranks=ranks)
    if h.left_out:
        out += ["Data sets shown but not in the rank tests (not every method run on them "
                "yet): " + "; ".join(f"{d} ({why})" for d, why in h.left_out.items()) + ".",
                ""]
    if h.excluded:
        out += ["Not in the rank tests (a missing cell): " + "; ".join(
            f"{m} ({why})" for m, why in h.excluded.items()) + ".", ""]
    if h.tests is not None:
        t = h.tests
        out += [f"Friedman χ² = {t.statistic:.2f} (p = {_p(t.pvalue)}), Iman–Davenport F = "
                f"{t.iman_davenport:.2f} (p = {_p(t.iman_davenport_pvalue)}) over "
                f"{t.n_datasets} data sets and {t.n_methods} methods; Nemenyi critical "
                f"difference {t.critical_difference:.2f} at α = {t.alpha} (Demšar 2006).", ""]
        out += _figure(figs, f"cd_{h.key}")
    if h.pairwise is not None:
        out += [f"Against the simple winner **{h.winner}** (the best average rank among "
                f"{', '.join(a.spec.simple)}): Wilcoxon signed-rank test over the data sets "
                "(two-sided, zero differences split), Holm's correction over all the "
                "comparisons.", ""]
        out += _pairwise_table(h, kinds)
    return out


def _microarray_section(a: Analysis, figs: Mapping[str, tuple[str, str]]) -> list[str]:
    spec, proto, t = a.spec, a.spec.protocol, a.tables
    kinds = {m.label: m.kind for m in spec.methods}
    grid = ", ".join(str(k) for k in spec.k_grid())
    out = ["### Protocol", "",
           f"- Outer resampling: stratified {proto.get('outer_splits', 5)}-fold CV"
           + (f", repeated {proto['outer_repeats']} times" if proto.get("outer_repeats", 1) > 1
              else "") + "; the same folds for every method.",
           "- On each outer training fold the features are z-scored with the training rows' "
           "statistics (variance and chi-square rank the stored data: z-scoring would make "
           "them meaningless) and the method is fitted **once**; its ranking gives the top-k "
           f"for every k in {{{grid}}}. The classifiers always see the z-scored features.",
           f"- k is chosen by an inner stratified {proto.get('inner_splits', 5)}-fold CV of "
           "each classifier on that ranking, inside the outer training rows only (ties: the "
           "smallest k); the outer test fold then gives the **nested accuracy** at that k. "
           "The ranking is not refitted inside the inner folds (the cheaper design allowed "
           "by issue #29: one fit per outer fold); the outer estimate is unbiased for this "
           "procedure, the inner accuracies are optimistic for every k alike.",
           "- Classifiers: linear SVM (`SVC(kernel='linear', C=1)`) and 5-nearest neighbours "
           "(Euclidean, uniform votes; neighbours tied in distance taken in row order).",
           f"- Time budget: {spec.budget_s:.0f} CPU seconds per cell (data set × method, "
           "all folds), one BLAS and one numba thread per cell; a cell over it is stopped "
           "and shown as *not run in budget* (as Bommert et al. did). CPU time rather than "
           "wall time, because the machine is shared.",
           "- Reported: nested accuracy (mean over outer folds); balanced accuracy; accuracy "
           "against k on the outer test folds; median CPU time of a fit; similarity of the top-"
           f"{t.get('similarity_k')} lists; Nogueira stability of the top-"
           f"{t.get('stability_k')} over the outer folds.", ""]
    out += ["### Data sets", "", "Each patient cohort once: ALLAML, `leukemia.mat` and "
            "`Leukemia_1.mat` are the same 72 patients (ALLAML kept); `CNS.mat` holds the 60 "
            "medulloblastomas that are also in `Brain_Tumor_1.mat` (identical arrays, found "
            "by matching every column; Brain_Tumor_1 kept). `half` is the fixed split of the "
            "defaults policy (docs/contract.md).", ""]
    out += _datasets_table(a, with_half=True)
    out += _methods_cells_headlines(a, figs)
    out += ["### Accuracy against k", "", *_figure(figs, "curves")]
    for c in [h.key for h in a.headlines]:
        kstar = t.get(f"k_star_{c}")
        if kstar is not None and not kstar.dropna(how="all").empty:
            med = kstar.median(axis=0, skipna=True).dropna().sort_values()
            out += [f"Median chosen k ({c}, over data sets of the per-data-set median over "
                    "folds): " + ", ".join(f"{m} {v:g}" for m, v in med.items()) + ".", ""]
    bacc = {h.key: t.get(f"bacc_{h.key}") for h in a.headlines}
    for c, mat in bacc.items():
        if mat is not None and not mat.dropna(how="all").empty:
            out += [f"### Balanced accuracy at the chosen k ({c})", ""]
            out += _score_table(mat, kinds)
    if "own" in t and len(t["own"].columns):
        out += ["### The methods' own predictions", "",
                "Selecting classifiers scored with their own `predict`, k (for the "
                "class-specific ensemble: m, the features per class) chosen by an inner CV "
                "that refits the method inside the inner folds. Not in the rank tests (the "
                "other methods have no own classifier).", ""]
        own = t["own"].copy()
        own_k = t.get("own_k")
        rows = []
        for d in own.index:
            rows.append([d] + [f"{_f(own.loc[d, m])} (k {own_k.loc[d, m]:g})"
                               if own_k is not None and np.isfinite(own_k.loc[d, m])
                               else _f(own.loc[d, m]) for m in own.columns])
        rows.append(["mean"] + [_f(own[m].mean()) for m in own.columns])
        out += [md_table(["data set", *own.columns], rows), ""]
    out += _time_section(a, figs)
    out += _similarity_section(a, figs)
    out += _stability_section(a, figs)
    return out


def _time_section(a: Analysis, figs) -> list[str]:
    times = a.tables.get("fit_time")
    if times is None or times.dropna(how="all").empty:
        return []
    kinds = {m.label: m.kind for m in a.spec.methods}
    geo = np.exp(np.log(times.clip(lower=1e-5)).mean(axis=0, skipna=True)).dropna()
    rows = []
    for m in geo.sort_values().index:
        col = times[m].dropna()
        rows.append([m, _kind_word(kinds.get(m, "peer")), _t(geo[m]), _t(col.min()),
                     _t(col.max()), f"{col.idxmax()}"])
    out = ["### Run time", "",
           "CPU time of one fit (" + ("median over the folds, " if
                                      a.spec.benchmark != "clustering" else "")
           + "one BLAS and one numba thread: the wall time of a quiet machine), geometric "
           "mean over the data sets.", "",
           md_table(["method", "kind", "geometric mean", "fastest", "slowest", "slowest on"],
                    rows), ""]
    return out + _figure(figs, "time")


def _similarity_section(a: Analysis, figs) -> list[str]:
    sim = a.tables.get("similarity")
    if sim is None or len(sim) < 3:
        return []
    k = a.tables.get("similarity_k")
    pairs = []
    names = list(sim.index)
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            v = sim.iloc[i, j]
            if np.isfinite(v) and v >= 0.9:
                pairs.append((v, names[i], names[j]))
    pairs.sort(reverse=True)
    out = ["### Ranking similarity", "",
           f"Share of common features in two methods' top {k}, averaged over the data sets"
           + (" and outer folds" if a.spec.benchmark == "microarray" else "")
           + " (Bommert et al. found groups of near-identical filters; so do we).", ""]
    out += _figure(figs, "similarity")
    if pairs:
        out += [f"Pairs sharing at least 90 % of their top {k}: " + "; ".join(
            f"{x} ≈ {y} ({v:.2f})" for v, x, y in pairs[:25])
            + (f" (and {len(pairs) - 25} more)" if len(pairs) > 25 else "") + ".", ""]
    return out


def _stability_section(a: Analysis, figs) -> list[str]:
    summ = a.tables.get("stability_summary")
    if summ is None or not len(summ):
        return []
    kinds = {m.label: m.kind for m in a.spec.methods}
    k = a.tables.get("stability_k")
    stab = a.tables["stability"]
    wide = stab.pivot_table(index="method", columns="dataset", values="value", sort=False)
    rows = []
    for m in summ.sort_values("value", ascending=False).index:
        r = summ.loc[m]
        rows.append([m, _kind_word(kinds.get(m, "peer")),
                     f"{_f(r['value'])} [{_f(r['ci_low'])}, {_f(r['ci_high'])}]",
                     int(r["n_datasets"])] + [_f(wide.loc[m].get(d)) if m in wide.index else "—"
                                              for d in wide.columns])
    out = ["### Selection stability", "",
           f"Nogueira, Sechidis & Brown (JMLR 2018) stability of the top {k} over the outer "
           "training folds (1: the same features on every fold; 0: as different as random "
           "sets), per data set, and its mean over the data sets with a 95 % interval from "
           "the per-data-set variances.", "",
           md_table(["method", "kind", "mean [95 % CI]", "data sets", *wide.columns], rows), ""]
    return out + _figure(figs, "stability")


def _clustering_section(a: Analysis, figs) -> list[str]:
    spec, proto = a.spec, a.spec.protocol
    kinds = {m.label: m.kind for m in spec.methods}
    grid = ", ".join(str(k) for k in spec.k_grid())
    out = ["### Protocol", "",
           "- Each method is fitted once on every sample **without labels** (features "
           "z-scored over all samples; the variance filter and scanpy's HVG get the data as "
           "stored).",
           f"- For every k in {{{grid}}} (capped at the number of features), k-means "
           f"(k-means++, one start, as many clusters as annotated groups) runs "
           f"{proto.get('n_runs', 10)} times on the selected features (z-scored), with the "
           "same starting seeds for every method.",
           "- Reported: ARI and NMI against the annotation, mean over the runs, then over the "
           "k grid (no k is chosen with the labels; the best k is shown as a ceiling).",
           f"- Time budget {spec.budget_s:.0f} CPU seconds per cell, one thread.", ""]
    out += ["### Data sets", "", *_datasets_table(a, with_half=False)]
    out += _methods_cells_headlines(a, figs)
    best = a.tables.get("best_ari")
    if best is not None and not best.dropna(how="all").empty:
        out += ["### ARI at the best k (a ceiling: k chosen with the labels)", ""]
        out += _score_table(best, kinds)
    out += ["### Scores against k", "", *_figure(figs, "curves")]
    out += _time_section(a, figs)
    out += _similarity_section(a, figs)
    return out


def _markers_section(a: Analysis, figs) -> list[str]:
    spec, proto = a.spec, a.spec.protocol
    kinds = {m.label: m.kind for m in spec.methods}
    out = ["### Protocol", "",
           f"- Cells split into {proto.get('n_splits', 2)} folds (simulations: by donor, so "
           "the held-out cells come from donors never seen; pbmc68k_reduced: stratified by "
           "type); every method is fitted on the training cells of each fold (log1p "
           "expression, as scanpy's tests get it).",
           "- Per type, each method's list of genes best first: scanpy's "
           "`rank_genes_groups` and COSG give one per type; sparsefs methods go through "
           "`sparsefs.tl.select` (the class-specific selector has one ranking per type; the "
           "others give the per-type view of one selection of "
           f"{proto.get('selection_per_group', 20)} genes per type, docs/single_cell.md).",
           "- **Recall** (simulations): the share of each type's planted up-regulated "
           "markers among its top m (m = the number planted), mean over types (and the worst "
           "type); **expert recall** (pbmc68k_reduced): the share of the Seurat/scanpy PBMC "
           f"tutorial markers of a type among its top {proto.get('expert_top', 10)}.",
           f"- **Held-out accuracy**: the union of each type's top "
           f"{proto.get('panel_per_group', 5)} genes, a 5-NN and a linear SVM trained on the "
           "training cells, scored on the held-out cells.",
           "- **Time and memory** of the fit on the training cells (peak memory traced by "
           "`tracemalloc`: numpy and Python allocations, not BLAS or numba workspaces).",
           f"- Time budget {spec.budget_s:.0f} CPU seconds per cell, one thread.", ""]
    out += ["### Data sets", "", *_datasets_table(a, with_half=False)]
    out += _methods_cells_headlines(a, figs)
    by_type = a.tables.get("recall_by_type") or {}
    if by_type:
        first = next(iter(by_type))
        t = by_type[first]
        rows = [[m, *(_f(t.loc[m, g]) for g in t.columns), _f(t.loc[m].mean())]
                for m in t.index]
        out += [f"### Recall per type ({first})", "",
                "The share of each type's planted markers among its top m, mean over the "
                "folds (the other simulations: in the stored results).", "",
                md_table(["method", *t.columns, "mean"], rows), ""]
    for key, title in (("recall_min", "Recall of the worst-recovered type"),
                       ("expert", "Expert-marker recall (pbmc68k_reduced)")):
        mat = a.tables.get(key)
        if mat is not None and not mat.dropna(how="all").empty:
            out += [f"### {title}", "", *_score_table(mat.dropna(axis=0, how="all"), kinds)]
    mem = a.tables.get("memory_mb")
    out += _time_section(a, figs)
    if mem is not None and not mem.dropna(how="all").empty:
        out += ["### Peak memory of the fit (MB, traced)", ""]
        out += _score_table(mem.dropna(axis=0, how="all"), {}, digits=1)
    return out


def _method_verdicts(analyses: Mapping[str, Analysis | None]) -> list[str]:
    """Per sparsefs method: its verdict on every headline it takes part in."""
    rows: dict[str, list[str]] = {}
    for bench in ("microarray", "markers", "clustering"):
        a = analyses.get(bench)
        if a is None:
            continue
        for h in a.headlines:
            for m, text in h.verdicts.items():
                rows.setdefault(m, []).append(f"({LETTER[bench]}) {text}")
    if not rows:
        return []
    out = ["## Verdict per sparsefs method", "",
           "Computed from the tables below at every render (no hand-written verdicts): each "
           "method against the simple winner of each headline.", ""]
    for m in sorted(rows):
        out += [f"- **{m}**:"] + [f"  - {t}" for t in rows[m]]
    return [*out, ""]


def _compact_table(analyses: Mapping[str, Analysis | None]) -> list[str]:
    cols, verdicts = [], {}
    for bench in ("microarray", "markers", "clustering"):
        a = analyses.get(bench)
        if a is None:
            continue
        for h in a.headlines:
            if h.pairwise is None:
                continue
            col = f"({LETTER[bench]}) {h.key}: vs {h.winner}"
            cols.append(col)
            ranks = h.tests.average_ranks if h.tests is not None else {}
            for m in h.verdicts:
                r = h.pairwise.table.loc[m]
                word = _SHORT[r["direction"]]
                rank = f", rank {ranks[m]:.1f}" if m in ranks else ""
                verdicts.setdefault(m, {})[col] = f"{word} ({r['mean_diff']:+.3f}{rank})"
    if not verdicts:
        return []
    rows = [[m, *(verdicts[m].get(c, "—") for c in cols)] for m in sorted(verdicts)]
    return [md_table(["sparsefs method", *cols], rows), "",
            "“beats” / “worse than”: Wilcoxon signed-rank over the data sets significant after "
            "Holm's correction; “≈”: not significant. In brackets: the mean difference to the "
            "simple winner and the average rank.", ""]


def _run_info(analyses: Mapping[str, Analysis | None]) -> list[str]:
    rows, runs = [], []
    for bench in ("microarray", "markers", "clustering"):
        a = analyses.get(bench)
        if a is None or not a.meta:
            continue
        m = a.meta
        load = m.get("loadavg_1min")
        rows.append([f"({LETTER[bench]}) {bench}", f"{m['first_started']} – {m['last_finished']}",
                     _t(m["cell_seconds"]), _t(m.get("cell_cpu_seconds", np.nan)),
                     f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}" if load else "—",
                     ", ".join(m.get("revisions", [])) + (" (+ changes)" if m.get("dirty")
                                                          else "")])
        for r in m.get("runs", []):
            cells = ", ".join(f"{n} {STATUS_WORDS.get(s, s)}" for s, n in
                              sorted(r.get("cells", {}).items()))
            lb, la = r.get("loadavg_before"), r.get("loadavg_after")
            runs.append([f"({LETTER[bench]})", f"{r['started']} – {r['finished']}",
                         _t(r["wall_s"]), str(r.get("n_jobs")), cells,
                         f"{lb[0]:.1f} → {la[0]:.1f}" if lb and la else "—",
                         f"{100 * r['busy_share']:.0f} %" if r.get("busy_share") is not None
                         else "—"])
    if not rows:
        return []
    versions = next((a.meta.get("versions") for a in analyses.values()
                     if a is not None and a.meta.get("versions")), {})
    out = ["## How it was run", "",
           md_table(["benchmark", "cells computed (UTC)", "sum of cell wall times",
                     "sum of cell CPU times", "1-min load at cell start (min / median / max)",
                     "sparsefs revision"], rows), ""]
    if runs:
        out += ["Every invocation that computed cells (a resumed run has several):", "",
                md_table(["benchmark", "run (UTC)", "wall time", "workers", "cells computed",
                          "1-min load before → after", "CPUs busy (all users)"], runs), ""]
    projected = [f"({LETTER[b]}) {_t(a.meta['cell_cpu_seconds'] / 2)}"
                 for b, a in analyses.items()
                 if a is not None and a.meta and np.isfinite(a.meta.get("cell_cpu_seconds",
                                                                         np.nan))]
    if projected:
        out += ["A run of every cell from scratch with 2 workers on an idle 2-core machine "
                "takes about half the summed cell CPU time (single-threaded cells; a cell "
                "stopped at its budget counts until the stop): " + ", ".join(projected) + ".",
                ""]
    out += ["Versions: " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())) + ".",
            "", "The machine is a shared 2-core virtual machine: the load columns say how "
            "busy it was (everyone's work included). Run times on this page are CPU times of "
            "single-threaded fits, which the load hardly changes; the wall time of a run is "
            "what the load made it.", ""]
    return out


CHOICES = {
    "microarray": [
        "Data: the microarray cohorts of `../shared/data`, each patient cohort once (10 sets), "
        "not the paper's 16 OpenML sets (most are not available offline).",
        "Methods: every registered supervised sparsefs selector with its defaults (sparse KOS "
        "with a stated cheaper setting) and the peers that install from PyPI, not the paper's "
        "22 R filters.",
        "Nested resampling: one ranking per outer training fold, k tuned by an inner CV of the "
        "classifier on that ranking (the paper tunes inside nested resampling; refitting every "
        "method in every inner fold would multiply the cost by the inner folds).",
        "Classifiers: a linear SVM (C = 1) and 5-NN; the k grid is fixed (1 to 100 features).",
        "Stability (Nogueira et al. 2018) and the pairwise tests are additions; the ranking "
        "similarity is the share of common top-20 features, our choice of similarity.",
        "Run time is CPU time of single-threaded fits, because the machine is shared.",
    ],
    "markers": [
        "Simulations: `make_multi_donor_counts` (negative binomial, donor effects, planted "
        "up-regulated markers; the generator of issue #30), five settings instead of the "
        "paper's >170 simulated sets; real data: scanpy's bundled `pbmc68k_reduced` only.",
        "Expert markers: the Seurat / scanpy PBMC 3k tutorial markers mapped to "
        "`bulk_labels` (eight of the ten types have one among the 765 genes).",
        "Held-out cells: whole donors in the simulations; the classifiers (5-NN, linear SVM) "
        "see the union of each type's top 5 genes.",
        "sparsefs methods give per-type lists through `sparsefs.tl.select` (a per-class "
        "ranking where the method has one, the per-type view of one selection otherwise).",
        "Memory: `tracemalloc` peaks (numpy and Python allocations; BLAS and numba "
        "workspaces are not seen).",
    ],
    "clustering": [
        "Clustering: k-means with as many clusters as annotated groups (the spec's choice), "
        "not the graph-based clustering of single-cell pipelines.",
        "Data: the ASU image sets (ORL once: orlraws10P holds the same photographs), the "
        "microarray cohorts of benchmark (a) and `pbmc68k_reduced`.",
        "The score averages ARI (and NMI) over the k grid: no k is chosen with the labels.",
    ],
}
"""Where our version departs from the paper it follows (shown on the page)."""


def _choices() -> list[str]:
    out = ["## Choices made here", "",
           "The protocols are written from the papers' descriptions (specs/standing.md); "
           "where a detail is not stated, or could not be followed here, the choice is ours:",
           ""]
    for bench in ("microarray", "markers", "clustering"):
        out += [f"- ({LETTER[bench]}) " + " ".join(CHOICES[bench])]
    return [*out, ""]


def render_page(analyses: Mapping[str, Analysis | None],
                figures: Mapping[str, Mapping[str, tuple[str, str]]] | None = None, *,
                command: str = "sparsefs standing all --from-results --out docs",
                extra_sections: Sequence[str] = (),
                results: str = "docs/standing/results/") -> str:
    """The markdown of ``docs/standing.md``.

    Parameters
    ----------
    analyses : mapping
        Benchmark name -> :class:`Analysis` (or ``None`` when nothing is stored).
    figures : mapping, optional
        Benchmark name -> figure key -> (caption, path relative to the page).
    command : str
        The command that regenerates the page (printed on it).
    extra_sections : sequence of str
        Markdown appended at the end (e.g. the defaults study).
    results : str
        Where the stored results are (printed on the page).

    Returns
    -------
    str
    """
    figures = figures or {}
    out = ["# Where each method stands: the field's own benchmarks", "",
           "<!-- generated by `sparsefs standing`; edit the configs (configs/standing/) or "
           "the code, not this file -->", "",
           "Three benchmarks written from the descriptions of the field's own comparisons "
           "(issue #29, specs/standing.md), with the peers in the same process:", ""]
    for bench in ("microarray", "markers", "clustering"):
        out.append(f"- ({LETTER[bench]}) {bench}: after {PAPERS[bench]}.")
    out += ["", "Every number and verdict below is computed from the stored results "
            f"(`{results}`, one compressed file per data set, one record per "
            "method) by", "", "```", command, "```", "",
            "`sparsefs standing a|b|c|all --out docs` computes what is not stored yet (a "
            "rerun with nothing new computes nothing); `--quick` runs the reduced smoke "
            "version.", "", "## Verdicts", ""]
    out += summary_lines(analyses)
    out += ["", "Where a sparse method still helps (computed):", "", *_helps(analyses), ""]
    out += _compact_table(analyses)
    out += _method_verdicts(analyses)
    sections = {"microarray": _microarray_section, "markers": _markers_section,
                "clustering": _clustering_section}
    for bench in ("microarray", "markers", "clustering"):
        a = analyses.get(bench)
        title = f"## ({LETTER[bench]}) "
        if a is None:
            out += [title + bench, "", "Not run yet: no stored results.", ""]
            continue
        out += [title + a.spec.title, "", a.spec.description, ""]
        out += sections[bench](a, figures.get(bench, {}))
    out += _choices()
    out += _run_info(analyses)
    out += [s.rstrip() + "\n" for s in extra_sections]
    return "\n".join(out).rstrip() + "\n"
