"""Dask input gives the in-memory answer (numpy vs dask, several chunkings).

Tolerances: statistics that the dask path sums in another order than the in-memory kernels
(class sums over row blocks, within-class scatter merged by Chan's update) agree to
``RTOL = 1e-12`` relative: each float64 sum of n terms carries a relative rounding error of at
most ~n * 2**-53 (here ~1e-13 in the worst case, ~1e-15 in practice, as measured), and the
statistics are ratios / squares of such sums. Everything that the dask path computes with the
same code on the same numbers - the l1 centers (the in-memory kernel on feature blocks), the
rankings, supports and labels of well-separated planted data - is compared exactly.

Most tests use the threaded scheduler or an in-process ``LocalCluster``; one uses two worker
processes.
"""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

from numpy.testing import assert_allclose, assert_array_equal  # noqa: E402

from sparsefs._dask import _core  # noqa: E402
from sparsefs._dask import _kmeans as dask_kmeans  # noqa: E402
from sparsefs.classification import SparseCenterClassifier, SparseCenterClassifierCV  # noqa: E402
from sparsefs.clustering import L0KMeans, SparseKMeans  # noqa: E402
from sparsefs.datasets import make_planted_classification, make_sparse_clusters_exp2  # noqa: E402
from sparsefs.selection import SMBA, FisherScore  # noqa: E402

RTOL = 1e-12

#: single chunk, row chunks (uneven), tiles, column chunks, irregular chunks on both axes
CHUNKINGS = {
    "single": (-1, -1),
    "rows": (37, -1),
    "tiles": (50, 64),
    "columns": (-1, 41),
    "uneven": ((10, 90, 33, 47), (7, 100, 150, 43)),
}


@pytest.fixture(scope="module")
def data():
    d = make_planted_classification(n_samples=180, n_features=300, n_classes=3, random_state=0)
    return d.X, d.y


