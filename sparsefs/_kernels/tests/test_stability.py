"""Stability-selection kernels: resampling schemes, path frequencies and the error bounds.

Independent references: brute-force loops and set arithmetic for the resamples and the path;
the closed forms of Meinshausen & Bühlmann (2010, Theorem 1) and Shah & Samworth (2013,
Theorem 2) evaluated by hand for the bounds; the exact binomial tail of a random-guessing
selector, which both bounds must dominate.
"""

import math

import numpy as np
import pytest

from sparsefs._kernels import stability as k


@pytest.mark.parametrize("y", [None, np.repeat([0, 1, 2], [7, 10, 4])])
@pytest.mark.parametrize("n_extra", [0, 1])
def test_complementary_pairs_are_disjoint_halves_and_stratified(y, n_extra):
    """Set arithmetic: each pair is two disjoint sets of floor(n/2) distinct rows; per class
    each half holds floor(n_c/2) or ceil(n_c/2) rows."""
    if y is not None and n_extra:
        y = np.append(y, 1)
    n = 21 + n_extra if y is None else y.shape[0]
    rng = np.random.RandomState(0)
    A = k.complementary_pairs(n, 6, rng, y)
    assert A.shape == (12, n // 2)
    for b in range(6):
        first, second = set(A[2 * b]), set(A[2 * b + 1])
        assert len(first) == len(second) == n // 2
        assert not first & second
        assert first | second <= set(range(n))
        if y is not None:
            for c in np.unique(y):
                n_c = int((y == c).sum())
                for half in (A[2 * b], A[2 * b + 1]):
                    assert (y[half] == c).sum() in (n_c // 2, (n_c + 1) // 2)
    again = k.complementary_pairs(n, 6, np.random.RandomState(0), y)
    np.testing.assert_array_equal(A, again)
    # different pairs differ
    assert not np.array_equal(A[0], A[2])


def test_subsamples_size_distinct_and_proportional():
    """Brute force: distinct rows, the requested size, class shares within one row of n_c f."""
    y = np.repeat([0, 1], [30, 12])
    S = k.subsamples(42, 20, 25, np.random.RandomState(1), y)
    assert S.shape == (20, 25)
    for row in S:
        assert len(set(row)) == 25
        for c, n_c in ((0, 30), (1, 12)):
            assert abs((y[row] == c).sum() - 25 * n_c / 42) < 1
    S2 = k.subsamples(10, 5, 10, np.random.RandomState(0))
    assert all(sorted(r) == list(range(10)) for r in S2)


def test_rank_path_frequencies_equal_brute_force():
    """A loop over resamples and counts: frequency of rank <= k."""
    rng = np.random.default_rng(3)
    R = np.vstack([rng.permutation(9) + 1 for _ in range(13)])
    ks = np.array([1, 2, 5, 9])
    got = k.rank_path_frequencies(R, ks)
    want = np.array([[np.mean(R[:, j] <= kk) for kk in ks] for j in range(9)])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(got[:, -1], 1.0)
    np.testing.assert_allclose(got.sum(axis=0), ks)


def test_worst_case_bound_closed_form():
    """E[V] <= q^2 / ((2 tau - 1) p) by hand; infinite at tau <= 1/2."""
    assert k.worst_case_pfer_bound(20, 1000, 0.7) == pytest.approx(400 / (0.4 * 1000))
    assert k.worst_case_pfer_bound(5, 100, 0.5) == math.inf
    # tau rounded up to the grid j/M: 0.61 with M = 50 selects as 0.62 does
    assert k.pfer_bound(20, 1000, 0.61, 50) == pytest.approx(400 / (0.24 * 1000))


def test_unimodal_constant_closed_form():
    """Shah & Samworth, Theorem 2, by hand at B = 50 (tau on the grid j / 100)."""
    b, theta = 50, 0.02
    assert k.cpss_unimodal_constant(0.6, b, theta) == pytest.approx(1 / (2 * (0.2 - 0.01)))
    assert k.cpss_unimodal_constant(0.75, b, theta) == pytest.approx(1 / (2 * (0.5 - 0.01)))
    assert k.cpss_unimodal_constant(0.9, b, theta) == pytest.approx(4 * 0.11 / 1.02)
    assert k.cpss_unimodal_constant(1.0, b, theta) == pytest.approx(2 / (b + 1))
    # outside the theorem: off the grid, below 1/2 + 1/B, theta > 1/sqrt(3), below the lower end
    assert k.cpss_unimodal_constant(0.605, b, theta) == math.inf
    assert k.cpss_unimodal_constant(0.51, b, theta) == math.inf
    assert k.cpss_unimodal_constant(0.9, b, 0.6) == math.inf
    assert k.cpss_unimodal_constant(0.52, b, 0.3) == math.inf  # lower end min(0.59, 0.5775)
    # never weaker than the worst case wherever it applies
    for j in range(52, 101):
        tau = j / 100
        c = k.cpss_unimodal_constant(tau, b, theta)
        assert c <= 1 / (2 * tau - 1) + 1e-12


@pytest.mark.parametrize("unimodal", [False, True])
def test_threshold_for_pfer_is_smallest_grid_value_meeting_the_target(unimodal):
    """Brute force over the grid j / M."""
    q, p, m = 18.0, 900, 60
    for pfer in (0.5, 1.0, 3.0):
        tau, bound = k.threshold_for_pfer(q, p, pfer, m, unimodal=unimodal)
        ok = [j / m for j in range(m + 1)
              if k.pfer_bound(q, p, j / m, m, unimodal=unimodal) <= pfer * (1 + 1e-12)]
        assert tau == pytest.approx(min(ok))
        assert bound <= pfer * (1 + 1e-12)
    tau, bound = k.threshold_for_pfer(200.0, 300, 1.0, m, unimodal=unimodal)
    assert tau == 1.0 and bound > 1.0


def test_count_path_grid():
    np.testing.assert_array_equal(k.count_path_grid(7), np.arange(1, 8))
    g = k.count_path_grid(20000)
    assert g[0] == 1 and g[-1] == 20000 and g.size <= 50 and np.all(np.diff(g) > 0)


@pytest.mark.parametrize(("q", "p", "b"), [(5, 20, 5), (10, 50, 25), (2, 40, 50), (30, 100, 10)])
def test_bounds_hold_for_a_random_guessing_selector(q, p, b):
    """Exact reference: a selector that keeps q of p features uniformly at random, independently
    on each half, gives every feature selection probability theta = q/p and a CPSS frequency
    ~ Binomial(2B, theta) / (2B) (unimodal). Its E[V] = p P(Bin >= 2B tau) must not exceed
    either bound at any grid threshold."""
    from scipy.stats import binom

    m = 2 * b
    for j in range(b + 1, m + 1):
        tau = j / m
        exact = p * binom.sf(j - 1, m, q / p)
        assert exact <= k.pfer_bound(q, p, tau, m) + 1e-12
        assert exact <= k.pfer_bound(q, p, tau, m, unimodal=True) + 1e-12
