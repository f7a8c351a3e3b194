"""From stored cells to the numbers of the standing page (no computation of any method).

:func:`analyse` reads a benchmark's :class:`ResultStore` and returns an :class:`Analysis`: the
status of every cell, one scores table (data sets x methods) per headline metric, the rank
tests, the simple winner, the pairwise tests against it, a verdict per sparsefs method, and the
benchmark's own tables (accuracy against k, run times, ranking similarity, stability, marker
recall, ...). The page (``_page.py``) and the figures (``sparsefs.plotting``) only read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sparsefs.harness.standing._spec import StandingSpec
from sparsefs.harness.standing._stats import (
    PairwiseResult,
    cluster_order,
    pairwise_wilcoxon_holm,
    rank_tests,
    ranking_similarity,
    simple_winner,
    stability_by_dataset,
    summarise_stability,
    verdict,
)
from sparsefs.harness.standing._store import ResultStore
from sparsefs.metrics._summary import RankTestResult

__all__ = ["Analysis", "Headline", "analyse"]

STATUS_WORDS = {"ok": "ok", "budget": "not run in budget", "error": "failed",
                "missing": "not installed", "absent": "not run yet"}


@dataclass
class Headline:
    """One headline metric of a benchmark with its statistics.

    Attributes
    ----------
    key, title : str
        A short key (figure names) and the words used on the page.
    scores : DataFrame
        Data sets x methods (NaN where a cell did not run), baselines included.
    ranked : list of str
        The methods in the rank tests: not baselines, a score on every data set.
    excluded : dict
        Method -> why it is not in the rank tests.
    left_out : dict
        Data set -> why it is not in the rank tests (some of its cells not run yet): the
        tests compare methods over the same data sets, so a data set enters them only when
        every method has been run on it.
    tests : RankTestResult or None
        Friedman / Iman-Davenport / Nemenyi over ``ranked`` (None with < 2 data sets or
        methods).
    winner : str or None
        The simple winner (best average rank among the spec's simple methods).
    pairwise : PairwiseResult or None
        Every non-baseline method against the winner (Wilcoxon, Holm).
    verdicts : dict
        Sparsefs method -> sentence.
    """

    key: str
    title: str
    scores: pd.DataFrame
    ranked: list[str] = field(default_factory=list)
    excluded: dict[str, str] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)
    tests: RankTestResult | None = None
    winner: str | None = None
    pairwise: PairwiseResult | None = None
    verdicts: dict[str, str] = field(default_factory=dict)


@dataclass
class Analysis:
    """Everything the page says about one benchmark.

    Attributes
    ----------
    spec : StandingSpec
    cells : DataFrame
        One row per (data set, method) of the spec: ``dataset, method, kind, status,
        message, wall_s, current`` (whether the stored record matches the spec's hash).
    datasets : DataFrame
        ``dataset, n, p, n_classes, half, note`` (shapes from the stored cells).
    headlines : list of Headline
    tables : dict
        Benchmark-specific tables (see the ``_microarray_tables`` etc.).
    meta : dict
        Dates, versions, git revisions, the load during the run, the total cell time.
    """

    spec: StandingSpec
    cells: pd.DataFrame
    datasets: pd.DataFrame
    headlines: list[Headline]
    tables: dict[str, Any]
    meta: dict[str, Any]

    @property
    def n_ok(self) -> int:
        """Cells with a result."""
        return int((self.cells["status"] == "ok").sum())

    def results(self) -> dict[tuple[str, str], dict[str, Any]]:
        """``(data set, method) -> result`` of the ok cells."""
        return self.tables["_results"]


def _cells(spec: StandingSpec, store: ResultStore):
    kinds = {m.label: m.kind for m in spec.methods}
    rows, results, metas = [], {}, []
    for d in spec.datasets:
        recs = store.records(d.label)
        for m in spec.methods:
            rec = recs.get(m.label)
            if rec is None:
                rows.append((d.label, m.label, kinds[m.label], "absent", "", np.nan, False))
                continue
            current = rec.get("hash") == spec.cell_hash(d, m)
            meta = rec.get("meta", {})
            rows.append((d.label, m.label, kinds[m.label], rec["status"], rec.get("message", ""),
                         float(meta.get("wall_s", np.nan)), current))
            metas.append(meta)
            if rec["status"] == "ok" and rec.get("result") is not None:
                results[(d.label, m.label)] = rec["result"]
    cells = pd.DataFrame(rows, columns=["dataset", "method", "kind", "status", "message",
                                        "wall_s", "current"])
    return cells, results, metas


def _meta(metas: list[dict[str, Any]], cells: pd.DataFrame) -> dict[str, Any]:
    if not metas:
        return {}
    started = sorted(str(m.get("started", "")) for m in metas if m.get("started"))
    finished = sorted(str(m.get("finished", "")) for m in metas if m.get("finished"))
    revs = sorted({(m.get("git") or {}).get("revision", "")[:12] for m in metas} - {""})
    dirty = any((m.get("git") or {}).get("dirty") for m in metas)
    loads = [m.get("load", {}).get("loadavg_before") for m in metas]
    loads = [x[0] for x in loads if x]
    busy = [m.get("load", {}).get("busy_share") for m in metas]
    busy = [b for b in busy if b is not None]
    versions = next((m.get("versions") for m in metas if m.get("versions")), {})
    return {"first_started": started[0] if started else "",
            "last_finished": finished[-1] if finished else "",
            "revisions": revs, "dirty": dirty,
            "loadavg_1min": (float(np.min(loads)), float(np.median(loads)),
                             float(np.max(loads))) if loads else None,
            "busy_share": float(np.median(busy)) if busy else None,
            "cell_seconds": float(np.nansum(cells["wall_s"].to_numpy(float))),
            "cell_cpu_seconds": float(np.nansum([m.get("cpu_s", np.nan) for m in metas])),
            "versions": versions}


def _headline(spec: StandingSpec, key: str, title: str, scores: pd.DataFrame, *,
              greater_is_better: bool = True, metric_words: str | None = None,
              incomplete: dict[str, str] | None = None) -> Headline:
    kinds = {m.label: m.kind for m in spec.methods}
    h = Headline(key=key, title=title, scores=scores)
    # the tests need every method run on the same data sets: a data set with cells not run
    # yet is shown in the tables but left out of the tests (it would exclude every method
    # not run on it yet)
    h.left_out = {d: why for d, why in (incomplete or {}).items() if d in scores.index
                  and scores.loc[d].notna().any()}
    full = scores
    scores = scores.loc[[d for d in scores.index if d not in (incomplete or {})]]
    candidates = [m for m in scores.columns if kinds.get(m) != "baseline"]
    for m in candidates:
        missing = scores.index[scores[m].isna()].tolist()
        if missing:
            h.excluded[m] = "no score on " + ", ".join(map(str, missing))
        else:
            h.ranked.append(m)
    if len(h.ranked) >= 2 and scores.shape[0] >= 2:
        h.tests = rank_tests(scores[h.ranked], greater_is_better=greater_is_better)
        try:
            h.winner = simple_winner(scores[h.ranked], spec.simple,
                                     greater_is_better=greater_is_better)
        except ValueError:
            h.winner = None
    if h.winner is not None:
        h.pairwise = pairwise_wilcoxon_holm(scores, h.winner, methods=candidates,
                                            greater_is_better=greater_is_better)
        ranks = h.tests.average_ranks if h.tests is not None else None
        for m in candidates:
            if kinds.get(m) == "sparsefs":
                h.verdicts[m] = verdict(m, h.pairwise, scores if greater_is_better else -scores,
                                        metric=metric_words or title, ranks=ranks)
    h.scores = full
    return h


def _score_frame(spec: StandingSpec, values: dict[tuple[str, str], float]) -> pd.DataFrame:
    mat = pd.DataFrame(np.nan, index=[d.label for d in spec.datasets],
                       columns=[m.label for m in spec.methods])
    for (d, m), v in values.items():
        mat.loc[d, m] = v
    return mat


# --------------------------------------------------------------------------------------------
# (a) microarray
# --------------------------------------------------------------------------------------------


def _microarray(spec: StandingSpec, results, tables: dict[str, Any]) -> list[Headline]:
    proto = spec.protocol
    classifiers = list(proto.get("classifiers", ["svm", "knn"]))
    words = {"svm": "linear SVM", "knn": "5-NN", "nb": "naive Bayes"}
    heads = []
    for c in classifiers:
        acc = {key: float(np.mean([f[c]["acc"] for f in r["folds"]]))
               for key, r in results.items()}
        heads.append(_headline(spec, c, f"nested-CV accuracy, {words.get(c, c)}",
                               _score_frame(spec, acc),
                               metric_words=f"accuracy ({words.get(c, c)})",
                               incomplete=tables.get("_incomplete")))
        bacc = {key: float(np.mean([f[c]["bacc"] for f in r["folds"]]))
                for key, r in results.items()}
        tables[f"bacc_{c}"] = _score_frame(spec, bacc)
        kstar = {key: float(np.median([f[c]["k_star"] for f in r["folds"]]))
                 for key, r in results.items()}
        tables[f"k_star_{c}"] = _score_frame(spec, kstar)
        # accuracy against k: mean over folds per data set, then over the data sets that have
        # the whole grid (sets with fewer features than max k have a shorter grid)
        grid = list(spec.k_grid())
        curves = {}
        for m in spec.methods:
            per = []
            for d in spec.datasets:
                r = results.get((d.label, m.label))
                if r is None or "outer_acc" not in r["folds"][0][c]:
                    continue
                if r["grid"] != [k for k in grid if k <= r["p"]] or len(r["grid"]) != len(grid):
                    continue
                per.append(np.mean([f[c]["outer_acc"] for f in r["folds"]], axis=0))
            if per:
                curves[m.label] = np.mean(per, axis=0)
        tables[f"curves_{c}"] = pd.DataFrame(curves, index=grid)
    # the method's own predictions
    own = {key: float(np.mean([f["own"]["acc"] for f in r["folds"]]))
           for key, r in results.items() if "own" in r["folds"][0]}
    if own:
        tables["own"] = _score_frame(spec, own).dropna(axis=1, how="all")
        tables["own_k"] = _score_frame(spec, {
            key: float(np.median([f["own"]["k_star"] for f in r["folds"]]))
            for key, r in results.items() if "own" in r["folds"][0]}).dropna(axis=1, how="all")
    # run time: median CPU time of a fit over the outer folds (one thread)
    fit = {key: float(np.median([f.get("fit_cpu", f["fit_time"]) for f in r["folds"]]))
           for key, r in results.items() if r["folds"] and "order" in r["folds"][0]}
    tables["fit_time"] = _score_frame(spec, fit)
    # ranking similarity of the top-k lists, per (data set, outer fold)
    k_sim = int(proto.get("similarity_k", 20))
    tops: dict[tuple, dict[str, list[int]]] = {}
    for (d, m), r in results.items():
        if spec.method(m).kind == "baseline":
            continue
        for f in r["folds"]:
            if "order" in f and len(f["order"]) >= k_sim:
                tops.setdefault((d, f["fold"]), {})[m] = f["order"]
    _put_similarity(spec, tops, k_sim, tables)
    # stability of the top-k sets over the outer folds
    k_stab = int(proto.get("stability_k", 20))
    supports = {}
    for (d, m), r in results.items():
        orders = [f["order"] for f in r["folds"] if "order" in f]
        if len(orders) >= 2 and r["p"] > k_stab:
            Z = np.zeros((len(orders), r["p"]), dtype=bool)
            for i, o in enumerate(orders):
                Z[i, o[:k_stab]] = True
            supports[(d, m)] = Z
    stab = stability_by_dataset(supports)
    tables["stability"] = stab
    tables["stability_summary"] = summarise_stability(stab) if len(stab) else pd.DataFrame()
    tables["stability_k"] = k_stab
    return heads


def _put_similarity(spec: StandingSpec, tops: dict, k_sim: int, tables: dict[str, Any]) -> None:
    """The ranking similarity of the top-``k_sim`` lists ``tops`` (baselines aside)."""
    labels = [m.label for m in spec.methods if m.kind != "baseline"]
    sim = ranking_similarity(tops, k_sim, methods=labels)
    sim = sim.dropna(axis=0, how="all").dropna(axis=1, how="all")
    tables["similarity"] = sim
    tables["similarity_order"] = cluster_order(sim) if len(sim) else []
    tables["similarity_k"] = k_sim


# --------------------------------------------------------------------------------------------
# (c) clustering
# --------------------------------------------------------------------------------------------


def _clustering(spec: StandingSpec, results, tables: dict[str, Any]) -> list[Headline]:
    heads = []
    for metric, words in (("ari", "ARI"), ("nmi", "NMI")):
        mean_k = {key: float(np.mean([np.mean(v) for v in r[metric].values()]))
                  for key, r in results.items()}
        best_k = {key: float(np.max([np.mean(v) for v in r[metric].values()]))
                  for key, r in results.items()}
        heads.append(_headline(spec, metric, f"{words} of k-means, mean over the k grid",
                               _score_frame(spec, mean_k), metric_words=words,
                               incomplete=tables.get("_incomplete")))
        tables[f"best_{metric}"] = _score_frame(spec, best_k)
        grid = [str(k) for k in spec.k_grid()]
        curves = {}
        for m in spec.methods:
            per = []
            for d in spec.datasets:
                r = results.get((d.label, m.label))
                if r is None or set(r[metric]) != set(grid):  # stored with sorted keys
                    continue
                per.append([np.mean(r[metric][k]) for k in grid])
            if per:
                curves[m.label] = np.mean(per, axis=0)
        tables[f"curves_{metric}"] = pd.DataFrame(curves, index=[int(k) for k in grid])
    tables["fit_time"] = _score_frame(spec, {key: float(r.get("fit_cpu", r["fit_time"]))
                                        for key, r in results.items() if "order" in r})
    k_sim = min(int(spec.protocol.get("similarity_k", 50)), max(spec.k_grid()))
    tops = {}
    for (d, m), r in results.items():
        if "order" in r and spec.method(m).kind != "baseline" and len(r["order"]) >= k_sim:
            tops.setdefault((d, 0), {})[m] = r["order"]
    _put_similarity(spec, tops, k_sim, tables)
    return heads


# --------------------------------------------------------------------------------------------
# (b) markers
# --------------------------------------------------------------------------------------------


def _markers(spec: StandingSpec, results, tables: dict[str, Any]) -> list[Headline]:
    heads = []
    recall = {key: float(r["recall"]) for key, r in results.items()
              if r.get("recall") is not None}
    if recall:
        heads.append(_headline(spec, "recall", "recall of the planted markers (top m per type)",
                               _score_frame(spec, recall).dropna(axis=0, how="all"),
                               metric_words="marker recall",
                               incomplete=tables.get("_incomplete")))
    panel = int(spec.protocol.get("panel_per_group", 5))
    for c, words in (("knn", "5-NN"), ("svm", "linear SVM")):
        acc = {key: float(r["accuracy"][c]) for key, r in results.items()
               if c in r.get("accuracy", {})}
        if acc:
            heads.append(_headline(
                spec, f"acc_{c}",
                f"held-out accuracy, {words} on {panel} genes per type",
                _score_frame(spec, acc), metric_words=f"held-out accuracy ({words})",
                incomplete=tables.get("_incomplete")))
    by_type: dict[str, pd.DataFrame] = {}
    for d in spec.datasets:
        rows = {}
        for m in spec.methods:
            r = results.get((d.label, m.label))
            if r is None or not r["folds"] or "recall" not in r["folds"][0]:
                continue
            rows[m.label] = {g: float(np.mean([f["recall"][g] for f in r["folds"]]))
                             for g in r["folds"][0]["recall"]}
        if rows:
            by_type[d.label] = pd.DataFrame(rows).T
    tables["recall_by_type"] = by_type
    tables["recall_min"] = _score_frame(spec, {key: float(r["recall_min"])
                                          for key, r in results.items()
                                          if r.get("recall_min") is not None})
    tables["expert"] = _score_frame(spec, {key: float(r["expert_recall"])
                                      for key, r in results.items()
                                      if r.get("expert_recall") is not None})
    tables["fit_time"] = _score_frame(spec, {key: float(r.get("fit_cpu", r["fit_time"]))
                                        for key, r in results.items()})
    tables["memory_mb"] = _score_frame(spec, {key: float(r["peak_mb"]) for key, r in results.items()
                                         if r.get("peak_mb") is not None})
    return heads


def _incomplete(cells: pd.DataFrame) -> dict[str, str]:
    """Data set -> "n of m cells not run yet" for the data sets not every method has been run
    on (a cell never stored, or stored with another definition than the current config)."""
    out = {}
    for d, sub in cells.groupby("dataset", sort=False):
        pending = int(((sub["status"] == "absent") | ~sub["current"].astype(bool)).sum())
        if pending:
            out[str(d)] = f"{pending} of {len(sub)} cells not run yet"
    return out


def analyse(spec: StandingSpec, store: ResultStore) -> Analysis:
    """The numbers of one benchmark from its stored cells.

    Parameters
    ----------
    spec : StandingSpec
        Its data sets and methods define the tables (stored cells of other methods are
        ignored; cells of the spec never computed are "not run yet").
    store : ResultStore

    Returns
    -------
    Analysis
    """
    cells, results, metas = _cells(spec, store)
    shapes = {}
    for (d, _m), r in results.items():
        shapes.setdefault(d, (r.get("n"), r.get("p"), r.get("n_classes", r.get("n_clusters"))))
    datasets = pd.DataFrame(
        [(d.label, *shapes.get(d.label, (None, None, None)), d.half, d.note)
         for d in spec.datasets],
        columns=["dataset", "n", "p", "n_classes", "half", "note"])
    tables: dict[str, Any] = {"_results": results, "_incomplete": _incomplete(cells)}
    func = {"microarray": _microarray, "clustering": _clustering, "markers": _markers}
    heads = func[spec.benchmark](spec, results, tables) if results else []
    meta = _meta(metas, cells)
    meta["runs"] = store.runs()
    return Analysis(spec=spec, cells=cells, datasets=datasets, headlines=heads, tables=tables,
                    meta=meta)