def _close(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert_allclose(b, a, rtol=RTOL, atol=RTOL * max(1.0, float(np.abs(a).max())))


def _counting(X, chunks):
    """A dask array over X that counts how often its blocks are produced."""
    calls = []

    def load(block):
        if block.size:  # not dask's meta probes on empty arrays
            calls.append(block.shape)
        return block

    return da.from_array(X, chunks=chunks).map_blocks(load, dtype=X.dtype, meta=X[:0, :0]), calls


# --------------------------------------------------------------------------------------------
# SparseCenterClassifier
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("chunks", CHUNKINGS.values(), ids=CHUNKINGS.keys())
@pytest.mark.parametrize("objective", ["balanced", "pooled"])
@pytest.mark.parametrize("standardize", [False, True])
def test_l2_centers_equal_numpy(data, chunks, objective, standardize):
    X, y = data
    kw = {"norm": "l2", "objective": objective, "standardize": standardize}
    ref = SparseCenterClassifier(15, **kw).fit(X, y)
    got = SparseCenterClassifier(15, **kw).fit(da.from_array(X, chunks=chunks), y)
    for name in ("gains_", "class_centers_", "shared_center_"):
        assert isinstance(getattr(got, name), np.ndarray)
        _close(getattr(ref, name), getattr(got, name))
    if standardize:
        _close(ref.scale_, got.scale_)
    assert_array_equal(ref.ranking_, got.ranking_)
    assert_array_equal(ref.support_, got.support_)
    assert_array_equal(ref.classes_, got.classes_)


@pytest.mark.parametrize("chunks", CHUNKINGS.values(), ids=CHUNKINGS.keys())
@pytest.mark.parametrize("objective", ["balanced", "pooled"])
def test_l1_centers_equal_numpy_exactly(data, chunks, objective):
    X, y = data
    kw = {"norm": "l1", "objective": objective, "standardize": True}
    ref = SparseCenterClassifier(15, **kw).fit(X, y)
    got = SparseCenterClassifier(15, **kw).fit(da.from_array(X, chunks=chunks), y)
    for name in ("gains_", "class_centers_", "shared_center_", "scale_", "ranking_", "support_"):
        assert_array_equal(getattr(ref, name), getattr(got, name))


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_sparse_centers_predict_is_lazy_and_equal(data, norm):
    X, y = data
    ref = SparseCenterClassifier(15, norm=norm).fit(X, y)
    got = SparseCenterClassifier(15, norm=norm).fit(da.from_array(X, chunks=(60, 100)), y)
    Xd = da.from_array(X, chunks=(41, 77))
    pred, dec = got.predict(Xd), got.decision_function(Xd)
    assert isinstance(pred, da.Array) and isinstance(dec, da.Array)
    assert_array_equal(pred.compute(), ref.predict(X))
    _close(ref.decision_function(X), dec.compute())
    # two classes: a 1-d decision
    two = y < 2
    ref2 = SparseCenterClassifier(5, norm=norm).fit(X[two], y[two])
    got2 = SparseCenterClassifier(5, norm=norm).fit(da.from_array(X[two], chunks=40), y[two])
    Xd2 = da.from_array(X[two], chunks=(30, -1))
    assert_array_equal(got2.predict(Xd2).compute(), ref2.predict(X[two]))
    _close(ref2.decision_function(X[two]), got2.decision_function(Xd2).compute())


def test_sparse_centers_dask_labels_float32_and_default_k(data):
    X, y = data
    X32 = X.astype(np.float32)
    labels = np.array(["a", "b", "c"])[y]
    ref = SparseCenterClassifier(norm="l1").fit(X32, labels)
    got = SparseCenterClassifier(norm="l1").fit(da.from_array(X32, chunks=(50, 50)),
                                               da.from_array(labels, chunks=50))
    assert got.n_features_to_select_ == ref.n_features_to_select_ == 10
    assert_array_equal(ref.gains_, got.gains_)
    assert_array_equal(got.classes_, ["a", "b", "c"])
    assert got.n_features_in_ == X.shape[1]


# --------------------------------------------------------------------------------------------
# FisherScore
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("chunks", CHUNKINGS.values(), ids=CHUNKINGS.keys())
@pytest.mark.parametrize("k", [20, None])
def test_fisher_equal_numpy(data, chunks, k):
    X, y = data
    X = X.copy()
    X[:, 3] *= 1e300  # overflowing scatter: recomputed on the column
    X[:, 4] *= 1e-302  # underflowing scatter
    X[:, 5] = 2.0  # constant: score 0
    X[:, 6] = 1.5 * y  # a perfect separator: +inf
    ref = FisherScore(k).fit(X, y)
    got = FisherScore(k).fit(da.from_array(X, chunks=chunks), y)
    for name in ("scores_", "f_statistic_", "pvalues_"):
        a, b = getattr(ref, name), getattr(got, name)
        finite = np.isfinite(a)
        assert_array_equal(finite, np.isfinite(b))
        assert_array_equal(a[~finite], b[~finite])
        _close(a[finite], b[finite])
    assert got.scores_[5] == 0 and got.scores_[6] == np.inf
    assert_array_equal(ref.ranking_, got.ranking_)
    assert_array_equal(ref.support_, got.support_)


@pytest.mark.parametrize("bad, match", [(np.nan, "NaN"), (np.inf, "infinity")])
@pytest.mark.parametrize("make", [lambda: FisherScore(3),
                                  lambda: SparseCenterClassifier(3, norm="l1"),
                                  lambda: SparseCenterClassifier(3, norm="l2")])
def test_non_finite_x_is_rejected(data, bad, match, make):
    X, y = data
    X = X.copy()
    X[7, 11] = bad
    with pytest.raises(ValueError, match=match):
        make().fit(da.from_array(X, chunks=(50, 50)), y)


# --------------------------------------------------------------------------------------------
# Nothing is computed twice; chunking policy; unsupported estimators
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [lambda: FisherScore(3),
                                  lambda: SparseCenterClassifier(3, norm="l1"),
                                  lambda: SparseCenterClassifier(3, norm="l2",
                                                                 standardize=True)])
def test_each_block_is_read_once(data, make):
    X, y = data
    Xd, calls = _counting(X, (50, 64))
    make().fit(Xd, y)
    assert len(calls) == Xd.npartitions


