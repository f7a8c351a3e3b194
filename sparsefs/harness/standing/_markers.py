r"""Benchmark (b): marker genes per cell type, on simulated counts with planted markers and on
scanpy's ``pbmc68k_reduced``.

After Pullin & McCarthy, "A comparison of marker gene selection methods for single-cell RNA
sequencing data", Genome Biology 25:56 (2024), written from their description: recovery of
simulated markers, recovery of expert-annotated markers, the predictive performance of the
selected genes on held-out cells, and speed and memory.

One cell (data set x method), for each of ``n_splits`` folds:

* the training cells: simulations are split **by donor** (whole donors held out, so no cell of
  a test donor was seen); ``pbmc68k_reduced`` (no donors) by stratified K-fold;
* every method gives, per type, its genes best first, from the log1p expression of the
  training cells: scanpy's ``rank_genes_groups`` and COSG natively; sparsefs methods and
  scikit-learn's ``f_classif`` through ``sparsefs.tl.select`` (a per-class ranking where the
  method has one, else the per-type view of one selection of ``selection_per_group`` genes
  per type: docs/single_cell.md);
* **recall**: per type, the share of its planted up-regulated markers among its top m (m =
  the number planted), mean over types and the worst type; **expert recall**: the share of a
  type's tutorial markers (:data:`~sparsefs.harness.standing._data.PBMC_EXPERT_MARKERS`)
  among its top ``expert_top``;
* **held-out accuracy**: the union of every type's top ``panel_per_group`` genes, z-scored with
  the training cells' statistics; 5-NN and a linear SVM fitted on the training cells and
  scored on the held-out ones;
* **time and peak memory** of the fit (``tracemalloc``: numpy's and Python's allocations),
  after an untimed warm-up run on a few cells (imports and compilation are not counted).
"""

from __future__ import annotations

import contextlib
import time
import tracemalloc
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from sparsefs.harness.standing._budget import Budget
from sparsefs.harness.standing._spec import StandingData, StandingMethod, StandingSpec, cell_seed

__all__ = ["VERSION", "group_orders", "markers_cell"]

VERSION = 2
"""Bumped when the computation of a cell changes (part of every cell's hash)."""

_DIGITS = 5


def _splits(cells, n_splits: int, seed: int):
    from sklearn.model_selection import StratifiedKFold

    n = cells.y.shape[0]
    if cells.donors is not None:
        donors = np.unique(cells.donors)
        order = np.random.default_rng(seed).permutation(donors.shape[0])
        parts = np.array_split(donors[order], n_splits)
        return [(np.flatnonzero(~np.isin(cells.donors, part)),
                 np.flatnonzero(np.isin(cells.donors, part))) for part in parts]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return list(StratifiedKFold(n_splits, shuffle=True, random_state=seed)
                    .split(np.zeros(n), cells.y))


def _anndata(X, y: np.ndarray, groups: list[str]):
    import anndata
    import pandas as pd

    obs = pd.DataFrame({"group": pd.Categorical(y, categories=groups)})
    obs.index = [f"c{i}" for i in range(y.shape[0])]
    adata = anndata.AnnData(X=X, obs=obs)
    adata.var_names = [f"g{j}" for j in range(X.shape[1])]
    return adata


