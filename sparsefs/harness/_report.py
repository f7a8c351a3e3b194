"""Markdown reports: the tables of a run, and the paper's numbers beside ours."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sparsefs.harness._claims import claims_markdown, evaluate_claims
from sparsefs.harness._results import Results
from sparsefs.harness._spec import ReproductionSpec
from sparsefs.harness._stability import stability_markdown
from sparsefs.harness._tables import md_table as _md_table
from sparsefs.harness._tables import paper_comparison
from sparsefs.metrics._summary import (
    GREATER_IS_BETTER,
    TIE_DECIMALS,
    best_over_k,
    format_mean_sd,
    friedman_nemenyi,
    mean_over_k,
    score_matrix,
    summarize,
)

__all__ = ["headline", "markdown_report", "paper_comparison"]

_ESTIMATOR_WORDS = {
    "svm": "linear SVM (C=1)",
    "nb": "Gaussian naive Bayes",
    "knn": "5-nearest neighbours",
    "tree": "decision tree",
    "self": "the method's own predictions / labels",
    "kmeans": "k-means (k = number of classes, k-means++ init, one start per run)",
    "ridge": "ridge regression on standardised features, penalty by leave-one-out CV on the "
             "training rows",
    "cox": "ridge-penalised Cox model (Breslow, penalty 1 on standardised features), scored "
           "by its risk score",
}
_MODE_WORDS = {
    "rank": "rank: fitted once per fold, top-k of its ranking for every k",
    "refit": "refit: fitted once per k with n_features_to_select=k",
    "own": "own: one fit; the method's own rule sets the number of features (k = 0 in tables)",
    "all": "all: every feature (no selection)",
}


def headline(results: Results) -> tuple[str, str, int | None]:
    """The report's headline (metric, estimator, k_max) from the spec's ``report`` table
    (:meth:`Results.headline`)."""
    return results.headline()


def _k_text(k: Any) -> str:
    return "own" if int(k) == 0 else str(int(k))


def _cell(value: float, sd: float, k: Any | None, digits: int = 3) -> str:
    text = format_mean_sd(value, sd, None, digits=digits)
    if k is not None and text != "n/a":
        text += f" ({_k_text(k)})"
    return text


#: A table of more method columns is split into several tables of at most this many (the row
#: keys repeated), so that a report over every method stays readable.
MAX_METHOD_COLUMNS = 8


def _wide(best: pd.DataFrame, methods: list[str], row_keys: list[str], up: bool,
          with_k: bool = True, digits: int = 3, bold: bool = True) -> str:
    """Rows = row_keys, columns = methods; the best cell of each row (over all methods) in
    bold; more than :data:`MAX_METHOD_COLUMNS` methods are split into several tables."""
    rows = []
    for key, grp in best.groupby(row_keys, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        by_method = {r.method: r for r in grp.itertuples()}
        vals = [by_method[m].value if m in by_method else np.nan for m in methods]
        finite = [v for v in vals if np.isfinite(v)]
        best_val = (max(finite) if up else min(finite)) if finite else None
        cells = []
        for m, v in zip(methods, vals):
            if m not in by_method:
                cells.append("—")
                continue
            r = by_method[m]
            text = _cell(r.value, r.sd, r.k if with_k else None, digits)
            if bold and best_val is not None and len(finite) > 1 and np.isclose(v, best_val):
                text = f"**{text}**"
            cells.append(text)
        rows.append([*key, *cells])
    if len(methods) <= MAX_METHOD_COLUMNS:
        return _md_table([*row_keys, *methods], rows)
    n_keys = len(row_keys)
    parts = []
    for start in range(0, len(methods), MAX_METHOD_COLUMNS):
        stop = min(start + MAX_METHOD_COLUMNS, len(methods))
        parts.append(f"Methods {start + 1}–{stop} of {len(methods)}:\n\n" + _md_table(
            [*row_keys, *methods[start:stop]],
            [[*r[:n_keys], *r[n_keys + start:n_keys + stop]] for r in rows]))
    return "\n\n".join(parts)


def _method_mode(m: dict[str, Any], protocol: str) -> str:
    what = m.get("stem") or m.get("estimator")
    return m.get("mode") or ("all" if not what else "own" if protocol == "clustering" else "rank")


def _uses_k_grid(spec: dict[str, Any], protocol: str) -> bool:
    """Whether any method is evaluated over the k grid (``rank`` / ``refit`` modes)."""
    return any(_method_mode(m, protocol) in ("rank", "refit") for m in spec.get("methods", []))


def _spread_words(spec: dict[str, Any], protocol: str) -> str:
    """What the ± of a cell is taken over, in the protocol's terms."""
    if protocol in ("supervised", "regression", "survival"):
        return "splits" if spec.get("cv", {}).get("scheme") == "split" else "folds"
    reps = "repetitions" if spec.get("cv", {}).get("n_repeats", 1) > 1 else ""
    if protocol == "unsupervised":
        runs = f"{spec.get('n_runs')} k-means runs"
        return f"{reps} and {runs}" if reps else runs
    return reps or "repetitions"


