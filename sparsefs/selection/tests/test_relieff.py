"""ReliefF against independent references.

References: a dense loop-by-loop computation of Kononenko's ReliefF written here from the
definition (per instance, per class: sort the Manhattan distances, average the diffs); skrebate's
``ReliefF`` (black-box peer, test-only, skipped when not installed; it weights every other
class equally, our ``class_weighting="uniform"``); invariances; the peers' regression tests
(specs/peers.md §5.2 items 1, 7, 8, 13-15, 26).
"""

import warnings

import numpy as np
import pytest

from sparsefs.datasets import make_planted_classification
from sparsefs.selection import ReliefF


def _relieff_by_definition(X, y, k, prior=True, instances=None):
    """ReliefF with explicit loops over instances and classes (dense reference)."""
    n, d = X.shape
    span = X.max(0) - X.min(0)
    span[span == 0] = 1.0
    Xs = (X - X.min(0)) / span
    classes, counts = np.unique(y, return_counts=True)
    P = dict(zip(classes, counts / n, strict=True))
    W = np.zeros(d)
    inst = range(n) if instances is None else instances
    for i in inst:
        dist = np.abs(Xs - Xs[i]).sum(axis=1)
        for c in classes:
            idx = [j for j in range(n) if y[j] == c and j != i]
            if not idx:
                continue
            idx = sorted(idx, key=lambda j: (dist[j], j))[:k]
            diff = np.abs(Xs[idx] - Xs[i]).mean(axis=0)
            if c == y[i]:
                W -= diff
            else:
                W += (P[c] / (1 - P[y[i]]) if prior else 1 / (len(classes) - 1)) * diff
    return W / len(list(inst))


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    n = 45
    y = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    X = rng.normal(size=(n, 7)) * rng.uniform(0.1, 20, size=7)
    X[:, 3] += 5 * y
    X[:, 5] = np.round(X[:, 5])  # ties in one feature
    return X, y


@pytest.mark.parametrize("weighting", ["prior", "uniform"])
@pytest.mark.parametrize("k", [1, 4, 30])
def test_equals_dense_reference(small, weighting, k):
    X, y = small
    est = ReliefF(n_features_to_select=2, n_neighbors=k, class_weighting=weighting).fit(X, y)
    ref = _relieff_by_definition(X, y, k, prior=weighting == "prior")
    np.testing.assert_allclose(est.weights_, ref, rtol=0, atol=1e-8)
    np.testing.assert_allclose(est.scores_, ref, rtol=0, atol=1e-8)


def test_equals_dense_reference_on_a_subset_of_instances(small):
    X, y = small
    est = ReliefF(n_features_to_select=2, n_neighbors=3, n_instances=20, random_state=3).fit(X, y)
    again = ReliefF(n_features_to_select=2, n_neighbors=3, n_instances=20, random_state=3).fit(X, y)
    np.testing.assert_array_equal(est.weights_, again.weights_)
    # recover the instances drawn, as the estimator does
    inst = np.sort(np.random.RandomState(3).choice(X.shape[0], size=20, replace=False))
    np.testing.assert_allclose(est.weights_, _relieff_by_definition(X, y, 3, instances=inst),
                               atol=1e-8)
    assert est.n_instances_ == 20


def test_class_smaller_than_k_and_singleton_class():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 4))
    y = np.array([0] * 6 + [1] * 5 + [2])
    est = ReliefF(n_features_to_select=2, n_neighbors=8).fit(X, y)
    np.testing.assert_allclose(est.weights_, _relieff_by_definition(X, y, 8), atol=1e-12)


def test_equals_skrebate(small):
    skrebate = pytest.importorskip("skrebate")
    X, y = small
    X = X.copy()
    X[:, 5] += np.random.default_rng(2).normal(scale=1e-3, size=X.shape[0])  # all continuous
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer = skrebate.ReliefF(n_neighbors=4, n_features_to_select=2).fit(X, y)
    ours = ReliefF(n_features_to_select=2, n_neighbors=4, class_weighting="uniform").fit(X, y)
    np.testing.assert_allclose(ours.weights_, peer.feature_importances_, rtol=0, atol=1e-8)


