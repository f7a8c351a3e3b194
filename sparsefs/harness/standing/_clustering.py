r"""Benchmark (c): unsupervised selection judged by the clustering it yields.

After Cho et al., "Characterizing efficient feature selection for single-cell expression
analysis", Briefings in Bioinformatics 25(4):bbae317 (2024), written from their description:
an unsupervised selection is good when k-means on the selected features recovers the known
groups (ARI against the annotation), whatever it does for marker inclusion.

One cell (data set x method):

* after an untimed warm-up fit on a corner of the data (imports and compilation are not
  the method's run time), the method is fitted once on every sample, **without labels**
  (z-scored features, or the
  data as stored for ``input = "raw"``: the variance filter and scanpy's HVG), and gives a
  ranking; its top ``max(k)`` features are stored;
* for every k of the grid, k-means (k-means++, one start, ``n_clusters`` = the number of
  annotated groups) runs ``n_runs`` times on the selected features, z-scored over all
  samples (so every method's features enter k-means on the same scale), with starting seeds
  that depend on the data set and the run only (every method gets the same starts);
* the adjusted Rand index (ARI, Hubert & Arabie 1985) and the normalised mutual information
  (NMI, arithmetic normalisation) of each run against the annotation are stored; the page
  reports their mean over runs and over the k grid (no k is chosen with the labels) and, as
  a ceiling, the best k.
"""

from __future__ import annotations

import contextlib
import time
import warnings
from typing import Any

import numpy as np

from sparsefs._kernels.arrays import to_dense
from sparsefs.harness.standing._budget import Budget
from sparsefs.harness.standing._spec import StandingData, StandingMethod, StandingSpec, cell_seed

__all__ = ["VERSION", "clustering_cell", "zscore"]

VERSION = 3
"""Bumped when the computation of a cell changes (part of every cell's hash)."""

_DIGITS = 5


def zscore(X: np.ndarray) -> np.ndarray:
    """Columns centred and scaled to unit standard deviation (constant columns left at 0)."""
    mean = X.mean(axis=0)
    sd = X.std(axis=0)
    return (X - mean) / np.where(sd > 0, sd, 1.0)


def _kmeans_scores(Z: np.ndarray, y: np.ndarray, n_clusters: int, seeds: list[int]
                   ) -> tuple[list[float], list[float]]:
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score

    from sparsefs.metrics import normalized_mutual_info

    ari, nmi = [], []
    for s in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning on duplicate points
            labels = KMeans(n_clusters=n_clusters, n_init=1, random_state=s).fit_predict(Z)
        ari.append(round(float(adjusted_rand_score(y, labels)), _DIGITS))
        nmi.append(round(float(normalized_mutual_info(y, labels)), _DIGITS))
    return ari, nmi


def _warm_up(method: StandingMethod, X: np.ndarray, n_clusters: int, seed: int) -> None:
    """One untimed fit on a corner of the data (at most 40 rows x 60 columns), so that the
    timed fit does not pay for imports and compilation (a fresh worker's first cell would)."""
    from sparsefs.harness._protocols import build_method

    sub = X[: min(X.shape[0], 40), : min(X.shape[1], 60)]
    with contextlib.suppress(Exception), warnings.catch_warnings():
        # a warm-up only: the timed fit reports errors
        warnings.simplefilter("ignore")
        build_method(method.method_spec, seed=seed, n_classes=min(n_clusters, 3),
                     n_features_to_select=min(5, sub.shape[1])).fit(sub)


def clustering_cell(spec: StandingSpec, dataset: StandingData, method: StandingMethod, *,
                    budget: Budget | None = None) -> dict[str, Any]:
    """Compute one (data set, method) cell of the clustering benchmark (see the module).

    Returns
    -------
    dict
        ``n, p, n_clusters, grid, fit_time, fit_cpu`` (wall and CPU seconds), ``order`` (top
        ``max(k)`` features, best first) and
        per k the lists ``ari`` / ``nmi`` over the k-means runs (keys are the k as strings).
    """
    from sparsefs.harness._protocols import build_method, feature_order
    from sparsefs.harness.standing._data import load_matrix

    ds = load_matrix(dataset)
    X = to_dense(ds.X)
    X = X.astype(np.float64)
    _, y = np.unique(ds.y, return_inverse=True)
    n, p = X.shape
    n_clusters = int(y.max()) + 1
    grid = [k for k in spec.k_grid() if k <= p] or [p]
    n_runs = int(spec.protocol.get("n_runs", 10))
    seeds = [cell_seed(spec.seed, dataset.label, "", 1, r) for r in range(n_runs)]
    Z = zscore(X)
    out: dict[str, Any] = {"n": n, "p": p, "n_clusters": n_clusters, "grid": grid}
    if method.kind == "baseline" and not (method.stem or method.estimator):
        ari, nmi = _kmeans_scores(Z, y, n_clusters, seeds)
        return {**out, "grid": [p], "fit_time": 0.0, "fit_cpu": 0.0, "ari": {str(p): ari},
                "nmi": {str(p): nmi}}
    K = max(grid)
    est = build_method(method.method_spec, seed=cell_seed(spec.seed, dataset.label,
                                                          method.label, 0),
                       n_classes=n_clusters, n_features_to_select=K)
    from sparsefs.harness.standing._budget import cpu_seconds

    X_in = X if method.input == "raw" else Z
    _warm_up(method, X_in, n_clusters, spec.seed)
    t0, c0 = time.perf_counter(), cpu_seconds()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X_in)
    out["fit_time"] = round(time.perf_counter() - t0, 4)
    out["fit_cpu"] = round(cpu_seconds() - c0, 4)
    order = feature_order(est)[:K]
    out["order"] = [int(j) for j in order]
    out["ari"], out["nmi"] = {}, {}
    for k in grid:
        ari, nmi = _kmeans_scores(Z[:, np.sort(order[:k])], y, n_clusters, seeds)
        out["ari"][str(k)], out["nmi"][str(k)] = ari, nmi
        if budget is not None:
            budget.check_elapsed()
    return out