def _best_caption(spec: dict[str, Any], protocol: str) -> str:
    spread = _spread_words(spec, protocol)
    if not _uses_k_grid(spec, protocol):
        return (f"Mean ± sd over {spread}, at each method's own number of features (in "
                "parentheses; 0 = the method's own rule). Bold: the best method of the row.")
    return (f"Mean ± sd over {spread} at the k (in parentheses) where the mean is best; the "
            f"fold means are rounded to {TIE_DECIMALS} decimals and ties go to the smallest k "
            "(`sparsefs.harness.best_over_k`). Bold: the best method of the row.")


def _experiment_section(results: Results, figures: Sequence[tuple[str, str]]) -> str:
    meta = results.meta
    spec = meta.get("spec", {})
    table = results.table
    name = spec.get("name", "experiment")
    protocol = spec.get("protocol", "supervised")
    metric, estimator, k_max = headline(results)
    out = [f"## Experiment `{name}` ({protocol} protocol)", ""]
    if spec.get("description"):
        out += [spec["description"], ""]
    cv = spec.get("cv", {})
    grid = spec.get("k", [])
    grid_text = (f"{grid[0]}..{grid[-1]} ({len(grid)} values)"
                 if grid and grid == list(range(grid[0], grid[-1] + 1)) and len(grid) > 3
                 else ", ".join(map(str, grid)))
    prep = spec.get("preprocessing") or []
    scope = spec.get("preprocessing_scope", "fold")
    prep_text = ", ".join(prep) or "none"
    if prep and cv.get("scheme") == "none":
        prep_text += " — fitted on each repetition's data (there is no split)"
    elif prep:
        prep_text += (" — fitted on each training fold only" if scope == "fold" else
                      " — **applied to all rows before splitting (LEAKY: the paper's protocol, "
                      "kept only to reproduce it)**")
    est_text = "; ".join(
        f"`{e['name']}` ({_ESTIMATOR_WORDS.get(e['name'], e.get('estimator', ''))})"
        for e in spec.get("estimators", [])
    )
    load = meta.get("load", {})
    out += [
        f"- Resampling: {_cv_words(cv, protocol)}; selection is always fitted on the training "
        "rows of each fold." if cv.get("scheme") != "none" else
        f"- Resampling: {_cv_words(cv, protocol)}.",
        f"- Numbers of selected features k: {grid_text}." if _uses_k_grid(spec, protocol) else
        "- Numbers of selected features: each method's own rule (no k grid).",
        f"- Downstream: {est_text}.",
        f"- Metrics: {', '.join(spec.get('metrics', []))}; mean ± sd over "
        f"{_spread_words(spec, protocol)}.",
        f"- Preprocessing: {prep_text}.",
        f"- Root seed {spec.get('seed')}; spec hash `{meta.get('spec_hash')}`; n_jobs "
        f"{meta.get('n_jobs')}; wall time {load.get('wall_s', float('nan')):.1f} s.",
        "",
    ]
    if meta.get("datasets"):
        # the target column: classes, events (survival) or the target's range (regression)
        head, key = {"survival": ("events", "n_events"),
                     "regression": ("target range", "target_range")}.get(
            protocol, ("classes", "n_classes"))
        rows = [[d["dataset"], d["n_samples"], d["n_features"], d.get(key, "—"),
                 "unknown" if d.get("n_relevant") is None else d["n_relevant"]]
                for d in meta["datasets"]]
        out += ["### Data sets", "",
                _md_table(["data set", "samples", "features", head, "relevant features"],
                          rows), ""]
    if meta.get("skipped"):
        out += ["Skipped (not available here): " + "; ".join(
            f"{s['dataset']} ({s['reason']})" for s in meta["skipped"]) + ".", ""]
    if table.empty:
        return "\n".join([*out, "No results (every data set was skipped).", ""])
    method_rows = []
    for m in spec.get("methods", []):
        label = m.get("label") or m.get("stem") or (
            str(m.get("estimator", "")).rsplit(":", 1)[-1] or "all features")
        what = m.get("stem") or m.get("estimator") or "—"
        mode = _method_mode(m, protocol)
        params = ", ".join(f"{k}={v!r}" for k, v in (m.get("params") or {}).items()) or "—"
        method_rows.append([label, f"`{what}`", _MODE_WORDS[mode], params])
    out += ["### Methods", "", _md_table(["method", "estimator", "mode", "parameters"],
                                         method_rows), ""]

    methods = list(dict.fromkeys(table["method"]))
    up = GREATER_IS_BETTER.get(metric, True)
    kmax_text = f", k ≤ {k_max}" if k_max else ""
    arrow = "higher is better" if up else "lower is better"
    best_all = best_over_k(results, metric, k_max=k_max)
    best_all = best_all[best_all["estimator"] != "selection"]
    out += [f"### Best {metric} over k{kmax_text} ({arrow})", "",
            _best_caption(spec, protocol), "",
            _wide(best_all, methods, ["dataset", "estimator"], up), ""]
    if protocol != "clustering" and len(spec.get("k", [])) > 1:
        mean_k = mean_over_k(results, metric, k_max=k_max)
        mean_k = mean_k[mean_k["estimator"] != "selection"].rename(columns={"sd_over_k": "sd"})
        mean_k["k"] = None
        out += [f"### Mean {metric} over k{kmax_text}", "",
                "The fold-mean averaged over the k grid (± its sd over k).", "",
                _wide(mean_k, methods, ["dataset", "estimator"], up, with_k=False), ""]
    others = [m for m in spec.get("metrics", []) if m != metric]
    if others:
        frames = []
        for m in others:
            b = best_over_k(results, m, estimator, k_max=k_max)
            frames.append(b)
        if frames:
            other = pd.concat(frames, ignore_index=True)
            order = {d: i for i, d in enumerate(dict.fromkeys(table["dataset"]))}
            other = other.sort_values("dataset", key=lambda c: c.map(order), kind="stable")
            out += [f"### Other metrics, best over k{kmax_text} (`{estimator}`)", "",
                    _wide(other, methods, ["dataset", "metric"], True), ""]
    out += _selection_section(results, metric, estimator, k_max, methods)
    out += _rank_section(results, metric, estimator, k_max, up)
    out += stability_markdown(results)
    if figures:
        out += ["### Figures", ""]
        for caption, path in figures:
            out += [f"![{caption}]({path})", "", f"*{caption}*", ""]
    return "\n".join(out)


