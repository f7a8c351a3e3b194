"""Kernel identities: ranking (property-based) and per-class moments (brute force)."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sparsefs._kernels.ranking import rank_scores, top_k_mask
from sparsefs._kernels.stats import class_moments

scores_strategy = arrays(
    np.float64,
    st.integers(1, 40),
    elements=st.one_of(st.floats(-5, 5), st.sampled_from([0.0, 1.0, np.inf, -np.inf])),
)


@given(scores_strategy)
def test_rank_scores_is_a_consistent_permutation(scores):
    ranking = rank_scores(scores)
    p = scores.shape[0]
    assert sorted(ranking.tolist()) == list(range(1, p + 1))
    for i in range(p):
        for j in range(i + 1, p):
            if scores[i] >= scores[j]:  # equal scores: the lower index ranks first
                assert ranking[i] < ranking[j]
            else:
                assert ranking[i] > ranking[j]


@given(scores_strategy, st.integers(0, 40))
def test_top_k_mask_has_k_best(scores, k):
    k = min(k, scores.shape[0])
    mask = top_k_mask(scores, k)
    assert mask.sum() == k
    if 0 < k < scores.shape[0]:
        assert scores[mask].min() >= scores[~mask].max()


def _stable_ranking(scores):
    ranking = np.empty(scores.shape[0], dtype=np.int64)
    ranking[np.argsort(-scores, kind="stable")] = np.arange(1, scores.shape[0] + 1)
    return ranking


def test_rank_scores_packed_sort_equals_stable_sort():
    """The packed-key sort (and its fallback on near-ties) equals the stable argsort: large p,
    exact ties, +-0, +-inf, subnormals, and distinct scores that differ only in the low bits
    dropped by the packing (which must take the fallback)."""
    rng = np.random.default_rng(0)
    tiny = np.finfo(np.float64).eps
    cases = [
        rng.normal(size=20000),
        np.where(rng.random(20000) < 0.9, 0.0, rng.random(20000)),  # many exact ties
        rng.choice([0.0, -0.0, np.inf, -np.inf, 5e-324, -5e-324, 1.0], size=3000),
        1.0 + rng.integers(-8, 8, size=5000) * tiny,  # near-ties: the fallback
        np.exp(rng.normal(size=5000) * 100) * rng.choice([-1.0, 1.0], size=5000),
        np.array([1.0, np.nextafter(1.0, 2.0), 1.0, np.nextafter(1.0, 0.0)]),
    ]
    for scores in cases:
        np.testing.assert_array_equal(rank_scores(scores), _stable_ranking(scores))


def test_rank_scores_rejects_nan():
    import pytest

    with pytest.raises(ValueError, match="NaN"):
        rank_scores(np.array([1.0, np.nan]))


def test_class_moments_brute_force_dense_and_sparse():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 7)) + 10
    X[rng.random(X.shape) < 0.5] = 0
    y = rng.integers(0, 3, size=50)
    for Xin in (X, np.asfortranarray(X), X.astype(np.float32), sp.csr_array(X)):
        mom = class_moments(Xin, y, 3)
        Xd = np.asarray(X, dtype=np.float64)
        for c in range(3):
            np.testing.assert_allclose(mom.means[c], Xd[y == c].mean(axis=0), rtol=1e-6)
            assert mom.counts[c] == (y == c).sum()
        within = sum(((Xd[y == c] - Xd[y == c].mean(0)) ** 2).sum(0) for c in range(3))
        between = sum((y == c).sum() * (Xd[y == c].mean(0) - Xd.mean(0)) ** 2 for c in range(3))
        np.testing.assert_allclose(mom.within_ss, within, rtol=1e-5)
        np.testing.assert_allclose(mom.between_ss, between, rtol=1e-5)


def test_class_moments_blocks_match_one_pass(monkeypatch):
    import sparsefs._kernels.stats as stats

    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(101, 13)), rng.integers(0, 4, size=101)
    full = class_moments(X, y, 4)
    monkeypatch.setattr(stats, "_BLOCK_ELEMENTS", 13 * 7)  # 7-row blocks, ragged last block
    blocked = class_moments(X, y, 4)
    np.testing.assert_allclose(blocked.within_ss, full.within_ss, rtol=1e-12)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_class_moments_threads_and_formats_match_brute_force(monkeypatch, fmt):
    """CSR (row chunks) and CSC (column chunks, read in place) on one or several threads give
    the brute-force moments (per-class numpy on the dense copy)."""
    import sparsefs._kernels.stats as stats

    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 30)) * (rng.random((200, 30)) < 0.3)
    y = rng.integers(0, 3, size=200)
    means = np.stack([X[y == c].mean(0) for c in range(3)])
    within = sum(((X[y == c] - means[c]) ** 2).sum(0) for c in range(3))
    Xs = sp.csr_array(X) if fmt == "csr" else sp.csc_array(X)
    for block in (1 << 20, 50):  # one thread; several (when the machine has them)
        monkeypatch.setattr(stats, "_BLOCK_ELEMENTS", block)
        mom = class_moments(Xs, y, 3)
        np.testing.assert_allclose(mom.means, means, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(mom.within_ss, within, rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_class_moments_of_fortran_x_equal_those_of_c_x_bit_for_bit(dtype):
    """Reference: the C-ordered pass. Fortran-ordered X (pandas' to_numpy, column stacks) is
    read column by column without a copy, with the same arithmetic per column; a strided
    view (neither order) goes through a copy. Threads on (2**21 entries)."""
    from sparsefs._kernels.stats import class_moments

    rng = np.random.default_rng(7)
    X = (rng.normal(size=(700, 3000)) * 10.0 ** rng.integers(-3, 4, 3000)).astype(dtype)
    y = rng.integers(0, 4, 700)
    ref = class_moments(np.ascontiguousarray(X), y, 4)
    wide = np.zeros((X.shape[0], 2 * X.shape[1]), dtype=dtype)
    wide[:, ::2] = X
    for other in (np.asfortranarray(X), wide[:, ::2]):
        got = class_moments(other, y, 4)
        for name in ("counts", "means", "grand_mean", "within_ss", "between_ss"):
            np.testing.assert_array_equal(getattr(got, name), getattr(ref, name))


def test_is_top_set_against_the_sorted_prefix():
    """Reference: the set of the first ``s`` indices of a stable argsort of the negated scores,
    for every prefix size, on scores with ties; a support with a hole is not a top set."""
    from sparsefs._kernels.ranking import is_top_set

    scores = np.array([0.5, 2.0, 2.0, -1.0, 0.5, 3.0])
    ranking = rank_scores(scores)
    order = np.argsort(-scores, kind="stable")
    for size in range(scores.size + 1):
        support = np.zeros(scores.size, dtype=bool)
        support[order[:size]] = True
        assert is_top_set(ranking, support)
    hole = np.zeros(scores.size, dtype=bool)
    hole[[5, 2]] = True  # 5 and the second of the tied 2.0s: 1 (lower index) comes first
    assert not is_top_set(ranking, hole)
