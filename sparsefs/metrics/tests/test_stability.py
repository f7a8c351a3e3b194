"""Stability indices: Nogueira (with its confidence interval), Jaccard, Kuncheva.

Independent references: hand computations on small supports; Kuncheva's pairwise definition
(for supports of one size, Nogueira et al. 2018 show their estimator equals the mean pairwise
Kuncheva index); the population value of independent Bernoulli supports for the interval's
coverage (simulation).
"""

from itertools import combinations

import numpy as np
import pytest

from sparsefs.metrics import (
    StabilityEstimate,
    jaccard_index,
    kuncheva_index,
    nogueira_index,
)


def test_identical_supports_score_one():
    Z = np.tile([True, False, True, False, False], (6, 1))
    est = nogueira_index(Z)
    assert isinstance(est, StabilityEstimate)
    assert est.value == pytest.approx(1.0)
    assert est.variance == pytest.approx(0.0, abs=1e-15)
    assert jaccard_index(Z) == 1.0
    assert kuncheva_index(Z) == pytest.approx(1.0)


def test_hand_made_example():
    """By hand: p_hat = (1, 2/3, 1/3, 0), mean s_f^2 = 3/2 * (4/9) / 4 = 1/6, kbar/d = 1/2,
    so Phi = 1 - (1/6) / (1/4) = 1/3. Jaccard: pairs (1, 1/3, 1/3) -> 5/9. Kuncheva (k = 2,
    d = 4): r = (2, 1, 1) -> ((8 - 4) / 4 + 0 + 0) / 3 = 1/3."""
    Z = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0]], dtype=bool)
    assert nogueira_index(Z).value == pytest.approx(1 / 3)
    assert jaccard_index(Z) == pytest.approx(5 / 9)
    assert kuncheva_index(Z) == pytest.approx(1 / 3)
    # the same supports as index arrays
    idx = [[0, 1], [0, 1], [0, 2]]
    assert nogueira_index(idx, n_features=4).value == pytest.approx(1 / 3)
    assert jaccard_index(idx, n_features=4) == pytest.approx(5 / 9)


def test_different_sizes_hand_made():
    """Nogueira is defined for supports of different sizes: Z = {0}, {0, 1}: p_hat = (1, 1/2,
    0), mean s^2 = 2 * (1/4) / 3 = 1/6, kbar/d = 1/2 -> 1 - (1/6)/(1/4) = 1/3; Jaccard 1/2."""
    Z = np.array([[1, 0, 0], [1, 1, 0]], dtype=bool)
    assert nogueira_index(Z).value == pytest.approx(1 / 3)
    assert jaccard_index(Z) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="one size"):
        kuncheva_index(Z)


def test_fixed_size_nogueira_equals_pairwise_kuncheva():
    rng = np.random.default_rng(0)
    for _ in range(5):
        Z = np.zeros((9, 30), dtype=bool)
        for row in Z:
            row[rng.choice(30, 7, replace=False)] = True
        pairs = [
            ((Z[i] & Z[j]).sum() * 30 - 49) / (7 * 23) for i, j in combinations(range(9), 2)
        ]
        assert nogueira_index(Z).value == pytest.approx(np.mean(pairs), abs=1e-12)
        assert kuncheva_index(Z) == pytest.approx(np.mean(pairs), abs=1e-12)


def test_random_supports_of_fixed_size_score_about_zero():
    """Random k-subsets: E[Phi_hat] = 0; the mean over 400 families lies within 4 SE of 0."""
    rng = np.random.default_rng(1)
    values = []
    for _ in range(400):
        Z = np.zeros((10, 40), dtype=bool)
        for row in Z:
            row[rng.choice(40, 8, replace=False)] = True
        values.append(nogueira_index(Z).value)
    values = np.asarray(values)
    se = values.std(ddof=1) / np.sqrt(values.size)
    assert abs(values.mean()) < 4 * se, (values.mean(), se)


def test_confidence_interval_covers_the_population_value():
    """Supports with independent Bernoulli(p_f) entries: population Phi = 1 - mean_f p_f(1-p_f)
    / (kbar/d (1 - kbar/d)), kbar = sum p_f. 300 simulated families of M = 100: the 95%
    interval covers Phi in >= 90% of them, and the mean estimated variance matches the
    variance of Phi_hat over the simulations within 25%."""
    rng = np.random.default_rng(2)
    d = 40
    p = np.r_[np.full(5, 0.9), np.full(5, 0.5), np.full(30, 0.05)]
    kbar = p.sum()
    phi = 1 - np.mean(p * (1 - p)) / ((kbar / d) * (1 - kbar / d))
    hits, values, variances = 0, [], []
    for _ in range(300):
        Z = rng.random((100, d)) < p
        est = nogueira_index(Z)
        hits += est.ci_low <= phi <= est.ci_high
        values.append(est.value)
        variances.append(est.variance)
    coverage = hits / 300
    assert coverage >= 0.90, coverage
    ratio = np.mean(variances) / np.var(values, ddof=1)
    assert 0.75 < ratio < 1.25, ratio


def test_confidence_level_and_std_error():
    rng = np.random.default_rng(4)
    Z = rng.random((30, 12)) < 0.4
    e95 = nogueira_index(Z)
    e80 = nogueira_index(Z, confidence=0.8)
    assert e80.value == e95.value
    assert e80.ci_high - e80.ci_low < e95.ci_high - e95.ci_low
    assert e95.ci_high - e95.value == pytest.approx(1.959963984540054 * e95.std_error)


@pytest.mark.parametrize(
    ("call", "pattern"),
    [
        (lambda: nogueira_index(np.ones((1, 4), dtype=bool)), "at least 2 supports"),
        (lambda: nogueira_index(np.zeros((3, 4), dtype=bool)), "undefined"),
        (lambda: nogueira_index(np.ones((3, 4), dtype=bool)), "undefined"),
        (lambda: nogueira_index([[0, 1]]), "needs n_features"),
        (lambda: nogueira_index([[0, 9], [1]], n_features=4), "outside"),
        (lambda: nogueira_index(np.full((2, 3), 2)), "boolean or 0/1"),
        (lambda: nogueira_index(np.eye(3, dtype=bool), confidence=1.0), "confidence"),
        (lambda: kuncheva_index(np.ones((3, 4), dtype=bool)), "undefined"),
        (lambda: jaccard_index([]), "empty"),
    ],
)
def test_clear_errors(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()