def _cv_words(cv: Mapping[str, Any], protocol: str) -> str:
    scheme = cv.get("scheme")
    strata = {"regression": "", "survival": " (stratified by the event indicator)"}
    kind = "" if protocol == "regression" else "stratified "
    if scheme == "kfold":
        rep = f", repeated {cv['n_repeats']} times" if cv.get("n_repeats", 1) > 1 else ""
        return (f"{kind}{cv.get('n_splits')}-fold cross-validation"
                f"{strata.get(protocol, '')}{rep}")
    if scheme == "split":
        return (f"{cv.get('n_repeats')} random {kind}splits{strata.get(protocol, '')} with "
                f"{float(cv.get('train_size', 0)):.3g} of the samples for training")
    rep = cv.get("n_repeats", 1)
    what = ("the methods and k-means see every sample" if protocol == "unsupervised" else
            "every clusterer sees every sample")
    return f"no split ({what}); {rep} repetition(s) with different seeds" + (
        ", generated data drawn afresh each time" if protocol == "clustering" else "")


def _selection_section(results, metric, estimator, k_max, methods) -> list[str]:
    table = results.table
    sel = table[table["estimator"] == "selection"]
    if sel.empty:
        return []
    summ = summarize(sel)
    fit = summ[summ["metric"] == "fit_time"]
    # fit time: average over folds, then over k (identical across k in rank mode)
    fit = fit.groupby(["dataset", "method"], sort=False).agg(value=("mean", "mean"),
                                                             sd=("sd", "mean")).reset_index()
    fit["k"] = None
    out = ["### Selection", "", "Selector fit time in seconds (mean ± sd over folds; per fit; "
           "0 for the all-features baseline).", "",
           _wide(fit, methods, ["dataset"], False, with_k=False, digits=4, bold=False), ""]
    if "relevant_kept" in set(sel["metric"]):
        try:
            best = best_over_k(results, metric, estimator, k_max=k_max)
        except ValueError:
            return out
        rows = []
        order = {d: i for i, d in enumerate(dict.fromkeys(table["dataset"]))}
        best = best.sort_values("dataset", key=lambda c: c.map(order), kind="stable")
        for r in best.itertuples():
            cell = summ[(summ["dataset"] == r.dataset) & (summ["method"] == r.method)
                        & (summ["k"] == r.k)].set_index("metric")
            if "relevant_kept" not in cell.index:
                continue
            rows.append([r.dataset, r.method, _k_text(r.k),
                         format_mean_sd(cell.loc["n_selected", "mean"], None, digits=1),
                         format_mean_sd(cell.loc["relevant_kept", "mean"],
                                        cell.loc["relevant_kept", "sd"], digits=1),
                         format_mean_sd(cell.loc["noise_kept", "mean"],
                                        cell.loc["noise_kept", "sd"], digits=1)])
        if rows:
            out += [f"Features kept at the best k of {metric} (`{estimator}`), against the "
                    "known true support (mean ± sd over folds):", "",
                    _md_table(["data set", "method", "k", "selected", "relevant kept",
                               "noise kept"], rows), ""]
    return out