def group_orders(method: StandingMethod, X, y: np.ndarray, groups: list[str], *,
                 seed: int, n_select: int) -> list[np.ndarray]:
    """Per type (in the order of ``groups``), the method's genes best first.

    ``n_select`` genes per type for the sparsefs selection (per class for the class-specific
    methods, ``n_select * n_types`` for the others). Peers with their own per-group lists
    (``group_orders_``) give them directly; everything else goes through
    :func:`sparsefs.tl.select` (its ``rank_genes_groups`` layout).
    """
    from sparsefs.harness._protocols import build_method
    from sparsefs.tl import select

    G = len(groups)
    y_idx = np.searchsorted(np.asarray(groups), y)
    spec = method.method_spec
    est = build_method(spec, seed=seed, n_classes=G)
    if method.kind != "sparsefs" and "group_orders_" in _peer_attributes(est):
        if "n_features_to_select" in est.get_params():
            est.set_params(n_features_to_select=min(n_select * G, X.shape[1]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, y_idx)
        return [np.asarray(o, dtype=np.intp) for o in est.group_orders_]
    per_class = method.stem in ("class_specific", "class_specific_ensemble")
    n_features = min(n_select if per_class else n_select * G, X.shape[1])
    if sp.issparse(X) and not getattr(type(est), "_accept_sparse", False):
        X = X.toarray()
    adata = _anndata(X, y, groups)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        select(adata, est, groupby="group", n_features=n_features, random_state=seed,
               use_raw=False)
    names = adata.uns["sparsefs"]["names"]
    out = []
    for g in groups:
        col = np.asarray(names[g]).astype(str)
        out.append(np.fromiter((int(s[1:]) for s in col), dtype=np.intp, count=col.shape[0]))
    return out


def _peer_attributes(est) -> set[str]:
    """The per-group attribute a peer class documents (set by its fit)."""
    from sparsefs.harness.peers import COSGMarkers, ScanpyRankGenes

    return {"group_orders_"} if isinstance(est, ScanpyRankGenes | COSGMarkers) else set()


def _accuracy(X_tr, y_tr, X_te, y_te, genes: np.ndarray, n_classes: int) -> dict[str, float]:
    from sklearn.svm import SVC

    from sparsefs.harness.standing._microarray import knn_predictions

    A = X_tr[:, genes]
    B = X_te[:, genes]
    A = A.toarray() if sp.issparse(A) else np.asarray(A)
    B = B.toarray() if sp.issparse(B) else np.asarray(B)
    A, B = A.astype(np.float64), B.astype(np.float64)
    mean, sd = A.mean(axis=0), A.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    A, B = (A - mean) / sd, (B - mean) / sd
    knn = knn_predictions(A, y_tr, B, np.arange(A.shape[1]), [A.shape[1]], n_classes)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svm = SVC(kernel="linear", C=1.0).fit(A, y_tr).predict(B)
    return {"knn": float(np.mean(knn == y_te)), "svm": float(np.mean(svm == y_te))}


def _warm_up(method: StandingMethod, X, y: np.ndarray, groups: list[str], seed: int) -> None:
    """One untimed run on 15 cells of each type and 100 genes, so that the timed fits do not
    pay for imports and compilation (and their traced memory not for the imports')."""
    rows = np.concatenate([np.flatnonzero(y == g)[:15] for g in groups])
    sub = X[rows][:, : min(X.shape[1], 100)]
    with contextlib.suppress(Exception):  # a warm-up only: the timed fits report errors
        group_orders(method, sub, y[rows], groups, seed=seed, n_select=3)


def markers_cell(spec: StandingSpec, dataset: StandingData, method: StandingMethod, *,
                 budget: Budget | None = None) -> dict[str, Any]:
    """Compute one (data set, method) cell of the marker benchmark (see the module).

    Returns
    -------
    dict
        ``n, p, n_classes, groups``; ``recall`` / ``recall_min`` (simulations) and
        ``expert_recall`` (real data with tutorial markers), means over folds;
        ``accuracy`` {``knn``, ``svm``}; ``fit_time`` (median over folds, s); ``peak_mb``
        (largest traced peak, MB); ``folds`` with the per-fold, per-type numbers.
    """
    from sparsefs.harness.standing._data import load_cells

    proto = spec.protocol
    cells = load_cells(dataset.loader or "", dict(dataset.params))
    X = cells.X
    groups = sorted(np.unique(cells.y).tolist())
    y_idx = np.searchsorted(np.asarray(groups), cells.y)
    names = np.asarray(cells.feature_names).astype(str)
    n_splits = int(proto.get("n_splits", 2))
    panel = int(proto.get("panel_per_group", 5))
    n_select = int(proto.get("selection_per_group", 20))
    expert_top = int(proto.get("expert_top", 10))
    folds = []
    splits = _splits(cells, n_splits, cell_seed(spec.seed, dataset.label, "", 0))
    _warm_up(method, X, cells.y, groups, spec.seed)
    for f, (tr, te) in enumerate(splits):
        X_tr, X_te = X[tr], X[te]
        seed = cell_seed(spec.seed, dataset.label, method.label, f)
        from sparsefs.harness.standing._budget import cpu_seconds

        tracemalloc.start()
        t0, c0 = time.perf_counter(), cpu_seconds()
        try:
            orders = group_orders(method, X_tr, cells.y[tr], groups, seed=seed,
                                  n_select=n_select)
            fit_time, fit_cpu = time.perf_counter() - t0, cpu_seconds() - c0
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        rec: dict[str, Any] = {"fold": f, "fit_time": round(fit_time, 4),
                               "fit_cpu": round(fit_cpu, 4),
                               "peak_mb": round(peak / 2**20, 2)}
        if cells.markers is not None:
            per = {}
            for g, order in zip(groups, orders):
                planted = np.flatnonzero(cells.markers[g])
                if planted.size:
                    top = order[:planted.size]
                    per[g] = round(float(np.isin(top, planted).mean()), _DIGITS)
            rec["recall"] = per
        if cells.expert:
            per = {}
            for g, order in zip(groups, orders):
                genes = cells.expert.get(g)
                if genes:
                    top = set(names[order[:expert_top]])
                    per[g] = round(float(np.mean([x in top for x in genes])), _DIGITS)
            rec["expert"] = per
        genes = np.unique(np.concatenate([o[:panel] for o in orders]))
        rec["panel_size"] = int(genes.shape[0])
        rec["accuracy"] = {k: round(v, _DIGITS) for k, v in _accuracy(
            X_tr, y_idx[tr], X_te, y_idx[te], genes, len(groups)).items()}
        rec["top"] = {g: [int(j) for j in o[:max(n_select, expert_top)]]
                      for g, o in zip(groups, orders)}
        folds.append(rec)
        if budget is not None:
            budget.check(len(folds), len(splits))
    out: dict[str, Any] = {"n": int(X.shape[0]), "p": int(X.shape[1]),
                           "n_classes": len(groups), "groups": groups, "folds": folds,
                           "fit_time": float(np.median([r["fit_time"] for r in folds])),
                           "fit_cpu": float(np.median([r["fit_cpu"] for r in folds])),
                           "peak_mb": float(max(r["peak_mb"] for r in folds)),
                           "accuracy": {c: float(np.mean([r["accuracy"][c] for r in folds]))
                                        for c in ("knn", "svm")}}
    if cells.markers is not None:
        per_fold = [list(r["recall"].values()) for r in folds]
        out["recall"] = float(np.mean([np.mean(v) for v in per_fold]))
        out["recall_min"] = float(np.mean([np.min(v) for v in per_fold]))
    if cells.expert:
        out["expert_recall"] = float(np.mean([np.mean(list(r["expert"].values()))
                                              for r in folds]))
    return out
