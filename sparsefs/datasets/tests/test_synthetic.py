"""Tests of the synthetic generators: shapes, supports, reproducibility and the designs."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.feature_selection import f_classif

from sparsefs.datasets import (
    Dataset,
    make_kos_rings,
    make_kos_sine,
    make_planted_classification,
    make_sparse_clusters_exp1,
    make_sparse_clusters_exp2,
    make_sparse_clusters_exp3,
    make_sparse_clusters_exp4,
)

# (generator, kwargs for a small fast call, expected shape or None when n is random, support size)
GENERATORS = [
    (make_planted_classification, {}, (100, 2000), 20),
    (make_kos_rings, {}, None, 2),
    (make_kos_sine, {}, (400, 10), 4),
    (make_sparse_clusters_exp1, {}, (120, 2000), 200),
    (make_sparse_clusters_exp2, {}, (60, 500), 50),
    (make_sparse_clusters_exp3, {"design": "a"}, (30, 25), 5),
    (make_sparse_clusters_exp3, {"design": "b"}, (60, 500), 50),
    (make_sparse_clusters_exp4, {}, (120, 2000), 200),
]
IDS = [f"{g.__name__}-{i}" for i, (g, *_) in enumerate(GENERATORS)]


@pytest.mark.parametrize(("make", "kwargs", "shape", "n_support"), GENERATORS, ids=IDS)
def test_shapes_support_and_names(make, kwargs, shape, n_support):
    ds = make(**kwargs, random_state=0)
    assert isinstance(ds, Dataset)
    if shape is not None:
        assert ds.X.shape == shape
    assert ds.y.shape == (ds.X.shape[0],)
    assert ds.support.dtype == bool and ds.support.shape == (ds.X.shape[1],)
    assert ds.support.sum() == n_support
    assert list(ds.feature_names[:2]) == ["x0", "x1"]
    assert ds.X.dtype == np.float64
    assert ds.description


@pytest.mark.parametrize(("make", "kwargs", "shape", "n_support"), GENERATORS, ids=IDS)
def test_reproducible(make, kwargs, shape, n_support):
    a = make(**kwargs, random_state=0)
    b = make(**kwargs, random_state=0)
    c = make(**kwargs, random_state=1)
    d = make(**kwargs, random_state=np.random.RandomState(0))
    assert_array_equal(a.X, b.X)
    assert_array_equal(a.y, b.y)
    assert_array_equal(a.support, b.support)
    assert_array_equal(a.X, d.X)
    assert a.X.shape != c.X.shape or not np.array_equal(a.X, c.X)


def test_planted_design():
    ds = make_planted_classification(random_state=0)
    k = 20
    idx = np.flatnonzero(ds.support)
    assert not np.array_equal(idx, np.arange(k))  # the peers' lesson: not the first columns
    assert np.bincount(ds.y).tolist() == [34, 33, 33]  # as equal as possible
    # the informative features really are: most of them in the univariate top 20
    for seed in range(3):
        ds = make_planted_classification(random_state=seed)
        F, _ = f_classif(ds.X, ds.y)
        top = np.argsort(-F, kind="stable")[:k]
        assert np.isin(top, np.flatnonzero(ds.support)).sum() >= 16


def test_planted_class_means_follow_the_pattern():
    shift = 1.5
    ds = make_planted_classification(
        n_samples=3000, n_features=40, n_informative=10, shift=shift, random_state=3
    )
    means = np.stack([ds.X[ds.y == c].mean(axis=0) for c in range(3)])  # (classes, features)
    pattern = means / shift
    rounded = np.round(pattern)
    assert_allclose(pattern, rounded, atol=0.15)
    informative = ds.support
    assert np.all(np.isin(rounded[:, informative], [-1, 0, 1]))
    assert np.all(np.ptp(rounded[:, informative], axis=0) > 0)  # classes differ on each
    assert np.all(rounded[:, ~informative] == 0)


def test_planted_validation():
    with pytest.raises(ValueError, match="n_informative must be >= 1 and <= 5"):
        make_planted_classification(n_features=5, n_informative=6)
    with pytest.raises(TypeError, match="n_samples must be an int"):
        make_planted_classification(n_samples=10.0)
    with pytest.raises(ValueError, match="n_samples=2 must be >= n_classes=3"):
        make_planted_classification(n_samples=2)
    with pytest.raises(ValueError, match="n_classes must be >= 2"):
        make_planted_classification(n_classes=1)
    with pytest.raises(TypeError, match="shift must be a real number"):
        make_planted_classification(shift="big")
    # all features informative is allowed (no 'not the first columns' constraint then)
    assert make_planted_classification(n_features=5, n_informative=5, random_state=0).support.all()


def test_kos_rings_rule():
    ds = make_kos_rings(n_samples=3000, random_state=0)
    r = np.hypot(ds.X[:, 0], ds.X[:, 1])
    assert np.all(r[ds.y == 1] >= 2 / 3)
    assert np.all(r[ds.y == 2] <= 2 / 3 - 1 / 10)
    assert set(ds.y.tolist()) == {1, 2}
    assert 0.87 < ds.X.shape[0] / 3000 < 0.93  # expected keep rate 0.903
    assert np.all(np.abs(ds.X[:, :2]) <= 1)
    assert_allclose(ds.X[:, 2:].var(axis=0), 0.5, atol=0.05)  # N(0, 1/2) noise
    assert_array_equal(ds.support, [True, True, False, False])


def test_kos_sine_rule():
    ds = make_kos_sine(n_samples=2000, n_features=6, random_state=0)
    x = ds.X
    class1 = x[:, 2] + np.sin(x[:, 3] + x[:, 0]) < x[:, 1] ** 2
    assert_array_equal(ds.y, np.where(class1, 1, 2))
    assert np.all(np.abs(x) <= 1)
    assert_array_equal(ds.support, [True] * 4 + [False] * 2)
    with pytest.raises(ValueError, match="n_features must be >= 4"):
        make_kos_sine(n_features=3)


def test_exp1_cluster_means():
    ds = make_sparse_clusters_exp1(
        n_per_cluster=400, n_features=30, n_relevant=10, shuffle=False, random_state=0
    )
    assert_array_equal(ds.y, np.repeat(np.arange(1, 7), 400))  # grouped when shuffle=False
    for k in range(1, 7):
        m = ds.X[ds.y == k].mean(axis=0)
        assert_allclose(m[:10], 0.5 * k, atol=0.2)
        assert_allclose(m[10:], 0.0, atol=0.2)
    assert_array_equal(ds.support, np.arange(30) < 10)  # first columns, as published


@pytest.mark.parametrize("make", [make_sparse_clusters_exp2, make_sparse_clusters_exp3])
def test_three_cluster_shift(make):
    if make is make_sparse_clusters_exp2:
        ds = make(n_per_cluster=500, n_features=20, n_relevant=5, mu=0.7, random_state=0)
        mu, n_rel = 0.7, 5
    else:
        ds = make("a", random_state=0)
        mu, n_rel = 1.0, 5
    assert set(ds.y.tolist()) == {1, 2, 3}
    for k in (1, 2, 3):
        m = ds.X[ds.y == k][:, :n_rel].mean()
        tol = 0.1 if make is make_sparse_clusters_exp2 else 0.5
        assert abs(m - (k - 2) * mu) < tol


def test_exp3_design_validation():
    assert make_sparse_clusters_exp3("b", random_state=0).X.shape == (60, 500)
    with pytest.raises(ValueError, match="design must be one of 'a', 'b', got 'c'"):
        make_sparse_clusters_exp3("c")


def test_shuffle_features_moves_the_support():
    a = make_sparse_clusters_exp1(n_features=300, n_relevant=30, random_state=0)
    b = make_sparse_clusters_exp1(
        n_features=300, n_relevant=30, shuffle_features=True, random_state=0
    )
    assert b.support.sum() == 30
    assert not np.array_equal(b.support, a.support)
    # the signal moved with the support: relevant columns have the large between-cluster spread
    F, _ = f_classif(b.X, b.y)
    assert F[b.support].min() > F[~b.support].max()


def test_exp4_ar1_correlation():
    rho = 0.5
    ds = make_sparse_clusters_exp4(
        n_per_cluster=400, n_clusters=2, n_features=300, n_relevant=0, rho=rho, random_state=0
    )
    X = ds.X
    assert_allclose(X.var(axis=0).mean(), 1.0, atol=0.03)
    lag1 = np.mean([np.corrcoef(X[:, a], X[:, a + 1])[0, 1] for a in range(299)])
    lag2 = np.mean([np.corrcoef(X[:, a], X[:, a + 2])[0, 1] for a in range(298)])
    assert abs(lag1 - rho) < 0.02
    assert abs(lag2 - rho**2) < 0.02
    # the first feature is not special (stationary start)
    assert abs(np.corrcoef(X[:, 0], X[:, 1])[0, 1] - rho) < 0.1
    assert_allclose(X[:, 0].var(), 1.0, atol=0.15)


def test_exp4_means_and_rho_validation():
    ds = make_sparse_clusters_exp4(
        n_per_cluster=300,
        n_clusters=3,
        n_features=40,
        n_relevant=10,
        shuffle=False,
        random_state=0,
    )
    for k in (1, 2, 3):
        m = ds.X[ds.y == k].mean(axis=0)
        assert_allclose(m[:10], k, atol=0.2)
        assert_allclose(m[10:], 0.0, atol=0.2)
    with pytest.raises(ValueError, match="rho must satisfy"):
        make_sparse_clusters_exp4(rho=1.0)
    with pytest.raises(ValueError, match="n_relevant must be >= 0 and <= 10"):
        make_sparse_clusters_exp4(n_features=10, n_relevant=11)
    with pytest.raises(TypeError, match="shuffle must be a bool"):
        make_sparse_clusters_exp4(shuffle=1)


def test_planted_regression_design():
    """y = X beta + noise with the stated support; AR(1) columns have corr rho^|j-k| and unit
    variance (checked on a large sample)."""
    from sparsefs.datasets import make_planted_regression

    d = make_planted_regression(n_samples=40, n_features=20, n_informative=5, noise=0.0,
                                random_state=3)
    assert d.support.sum() == 5 and not np.array_equal(np.flatnonzero(d.support), np.arange(5))
    beta = np.linalg.lstsq(d.X, d.y, rcond=None)[0]
    np.testing.assert_allclose(np.abs(beta[d.support]), 1.0, atol=1e-8)
    big = make_planted_regression(n_samples=20000, n_features=4, n_informative=1,
                                  correlation=0.6, random_state=0)
    c = np.corrcoef(big.X.T)
    assert abs(c[0, 1] - 0.6) < 0.03 and abs(c[0, 2] - 0.36) < 0.03
    np.testing.assert_allclose(big.X.std(axis=0), 1.0, atol=0.03)
    again = make_planted_regression(n_samples=40, n_features=20, n_informative=5, noise=0.0,
                                    random_state=3)
    np.testing.assert_array_equal(again.X, d.X)


@pytest.mark.parametrize("baseline", ["exponential", "weibull"])
def test_planted_survival_design(baseline):
    """Censored fraction near its target; the planted features carry the hazard (the Cox
    score tests rank them first on a large sample)."""
    from sparsefs._kernels import cox
    from sparsefs.datasets import make_planted_survival

    d = make_planted_survival(n_samples=3000, n_features=30, n_informative=3, effect=0.7,
                              censoring=0.4, baseline=baseline, random_state=1)
    assert d.y.dtype.names == ("event", "time")
    assert abs((~d.y["event"]).mean() - 0.4) < 0.04
    assert d.y["time"].min() > 0
    stat, _, _ = cox.score_tests(d.X, cox.cox_data(d.y["time"], d.y["event"]))
    assert set(np.argsort(-stat)[:3]) == set(np.flatnonzero(d.support))
    with pytest.raises(ValueError, match="censoring"):
        make_planted_survival(censoring=1.0)