def _rank_section(results, metric, estimator, k_max, up) -> list[str]:
    try:
        best = best_over_k(results, metric, estimator, k_max=k_max)
    except ValueError:
        return []
    mat = score_matrix(best)
    mat = mat.dropna(axis=0, how="any")
    if mat.shape[0] < 2 or mat.shape[1] < 2:
        return ["### Ranks", "",
                "The Friedman test needs at least 2 data sets and 2 methods; not computed.", ""]
    res = friedman_nemenyi(mat, greater_is_better=up)
    ranks = res.average_ranks.sort_values()
    rows = [[m, f"{r:.3f}"] for m, r in ranks.items()]
    sig = res.pairwise[res.pairwise["significant"]]
    sig_text = ("; ".join(f"{a} vs {b} (Δ = {d:.2f})" for a, b, d in
                          sig[["method_a", "method_b", "rank_difference"]].itertuples(index=False))
                or "none")
    return ["### Ranks (Friedman test, Nemenyi post-hoc)", "",
            f"Best {metric} over k (`{estimator}`) on {res.n_datasets} data sets; rank 1 = best.",
            "", _md_table(["method", "average rank"], rows), "",
            f"Friedman χ² = {res.statistic:.3f} (p = {res.pvalue:.3g}); Iman–Davenport F = "
            + (f"{res.iman_davenport:.3f} (p = {res.iman_davenport_pvalue:.3g})"
               if np.isfinite(res.iman_davenport) else "undefined (every data set ranks the "
               "methods alike, so its denominator is 0)")
            + "; Nemenyi critical "
            f"difference at α = {res.alpha}: {res.critical_difference:.3f}. Pairs that differ "
            f"significantly: {sig_text}.", ""]