def test_transform_is_lazy(data):
    X, y = data
    fs = FisherScore(7).fit(da.from_array(X, chunks=(50, 50)), y)
    out = fs.transform(da.from_array(X, chunks=(60, 70)))
    assert isinstance(out, da.Array) and out.shape == (X.shape[0], 7)
    assert_array_equal(out.compute(), FisherScore(7).fit(X, y).transform(X))


def test_sparse_blocks_are_rejected(data):
    # FisherScore and the l2 centers take sparse blocks (test_dask_sparse.py); the l1 centers
    # (medians over feature blocks) do not
    sp = pytest.importorskip("scipy.sparse")
    X, y = data
    Xs = da.from_array(X, chunks=(60, 100)).map_blocks(sp.csr_matrix, meta=sp.csr_matrix((0, 0)))
    with pytest.raises(TypeError, match="sparse"):
        SparseCenterClassifier(3, norm="l1").fit(Xs, y)


def test_chunking_policy():
    X = da.zeros((1000, 300), chunks=(100, 300))
    feat = _core.to_feature_blocks(X, target_bytes=1000 * 8 * 50)
    assert feat.chunks[0] == (1000,) and max(feat.chunks[1]) <= 50
    tiles = da.zeros((1000, 300), chunks=(250, 40))
    assert _core.to_feature_blocks(tiles, target_bytes=1000 * 8 * 50).chunks == ((1000,),
                                                                                tiles.chunks[1])
    rows = _core.to_row_blocks(da.zeros((1000, 300), chunks=(1000, 30)), target_bytes=300 * 8 * 64)
    assert rows.chunks[1] == (300,) and max(rows.chunks[0]) <= 64
    same = da.zeros((1000, 300), chunks=(64, 300))
    assert _core.to_row_blocks(same, target_bytes=300 * 8 * 64) is same


def test_unsupported_estimator_and_input_errors(data):
    X, y = data
    Xd = da.from_array(X, chunks=60)
    with pytest.raises(TypeError, match="dask"):
        SparseCenterClassifierCV().fit(Xd, y)
    with pytest.raises(TypeError, match="dask"):
        SparseKMeans(n_clusters=2, wbound=2.0).fit(Xd)
    from sparsefs.selection import LaplacianScore

    with pytest.raises(TypeError, match="dask"):
        LaplacianScore().fit(Xd)
    with pytest.raises(ValueError, match="n_features_to_select"):
        L0KMeans(n_clusters=2).fit(Xd)
    with pytest.raises(ValueError, match="2 classes"):
        FisherScore(2).fit(Xd, np.zeros(X.shape[0]))
    with pytest.raises(ValueError, match="numeric"):
        FisherScore(2).fit(da.from_array(X.astype(str), chunks=60), y)
    with pytest.raises(ValueError, match="exceeds n_features"):
        FisherScore(1000).fit(Xd, y)


# --------------------------------------------------------------------------------------------
# L0KMeans
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clusters():
    return make_sparse_clusters_exp2(n_features=120, mu=1.5, random_state=1).X


@pytest.mark.parametrize("chunks", CHUNKINGS.values(), ids=CHUNKINGS.keys())
@pytest.mark.parametrize("standardize", [True, False])
def test_l0_kmeans_equal_numpy(clusters, chunks, standardize):
    X = clusters
    if isinstance(chunks[0], tuple):  # 60 rows, 120 columns
        chunks = ((10, 25, 25), (7, 50, 63))
    kw = {"n_clusters": 3, "n_features_to_select": 30, "standardize": standardize,
          "random_state": 0, "n_init": 5}
    ref = L0KMeans(**kw).fit(X)
    got = L0KMeans(**kw).fit(da.from_array(X, chunks=chunks))
    assert_array_equal(ref.labels_, got.labels_)
    assert_array_equal(ref.weights_, got.weights_)
    assert_array_equal(ref.support_, got.support_)
    _close(ref.bcss_, got.bcss_)
    _close(ref.cluster_centers_, got.cluster_centers_)
    _close(ref.objective_, got.objective_)
    assert ref.n_iter_ == got.n_iter_
    pred = got.predict(da.from_array(X, chunks=(25, 40)))
    assert isinstance(pred, da.Array)
    assert_array_equal(pred.compute(), ref.predict(X))


