"""The cells of benchmarks (b) markers and (c) clustering, and the standing figures."""

import tomllib

import numpy as np
import pytest

from sparsefs.harness.standing import StandingSpec, compute_cell, run_cells
from sparsefs.harness.standing._data import PBMC_EXPERT_MARKERS, load_cells

CLUSTERING = """
[standing]
benchmark = "clustering"
title = "tiny clustering"
simple = ["variance"]

[protocol]
k = [3, 10]
n_runs = 4

[[datasets]]
label = "P"
loader = "sparsefs.datasets:make_planted_classification"
params = { n_samples = 45, n_features = 30, n_informative = 5, n_classes = 3, shift = 3.0 }

[[methods]]
label = "variance"
estimator = "sparsefs.harness.peers:VarianceFilter"
input = "raw"

[[methods]]
label = "variance again"
estimator = "sparsefs.harness.peers:VarianceFilter"
input = "raw"

[[methods]]
stem = "laplacian_score"

[[methods]]
label = "all features"
kind = "baseline"
"""

MARKERS = """
[standing]
benchmark = "markers"
title = "tiny markers"
simple = ["t-test (scanpy)"]

[protocol]
n_splits = 2
panel_per_group = 3
selection_per_group = 10
expert_top = 10

[[datasets]]
label = "sim"
loader = "sparsefs.harness.standing._data:simulated_counts"
[datasets.params]
n_genes = 150
n_groups = 3
n_donors = 4
cells_per_donor = [30, 45]
n_markers = 10
log_fc = 2.0
random_state = 0

[[methods]]
label = "t-test (scanpy)"
estimator = "sparsefs.harness.peers:ScanpyRankGenes"
params = { method = "t-test" }
package = "scanpy"

[[methods]]
stem = "fisher_score"

[[methods]]
label = "random"
estimator = "sparsefs.harness.peers:RandomRanking"
kind = "baseline"
"""


def test_clustering_cell_scores_kmeans_on_the_top_k():
    from sklearn.cluster import KMeans
    from sklearn.metrics import adjusted_rand_score

    from sparsefs.datasets import make_planted_classification
    from sparsefs.harness.standing import cell_seed
    from sparsefs.harness.standing._clustering import zscore

    spec = StandingSpec.from_dict(tomllib.loads(CLUSTERING))
    d = spec.datasets[0]
    recs = {m.label: compute_cell(spec, d, m, single_thread=False) for m in spec.methods}
    assert {r["status"] for r in recs.values()} == {"ok"}
    a, b = recs["variance"]["result"], recs["variance again"]["result"]
    # the same ranking gets the same k-means starts, hence the same scores
    assert a["order"] == b["order"] and a["ari"] == b["ari"]
    # by hand: k-means on the z-scored top 3 with the data set's first seed
    data = make_planted_classification(n_samples=45, n_features=30, n_informative=5,
                                       n_classes=3, shift=3.0, random_state=0)
    X = np.asarray(data.X, dtype=float)
    assert np.array_equal(np.argsort(-X.var(axis=0), kind="stable")[:10], a["order"])
    y = np.unique(data.y, return_inverse=True)[1]
    Z = zscore(X)[:, np.sort(a["order"][:3])]
    labels = KMeans(3, n_init=1, random_state=cell_seed(0, "P", "", 1, 0)).fit_predict(Z)
    assert a["ari"]["3"][0] == pytest.approx(round(adjusted_rand_score(y, labels), 5))
    assert len(a["ari"]["10"]) == 4 and len(a["nmi"]["3"]) == 4
    assert list(recs["all features"]["result"]["ari"]) == ["30"]


def test_marker_cell_recall_and_donor_split():
    pytest.importorskip("scanpy")
    spec = StandingSpec.from_dict(tomllib.loads(MARKERS))
    d = spec.datasets[0]
    cells = load_cells(d.loader, dict(d.params))
    res = {m.label: compute_cell(spec, d, m, single_thread=False) for m in spec.methods}
    assert {r["status"] for r in res.values()} == {"ok"}, res
    t = res["t-test (scanpy)"]["result"]
    assert t["groups"] == sorted(cells.markers)
    for f in t["folds"]:
        # recall by hand from the stored top lists and the planted markers
        for g, top in f["top"].items():
            planted = set(np.flatnonzero(cells.markers[g]))
            assert f["recall"][g] == pytest.approx(len(set(top[:10]) & planted) / 10)
        assert f["peak_mb"] >= 0 and f["fit_cpu"] >= 0
    assert t["recall"] > 0.8 > res["random"]["result"]["recall"]
    assert res["fisher_score"]["result"]["recall"] > 0.5
    assert 0 <= t["accuracy"]["knn"] <= 1 and 0 <= t["accuracy"]["svm"] <= 1
    # held-out cells are whole donors: each donor is in exactly one test fold
    from sparsefs.harness.standing import cell_seed
    from sparsefs.harness.standing._markers import _splits

    folds = _splits(cells, 2, cell_seed(0, "sim", "", 0))
    tested = [set(cells.donors[te]) for _, te in folds]
    trained = [set(cells.donors[tr]) for tr, _ in folds]
    assert not tested[0] & tested[1] and all(not a & b for a, b in zip(tested, trained))


def test_pbmc68k_reduced_cells_and_expert_markers():
    pytest.importorskip("scanpy")
    cells = load_cells("sparsefs.harness.standing._data:pbmc68k_reduced", {})
    assert cells.X.shape == (700, 765) and cells.donors is None
    assert set(cells.expert) <= set(PBMC_EXPERT_MARKERS)
    assert "CD14" not in cells.expert["CD14+ Monocyte"]  # not among its 765 genes
    assert all(g in set(cells.feature_names) for gs in cells.expert.values() for g in gs)


def test_standing_figures_from_a_tiny_run(tmp_path):
    pytest.importorskip("matplotlib")
    from sparsefs.harness.standing import ResultStore, analyse
    from sparsefs.plotting import standing_figures

    spec = StandingSpec.from_dict(tomllib.loads(CLUSTERING.replace(
        'label = "P"\n', 'label = "P"\n', 1)))
    spec = StandingSpec.from_dict({**tomllib.loads(CLUSTERING), "datasets": [
        {"label": f"P{i}", "loader": "sparsefs.datasets:make_planted_classification",
         "params": {"n_samples": 45, "n_features": 30, "n_informative": 5, "n_classes": 3,
                    "shift": 3.0, "random_state": i}} for i in range(3)]})
    store = ResultStore(tmp_path / "clustering")
    run_cells(spec, store, n_jobs=0)
    a = analyse(spec, store)
    made = standing_figures(a, tmp_path / "figs")
    assert {"cd_ari", "cd_nmi", "curves", "similarity", "time"} <= set(made)
    for caption, name in made.values():
        assert (tmp_path / "figs" / name).stat().st_size > 1000 and caption