def test_planted_recovery():
    """§5.2 item 1 / the issue's acceptance: >= 18/20 planted features at random indices."""
    data = make_planted_classification(random_state=0)
    assert not data.support[:20].all()
    est = ReliefF(n_features_to_select=20).fit(data.X, data.y)
    assert (est.support_ & data.support).sum() >= 18


def test_own_rule_is_the_relevance_threshold(small):
    X, y = small
    est = ReliefF(threshold=0.01).fit(X, y)
    np.testing.assert_array_equal(est.support_, est.weights_ > 0.01)


def test_constant_feature_ranks_last_with_weight_zero(small):
    X, y = small
    X = X.copy()
    X[:, 1] = 4.0
    est = ReliefF(n_features_to_select=2).fit(X, y)
    assert est.weights_[1] == 0 and est.scores_[1] == -np.inf and est.ranking_[1] == 7


def test_invariances(small):
    """Shift/scale of a feature changes nothing; permuting rows or features permutes results."""
    X, y = small
    ref = ReliefF(n_features_to_select=3, n_neighbors=3).fit(X, y)
    Xa = X * np.arange(1, 8) + 100.0
    np.testing.assert_allclose(ReliefF(n_features_to_select=3, n_neighbors=3).fit(Xa, y).weights_,
                               ref.weights_, atol=1e-12)
    perm = np.random.default_rng(4).permutation(X.shape[0])
    np.testing.assert_allclose(
        ReliefF(n_features_to_select=3, n_neighbors=3).fit(X[perm], y[perm]).weights_,
        ref.weights_, atol=1e-12)
    cols = np.random.default_rng(5).permutation(X.shape[1])
    np.testing.assert_allclose(
        ReliefF(n_features_to_select=3, n_neighbors=3).fit(X[:, cols], y).weights_,
        ref.weights_[cols], atol=1e-12)


def test_global_random_state_untouched(small):
    X, y = small
    before = np.random.get_state()[1].copy()  # noqa: NPY002 - checking the global state
    ReliefF(n_features_to_select=2, n_instances=0.5).fit(X, y)
    np.testing.assert_array_equal(np.random.get_state()[1], before)  # noqa: NPY002


def test_bad_n_instances(small):
    X, y = small
    with pytest.raises(ValueError, match="n_instances=100"):
        ReliefF(n_instances=100).fit(X, y)


def _rrelieff_brute(X, y, k, sigma):
    """RReliefF by the paper's loops (Robnik-Šikonja & Kononenko 2003, Fig. 3): every
    instance, its k nearest (Manhattan on range-scaled features, ties to the lower index)."""
    X = np.asarray(X, dtype=float)
    span = np.ptp(X, axis=0)
    span[span == 0] = 1.0
    Xs = (X - X.min(axis=0)) / span
    ys = (y - y.min()) / np.ptp(y)
    n, p = X.shape
    d1 = np.exp(-((np.arange(1, k + 1) / sigma) ** 2))
    dw = d1 / d1.sum()
    n_dc, n_da, n_dcda = 0.0, np.zeros(p), np.zeros(p)
    for i in range(n):
        dist = [(np.abs(Xs[i] - Xs[j]).sum(), j) for j in range(n) if j != i]
        near = [j for _, j in sorted(dist)[:k]]
        for rank, j in enumerate(near):
            dc = abs(ys[i] - ys[j])
            da = np.abs(Xs[i] - Xs[j])
            n_dc += dc * dw[rank]
            n_da += da * dw[rank]
            n_dcda += dc * da * dw[rank]
    return n_dcda / n_dc - (n_da - n_dcda) / (n - n_dc)


@pytest.mark.parametrize("sparse", [False, True])
def test_rrelieff_equals_brute_force(sparse):
    """RReliefF (continuous y) against the paper's loops on a small problem."""
    import scipy.sparse as sps

    rng = np.random.default_rng(3)
    X = rng.normal(size=(25, 6))
    X[X < -0.5] = 0.0
    y = 2.0 * X[:, 1] - X[:, 4] + 0.1 * rng.normal(size=25)
    sel = ReliefF(n_neighbors=5, sigma=2.0).fit(sps.csr_array(X) if sparse else X, y)
    assert sel.target_type_ == "regression"
    np.testing.assert_allclose(sel.weights_, _rrelieff_brute(X, y, 5, 2.0), atol=1e-12)
    assert set(np.argsort(sel.ranking_)[:2]) == {1, 4}