def _paper_section(repro: ReproductionSpec, by_name: Mapping[str, Results]) -> list[str]:
    out = ["## The paper's numbers beside ours", ""]
    if not repro.tables:
        return [*out, "The paper reports no table that this reproduction can be compared "
                "with: **every number in this report is ours** (sparsefs), except the figures "
                "quoted in the *paper* column of the Claims table.", ""]
    for t in repro.tables:
        exp = t.experiment or repro.experiments[0].name
        res = by_name.get(exp)
        out += [f"### {t.id}", "", f"Source: {t.source}", ""]
        if res is None or res.table.empty:
            out += ["Not run (no results for this experiment).", ""]
            continue
        try:
            comp = paper_comparison(t, res)
        except ValueError as exc:  # the metric / estimator was not recorded by this run
            out += [f"Not run ({exc})", ""]
            continue
        digits = 2 if t.scale != 1 else 3
        rows = []
        for r in comp.itertuples():
            paper = format_mean_sd(r.paper, r.paper_sd, None, digits=digits)
            if r.paper_k is not None and np.isfinite(r.paper_k):
                paper += f" ({int(r.paper_k)})"
            ours = "not run" if not np.isfinite(r.ours) else _cell(
                r.ours, r.ours_sd, None if not np.isfinite(r.ours_k) else r.ours_k, digits)
            diff = "" if not np.isfinite(r.difference) else f"{r.difference:+.{digits}f}"
            rows.append([r.dataset, r.method, paper, ours, diff, r.note])
        what = (f"{t.metric}" + (f", `{t.estimator}`" if t.estimator else "")
                + {"best_over_k": " best over k", "mean_over_k": " mean over k",
                   "at_k": f" at k = {t.k}"}[t.statistic]
                + (f" ≤ {t.k_max}" if t.k_max and t.statistic != "at_k" else "")
                + (f", ×{t.scale:g}" if t.scale != 1 else ""))
        out += [_md_table(["data set", "method", f"paper ({t.id})", f"ours ({what})",
                           "ours − paper", "note"], rows), ""]
    return out


def _n_evaluations(spec: Mapping[str, Any]) -> str:
    cv = spec.get("cv", {})
    scheme = cv.get("scheme")
    if scheme == "kfold":
        n = cv.get("n_splits", 0) * cv.get("n_repeats", 1)
        return f"{n} test folds per data set"
    if scheme == "split":
        return f"{cv.get('n_repeats')} test sets per data set"
    return f"{cv.get('n_repeats', 1)} runs per data set"


def _protocol_section(repro: ReproductionSpec, items: Sequence[Results]) -> list[str]:
    """Resampling counts and data draws of every stored run, and the declared differences
    from the paper's protocol (``[reproduction] protocol`` of the config)."""
    out = ["## Protocol, and where it differs from the paper's", ""]
    for r in items:
        spec = r.meta.get("spec", {})
        protocol = spec.get("protocol", "supervised")
        gens = [d for d in spec.get("datasets", []) if d.get("generator")]
        draws = ""
        if gens:
            def redrawn(d: Mapping[str, Any], protocol: str = protocol) -> bool:
                return protocol == "clustering" if d.get("redraw") is None else d["redraw"]

            fresh = [d.get("label") or d["generator"] for d in gens if redrawn(d)]
            fixed = [d.get("label") or d["generator"] for d in gens if not redrawn(d)]
            draws = "; simulated data " + "; ".join(
                part for part in (
                    f"drawn afresh (seeded) for every split/repetition ({', '.join(fresh)})"
                    if fresh else "",
                    f"drawn once and kept fixed ({', '.join(fixed)})" if fixed else "")
                if part)
        if protocol == "clustering":
            draws = ""  # the resampling words already say the data are drawn afresh
        out.append(f"- `{r.meta.get('experiment')}`: {_cv_words(spec.get('cv', {}), protocol)} "
                   f"({_n_evaluations(spec)}){draws}.")
    out += [f"- {line}" for line in repro.protocol]
    return [*out, ""]


