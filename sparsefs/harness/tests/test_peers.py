"""The peers of the standing benchmarks give exactly what their packages give."""

import warnings

import numpy as np
import pytest

from sparsefs.harness import peers


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((45, 12))
    y = np.arange(45) % 3
    X[y == 1, 2] += 2.0
    X[y == 2, 7] -= 2.0
    X[:, 5] = 1.0  # a constant feature
    return X, y


def _contract(est, p):
    assert not np.isnan(est.scores_).any()
    assert sorted(est.ranking_) == list(range(1, p + 1))
    assert est.support_.sum() == est.n_features_to_select_


def test_sklearn_peers_equal_sklearn(data):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.feature_selection import chi2, f_classif, mutual_info_classif

    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the constant feature
        F = f_classif(X, y)[0]
    est = peers.FClassif(3).fit(X, y)
    _contract(est, 12)
    assert np.isneginf(est.scores_[5])
    ok = ~np.isnan(F)
    assert np.array_equal(est.scores_[ok], F[ok])
    assert set(np.flatnonzero(est.support_)) >= {2, 7}
    shifted = X - X.min(axis=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = chi2(shifted, y)[0]
    est = peers.Chi2(3).fit(X, y)
    assert np.array_equal(est.scores_[~np.isnan(c)], c[~np.isnan(c)])
    mi = mutual_info_classif(X, y, random_state=3)
    assert np.array_equal(peers.MutualInfoClassif(3, random_state=3).fit(X, y).scores_, mi)
    assert np.allclose(peers.VarianceFilter(3).fit(X).scores_, X.var(axis=0))
    rf = RandomForestClassifier(n_estimators=20, random_state=1, n_jobs=1).fit(X, y)
    est = peers.RandomForestImportance(3, n_estimators=20, random_state=1).fit(X, y)
    assert np.array_equal(est.scores_, rf.feature_importances_)


def test_round_robin_union():
    # two groups: the first of each, then the second of each (a feature counts once)
    s = peers.round_robin_scores([np.array([3, 1, 0]), np.array([2, 3, 1])], 5)
    order = np.argsort(-s, kind="stable")
    assert order[:4].tolist() == [3, 2, 1, 0] and np.isneginf(s[4])


def test_random_ranking_is_seeded():
    X = np.zeros((4, 30))
    a = peers.RandomRanking(5, random_state=0).fit(X).ranking_
    assert np.array_equal(a, peers.RandomRanking(5, random_state=0).fit(X).ranking_)
    assert not np.array_equal(a, peers.RandomRanking(5, random_state=1).fit(X).ranking_)


@pytest.mark.parametrize("method", ["t-test", "wilcoxon", "logreg"])
def test_scanpy_rank_genes_groups_orders(data, method):
    sc = pytest.importorskip("scanpy")
    X, y = data
    est = peers.ScanpyRankGenes(4, method=method).fit(X, y)
    _contract(est, 12)
    adata, groups = peers._anndata(X, y, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kw = {"max_iter": 1000} if method == "logreg" else {}
        sc.tl.rank_genes_groups(adata, "group", method=method, n_genes=12, use_raw=False, **kw)
    for g, order in zip(groups, est.group_orders_):
        names = [f"f{j}" for j in order]
        assert names == list(adata.uns["rank_genes_groups"]["names"][g])
    # feature 2 is up in group 1, feature 7 down in group 2 (up in the others)
    assert est.group_orders_[1][0] == 2
    assert est.ranking_[2] <= 3


def test_scanpy_binary_logreg_lists_both_groups(data):
    pytest.importorskip("scanpy")
    X, y = data
    y2 = (y == 1).astype(int)
    est = peers.ScanpyRankGenes(2, method="logreg").fit(X, y2)
    first, second = est.group_orders_
    assert np.array_equal(first, second[::-1]) and second[0] == 2


@pytest.mark.parametrize("method", ["t-test", "wilcoxon", "logreg"])
def test_scanpy_with_a_one_sample_group_scores_the_others(data, method):
    """scanpy refuses a one-sample group (lymphoma's training folds have one); the peer
    scores the other groups as scanpy does with ``groups=`` (checked against that call) and
    leaves the lone group's list empty."""
    sc = pytest.importorskip("scanpy")
    X, y = data
    lone = int(np.flatnonzero(y == 2)[0])
    keep = (y != 2) | (np.arange(y.shape[0]) == lone)
    X1, y1 = X[keep], y[keep]
    est = peers.ScanpyRankGenes(4, method=method).fit(X1, y1)
    _contract(est, 12)
    assert est.group_orders_[2].shape == (0,)
    adata, groups = peers._anndata(X1, y1, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kw = {"max_iter": 1000} if method == "logreg" else {}
        sc.tl.rank_genes_groups(adata, "group", method=method, n_genes=12, use_raw=False,
                                groups=groups[:2], **kw)
    names = adata.uns["rank_genes_groups"]["names"]
    if method == "logreg":  # two groups: one coefficient vector, for the second
        assert [f"f{j}" for j in est.group_orders_[1]] == list(names[groups[0]])
    else:
        for g, order in zip(groups[:2], est.group_orders_[:2]):
            assert [f"f{j}" for j in order] == list(names[g])


def test_cosg_orders_equal_cosg(data):
    cosg = pytest.importorskip("cosg")
    X, y = data
    est = peers.COSGMarkers(4).fit(X, y)
    _contract(est, 12)
    adata, groups = peers._anndata(X, y, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cosg.cosg(adata, groupby="group", mu=1.0, n_genes_user=12, key_added="c",
                  remove_lowly_expressed=False, verbosity=0)
    for g, order in zip(groups, est.group_orders_):
        names = [str(s) for s in adata.uns["c"]["names"][g] if str(s).startswith("f")]
        assert [f"f{j}" for j in order] == names


def test_hvg_equals_scanpy_on_the_transformed_data():
    sc = pytest.importorskip("scanpy")
    import anndata

    rng = np.random.default_rng(1)
    counts = rng.poisson(rng.gamma(1.0, 2.0, size=40), size=(60, 40)).astype(float)
    logged = np.log1p(counts)
    est = peers.ScanpyHVG(5).fit(logged)
    assert not est.log_transformed_  # non-negative, below 20: taken as log-scale
    ad = anndata.AnnData(X=logged.astype(np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sc.pp.highly_variable_genes(ad, flavor="seurat", n_bins=20, n_top_genes=5)
    ref = np.asarray(ad.var["dispersions_norm"], dtype=float)
    ok = np.isfinite(ref)
    assert np.allclose(est.scores_[ok], ref[ok])
    raw = peers.ScanpyHVG(5).fit(counts * 100 - 7)
    assert raw.log_transformed_


def test_skrebate_and_mrmr_equal_their_packages(data):
    X, y = data
    skrebate = pytest.importorskip("skrebate")
    ref = skrebate.ReliefF(n_features_to_select=3, n_neighbors=10, n_jobs=1).fit(X, y)
    est = peers.SkrebateReliefF(3).fit(X, y)
    assert np.allclose(est.scores_, ref.feature_importances_)
    mrmr = pytest.importorskip("mrmr")
    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        chosen = mrmr.mrmr_classif(X=pd.DataFrame(X), y=pd.Series(y), K=4, show_progress=False,
                                   n_jobs=1)
    est = peers.MRMRClassif(4).fit(X, y)
    assert np.argsort(-est.scores_, kind="stable")[:4].tolist() == list(chosen)