def test_l0_kmeans_sampled_first_partition(clusters, monkeypatch):
    """Rows beyond INIT_SAMPLE_BYTES: k-means++ on a sample, then Lloyd on all rows; the
    planted clusters are recovered (same partition up to the cluster numbering)."""
    from sklearn.metrics import adjusted_rand_score

    X = clusters
    monkeypatch.setattr(dask_kmeans, "INIT_SAMPLE_BYTES", 8 * X.shape[1] * 30)
    kw = {"n_clusters": 3, "n_features_to_select": 30, "random_state": 0, "n_init": 5}
    ref = L0KMeans(**kw).fit(X)
    got = L0KMeans(**kw).fit(da.from_array(X, chunks=(16, -1)))
    assert adjusted_rand_score(ref.labels_, got.labels_) == 1.0
    assert_array_equal(ref.support_, got.support_)
    _close(ref.bcss_, got.bcss_)


# --------------------------------------------------------------------------------------------
# SMBA (penalty="l1": column blocks of C as dask tasks)
# --------------------------------------------------------------------------------------------

SMBA_ATTRS = ("scores_", "row_norms_", "dual_scores_", "ranking_", "support_", "coef_",
              "representatives_", "n_iter_", "converged_", "lambda_", "lambda_max_", "solver_")


@pytest.mark.parametrize("kw", [
    {"alpha": 5, "affine": False, "block_size": 25},
    {"alpha": 10, "affine": False, "center": True, "n_features_to_select": 10},
    {"alpha": 5, "affine": False, "block_size": 40, "tie_break": "index", "keep_coef": False},
])
def test_smba_l1_equal_numpy_exactly(kw):
    """Same blocks, same kernel per block: every attribute is identical."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 120))
    X[:, 5] = 1.0  # a constant feature
    ref = SMBA(penalty="l1", **kw).fit(X)
    got = SMBA(penalty="l1", **kw).fit(da.from_array(X, chunks=(10, 40)))
    for name in SMBA_ATTRS:
        assert_array_equal(getattr(ref, name), getattr(got, name), err_msg=name)
    assert_array_equal(ref.history_["err1"], got.history_["err1"])


def test_smba_row_group_penalty_is_not_distributed():
    X = da.from_array(np.random.default_rng(0).standard_normal((20, 30)))
    with pytest.raises(TypeError, match="penalty='l1'"):
        SMBA().fit(X)


# --------------------------------------------------------------------------------------------
# dask.distributed
# --------------------------------------------------------------------------------------------


def _all_fits(X, y, Xc):
    out = {}
    for name, make in {"l1": lambda: SparseCenterClassifier(10, norm="l1"),
                       "l2": lambda: SparseCenterClassifier(10, norm="l2"),
                       "fisher": lambda: FisherScore(10)}.items():
        out[name] = (make().fit(X, y), make().fit(da.from_array(X, chunks=(45, 70)), y))
    kw = {"n_clusters": 3, "n_features_to_select": 30, "random_state": 0, "n_init": 3}
    out["l0kmeans"] = (L0KMeans(**kw).fit(Xc), L0KMeans(**kw).fit(da.from_array(Xc, chunks=20)))
    kw = {"penalty": "l1", "affine": False, "alpha": 5, "block_size": 50}
    out["smba"] = (SMBA(**kw).fit(X[:40]), SMBA(**kw).fit(da.from_array(X[:40], chunks=20)))
    return out


def _check_fits(fits):
    for name, (ref, got) in fits.items():
        assert_array_equal(ref.ranking_, got.ranking_, err_msg=name)
        _close(ref.scores_, got.scores_)
    assert_array_equal(fits["l0kmeans"][0].labels_, fits["l0kmeans"][1].labels_)


def test_in_process_local_cluster(data, clusters):
    X, y = data
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        _check_fits(_all_fits(X, y, clusters))


def test_local_cluster_with_worker_processes(data, clusters):
    """The one test with worker processes (spawned: each imports sparsefs)."""
    X, y = data
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        _check_fits(_all_fits(X, y, clusters))