def markdown_report(
    results: Results | Sequence[Results],
    *,
    title: str,
    command: str | None = None,
    date: str | None = None,
    figures: Mapping[str, Sequence[tuple[str, str]]] | None = None,
    reproduction: ReproductionSpec | None = None,
    quick: bool = False,
    extra_sections: Sequence[str] = (),
    notes: str | None = None,
) -> str:
    """A markdown report of one or more experiments' results.

    Parameters
    ----------
    results : Results or sequence of Results
    title : str
    command : str, optional
        The command that produced the report (printed in the header).
    date : str, optional
        Defaults to the first result's finish time.
    figures : mapping, optional
        Experiment name -> ``[(caption, relative path), ...]``.
    reproduction : ReproductionSpec, optional
        Adds the reference and the "paper beside ours" section.
    quick : bool, default=False
        Flags the report as a reduced (``--quick``) run.
    extra_sections : sequence of str
        Markdown appended at the end (from reproduction hooks).
    notes : str, optional
        Hand-written markdown about the stored run (``OUT/<stem>/notes.md``), placed after the
        Claims and Protocol sections under a heading that labels it as ours.

    Returns
    -------
    str
    """
    items = [results] if isinstance(results, Results) else list(results)
    if not items:
        raise ValueError("no results to report.")
    meta0 = items[0].meta
    date = date or meta0.get("finished", "")
    git = meta0.get("git") or {}
    rev = git.get("revision", "unknown")[:12] + (" (with local changes)" if git.get("dirty")
                                                 else "")
    versions = meta0.get("versions", {})
    load = meta0.get("load", {})
    out = [f"# {title}", ""]
    if reproduction is not None and reproduction.reference:
        out += [f"Paper: {reproduction.reference}", ""]
    if reproduction is not None and reproduction.description:
        out += [reproduction.description, ""]
    if command:
        out += ["Generated by:", "", "```", command, "```", ""]
    lines = [f"- Date (UTC): {date}"]
    if quick:
        lines.append("- **Quick run**: a reduced spec (fewer data sets, k values, folds) for a "
                     "smoke test; the full run drops `--quick`.")
    lines.append(
        f"- sparsefs {versions.get('sparsefs', '?')} (git {rev}); numpy "
        f"{versions.get('numpy', '?')}, scipy {versions.get('scipy', '?')}, scikit-learn "
        f"{versions.get('scikit-learn', '?')}; Python {meta0.get('python', '?')}."
    )
    busy = load.get("busy_share")
    other = load.get("other_share")
    lines.append(
        f"- Machine: {load.get('cpu_count', '?')} CPUs; load average before/after "
        f"{load.get('loadavg_before')} / {load.get('loadavg_after')}"
        + (f"; CPUs busy {busy:.0%} of the run, {other:.0%} by other processes"
           if busy is not None and other is not None else "")
        + " (timings are only comparable within one run)."
    )
    if any(r.meta.get("leaky_preprocessing") for r in items):
        lines.append("- **Warning: an experiment preprocesses all rows before splitting "
                     "(leaky), as its paper did; see its section.**")
    lines.append("- Every number below is **ours** (computed by sparsefs) unless a column "
                 "says *paper*.")
    out += [*lines, ""]
    by_name = {r.meta.get("experiment", f"experiment{i}"): r for i, r in enumerate(items)}
    if reproduction is not None:
        out += [claims_markdown(evaluate_claims(reproduction, items, quick=quick))]
        out += _protocol_section(reproduction, items)
    if notes:
        out += ["## Notes on the stored run (hand-written analysis, ours)", "",
                notes.strip(), ""]
    if reproduction is not None:
        out += _paper_section(reproduction, by_name)
    figures = figures or {}
    for name, res in by_name.items():
        out += [_experiment_section(res, figures.get(name, ())), ""]
    out += list(extra_sections)
    return "\n".join(out).rstrip() + "\n"
