"""Kernels of the sparse l1 / l2 center classifiers against independent references.

References: exact rational arithmetic (``fractions.Fraction``) over every candidate value for
the weighted median (brute force of its definition, spec 1.6); ``np.median`` and explicit
per-class loops for medians, means and dispersions (definitions, eqs. 17-19); the sort-based
numpy kernel for the compiled one; dense results for sparse input.
"""

from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from sparsefs._kernels import sparse_centers as K


def _brute_weighted_median(values, weights):
    """Midpoint of the minimiser set of sum w|v - t|, in exact arithmetic over all data values.

    The cost is convex piecewise linear with kinks at the data values, so its minimisers form
    an interval whose ends are data values: evaluate at every value, keep the minimisers.
    """
    v = [Fraction(float(x)) for x in values]
    w = [Fraction(int(x)) if isinstance(x, int | np.integer) else Fraction(float(x))
         for x in weights]
    cost = {t: sum(wj * abs(vj - t) for vj, wj in zip(v, w)) for t in set(v)}
    best = min(cost.values())
    minimisers = [t for t, c in cost.items() if c == best]
    return float((min(minimisers) + max(minimisers)) / 2)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-4, 4), st.integers(1, 6)), min_size=1, max_size=12
    )
)
def test_weighted_median_matches_brute_force_integer_weights(pairs):
    """Compiled and numpy weighted medians = exact brute force (many ties and intervals)."""
    values = np.array([p[0] for p in pairs], dtype=float)
    weights = np.array([p[1] for p in pairs], dtype=np.int64)
    expected = _brute_weighted_median(values, weights)
    assert K.weighted_median(values, weights) == expected
    assert K.weighted_median_numpy(values, weights) == expected


def test_weighted_median_float_weights_and_unit_weights():
    """Float weights: brute force; unit weights: ``np.median`` (midpoint for even sizes)."""
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 8, 9, 30):
        v = rng.normal(size=n)
        w = rng.uniform(0.1, 3.0, size=n)
        assert K.weighted_median(v, w) == pytest.approx(_brute_weighted_median(v, w), abs=1e-15)
        assert K.weighted_median(v, np.ones(n, dtype=np.int64)) == np.median(v)
        assert K.weighted_median_numpy(v, np.ones(n)) == np.median(v)
    # a tie at exactly half the weight: the minimisers are [1, 5], midpoint 3
    assert K.weighted_median([5.0, 1.0, 9.0, 0.0], [2, 2, 1, 1]) == 3.0
    with pytest.raises(ValueError, match="weights"):
        K.weighted_median([1.0, 2.0], [1, 0])
    with pytest.raises(ValueError, match="equal length"):
        K.weighted_median([1.0, 2.0], [1])


def _reference_l1(X, y, n_classes, balanced, weighted_median=_brute_weighted_median):
    """Per-class medians, shared weighted median and gains from their definitions."""
    counts = np.bincount(y, minlength=n_classes)
    a = 1.0 / counts if balanced else np.ones(n_classes)
    med = np.array([np.median(X[y == c], axis=0) for c in range(n_classes)])
    wint = K._integer_weights(counts, balanced)[0][y]
    shared = np.array([weighted_median(X[:, i], wint) for i in range(X.shape[1])])
    d_class = np.array([a[c] * np.abs(X[y == c] - med[c]).sum(0) for c in range(n_classes)])
    d_shared = sum(a[c] * np.abs(X[y == c] - shared).sum(0) for c in range(n_classes))
    return med, shared, d_shared - d_class.sum(0)


def _problem(rng, n_classes, n, p, discrete):
    y = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n - n_classes)])
    rng.shuffle(y)
    X = rng.integers(-2, 3, size=(n, p)).astype(float) if discrete else rng.normal(size=(n, p))
    return X, y


@pytest.fixture(params=["networks", "sorted runs", "partitioned runs"])
def layout(request, monkeypatch):
    """Every path of the l1 kernel: sorting networks on row-major tiles (small classes), or
    the transposed blocks with each class sorted or partitioned (larger classes)."""
    if request.param != "networks":
        monkeypatch.setattr(K, "_NETWORK_MAX_CLASS_SIZE", 0)
    if request.param == "partitioned runs":
        monkeypatch.setattr(K, "_SORT_MAX_CLASS_SIZE", 0)
    return request.param


@pytest.mark.parametrize("balanced", [True, False])
@pytest.mark.parametrize("discrete", [True, False])
def test_l1_centers_match_definitions(balanced, discrete, layout):
    """Class medians = ``np.median``; shared = exact weighted median; gain = d - sum_c d^c."""
    rng = np.random.default_rng(1 + balanced + 2 * discrete)
    for trial in range(12):
        n_classes = 2 + trial % 3
        X, y = _problem(rng, n_classes, int(rng.integers(n_classes, 25)), 7, discrete)
        stats = K.l1_centers(X, y, n_classes, balanced=balanced, width=3)
        med, shared, gains = _reference_l1(X, y, n_classes, balanced)
        np.testing.assert_array_equal(stats.class_centers, med)
        np.testing.assert_array_equal(stats.shared_center, shared)
        np.testing.assert_allclose(stats.gains, np.maximum(gains, 0), rtol=1e-12, atol=1e-12)
        assert np.all(stats.gains >= 0) and stats.finite


def test_l1_gain_is_exactly_zero_when_classes_share_a_median():
    """Spec 1.8.1: e_i = 0 exactly when the classes admit a common median; constants give 0."""
    X = np.array([[1.0, 7.0, 0.0], [2.0, 7.0, 0.0], [3.0, 7.0, 5.0], [2.0, 7.0, 1.0],
                  [0.0, 7.0, 6.0], [9.0, 7.0, 7.0]])
    y = np.array([0, 0, 0, 1, 1, 1])
    gains = K.l1_centers(X, y, 2).gains
    assert gains[0] == 0.0 and gains[1] == 0.0 and gains[2] > 0


@pytest.mark.parametrize("n_threads,width", [(1, 1), (2, 3), (3, 5), (2, None)])
def test_l1_numba_equals_numpy_engine_blocks_and_threads(n_threads, width, layout):
    """The compiled kernel equals the sort-based numpy one, whatever the blocks and threads."""
    rng = np.random.default_rng(5)
    X, y = _problem(rng, 3, 40, 23, discrete=True)
    X[:, ::2] += rng.normal(size=(40, 12))
    ref = K.l1_centers(X, y, 3, engine="numpy", width=7)
    got = K.l1_centers(X, y, 3, engine="numba", n_threads=n_threads, width=width)
    np.testing.assert_array_equal(got.class_centers, ref.class_centers)
    np.testing.assert_array_equal(got.shared_center, ref.shared_center)
    np.testing.assert_allclose(got.gains, ref.gains, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_l1_wide_and_tiled_gathers_agree(dtype):
    """Blocks of at least _WIDE_GATHER_MIN columns use the two-pass gather (row copy, then an
    in-cache transpose), narrower ones the tiled gather: the same transposed block, so the same
    statistics bit for bit; and both equal the numpy engine's fancy-indexed gather."""
    rng = np.random.default_rng(11)
    X, y = _problem(rng, 3, 30, 700, discrete=False)
    X = X.astype(dtype)
    order = np.argsort(y, kind="stable")
    out = np.empty((K._WIDE_GATHER_MIN + 3, 30))
    K._gather_transposed_wide(X, order, 5, np.empty((30, out.shape[0])), out)
    np.testing.assert_array_equal(out, X[order, 5 : 5 + out.shape[0]].T.astype(np.float64))
    wide = K.l1_centers(X, y, 3, width=K._WIDE_GATHER_MIN + 1)
    tiled = K.l1_centers(X, y, 3, width=K._WIDE_GATHER_MIN - 1)
    ref = K.l1_centers(X, y, 3, engine="numpy", width=K._WIDE_GATHER_MIN + 1)
    for got in (wide, tiled):
        np.testing.assert_array_equal(got.class_centers, ref.class_centers)
        np.testing.assert_array_equal(got.shared_center, ref.shared_center)
    np.testing.assert_array_equal(wide.gains, tiled.gains)


def test_l1_large_classes_use_partition_and_match_np_median():
    """Classes above the sort threshold are partitioned; results still match the definitions
    (weighted median: the exact sort-based version, itself checked by brute force)."""
    rng = np.random.default_rng(9)
    y = np.repeat([0, 1], [K._SORT_MAX_CLASS_SIZE + 41, K._SORT_MAX_CLASS_SIZE + 2])
    X = rng.integers(-3, 4, size=(y.size, 4)).astype(float)
    X[:, 1] += rng.normal(size=y.size)
    stats = K.l1_centers(X, y, 2)
    # exact sort-based reference (checked against the rational brute force above)
    med, shared, gains = _reference_l1(X, y, 2, True, K.weighted_median_numpy)
    np.testing.assert_array_equal(stats.class_centers, med)
    np.testing.assert_array_equal(stats.shared_center, shared)
    np.testing.assert_allclose(stats.gains, np.maximum(gains, 0), rtol=1e-10, atol=1e-12)


def test_l1_sparse_equals_dense_and_counts_implicit_zeros():
    """CSR and CSC give the dense result; implicit zeros take part in the medians."""
    rng = np.random.default_rng(2)
    X = rng.exponential(size=(31, 40)) * (rng.random((31, 40)) < 0.3)
    y = rng.integers(0, 3, 31)
    dense = K.l1_centers(X, y, 3, width=9)
    for fmt in (sp.csr_array, sp.csc_matrix):
        got = K.l1_centers(fmt(X), y, 3, width=9)
        np.testing.assert_array_equal(got.class_centers, dense.class_centers)
        np.testing.assert_array_equal(got.shared_center, dense.shared_center)
        np.testing.assert_array_equal(got.gains, dense.gains)
    assert (dense.class_centers == 0).mean() > 0.5  # mostly-zero columns have median 0


def test_l1_float32_and_non_finite():
    """float32 input gives the float64 result of the same values; NaN/inf flag non-finite."""
    rng = np.random.default_rng(3)
    X, y = _problem(rng, 2, 20, 6, discrete=False)
    X32 = X.astype(np.float32)
    a = K.l1_centers(X32, y, 2)
    b = K.l1_centers(X32.astype(np.float64), y, 2)
    np.testing.assert_array_equal(a.gains, b.gains)
    for bad in (np.nan, np.inf, -np.inf):
        Xb = X.copy()
        Xb[4, 2] = bad
        assert not K.l1_centers(Xb, y, 2).finite
        assert not K.l1_centers(Xb, y, 2, engine="numpy").finite


@pytest.mark.parametrize("balanced", [True, False])
def test_l2_centers_match_definitions_dense_and_sparse(balanced):
    """Means by loops; shared = mean of class means (balanced) or overall mean; gains."""
    rng = np.random.default_rng(4)
    n_classes = 4
    X, y = _problem(rng, n_classes, 30, 9, discrete=False)
    counts = np.bincount(y)
    means = np.array([X[y == c].mean(0) for c in range(n_classes)])
    if balanced:
        shared = means.mean(0)
        gains = ((means - shared) ** 2).sum(0)
    else:
        shared = X.mean(0)
        gains = (counts[:, None] * (means - shared) ** 2).sum(0)
    for Xv in (X, sp.csr_array(X), sp.csc_matrix(X), X.astype(np.float32)):
        stats = K.l2_centers(Xv, y, n_classes, balanced=balanced)
        tol = 1e-6 if getattr(Xv, "dtype", None) == np.float32 else 1e-12
        np.testing.assert_allclose(stats.class_centers, means, rtol=tol, atol=tol)
        np.testing.assert_allclose(stats.shared_center, shared, rtol=tol, atol=tol)
        np.testing.assert_allclose(stats.gains, gains, rtol=max(tol, 1e-10), atol=tol)


def test_class_sums_all_layouts():
    """C and Fortran order, CSR, float32: the per-class loop's sums, with many classes."""
    rng = np.random.default_rng(6)
    n_classes = 35
    y = np.arange(80) % n_classes
    X = rng.normal(size=(80, 1300))
    sums = np.array([X[y == c].sum(0) for c in range(n_classes)])
    for Xv in (X, np.asfortranarray(X), sp.csr_array(X)):
        np.testing.assert_allclose(K.class_sums(Xv, y, n_classes), sums, rtol=1e-12,
                                   atol=1e-12)
    X32 = X.astype(np.float32)
    sums32 = np.array([X32[y == c].astype(np.float64).sum(0) for c in range(n_classes)])
    np.testing.assert_allclose(K.class_sums(X32, y, n_classes), sums32, rtol=1e-12,
                               atol=1e-12)


def test_two_class_gains_are_the_papers_statistics():
    """Two classes: l2 gain = delta^2 / 2; l1 gain = -e, e = (d+ + d-) - d (eqs. 17-19)."""
    rng = np.random.default_rng(7)
    X, y = _problem(rng, 2, 17, 8, discrete=False)
    delta = X[y == 1].mean(0) - X[y == 0].mean(0)
    np.testing.assert_allclose(K.l2_centers(X, y, 2).gains, delta**2 / 2, rtol=1e-12)
    n_pos, n_neg = (y == 1).sum(), (y == 0).sum()
    mu_pos, mu_neg = np.median(X[y == 1], 0), np.median(X[y == 0], 0)
    d_pos = np.abs(X[y == 1] - mu_pos).mean(0)
    d_neg = np.abs(X[y == 0] - mu_neg).mean(0)
    weights = np.where(y == 1, n_neg, n_pos)  # proportional to 1/n+ and 1/n-
    mu = np.array([_brute_weighted_median(X[:, i], weights) for i in range(8)])
    d = (np.abs(X - mu) / np.where(y == 1, n_pos, n_neg)[:, None]).sum(0)
    e = (d_pos + d_neg) - d
    assert np.all(e <= 1e-12)
    np.testing.assert_allclose(K.l1_centers(X, y, 2).gains, -e, rtol=1e-10, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([0.0, -0.0, 1.0, 2.5, -3.0, np.inf, -np.inf, 1e-300]),
                min_size=1, max_size=30) | st.lists(st.floats(-1e6, 1e6), min_size=1,
                                                     max_size=30, unique=True))
def test_rank_fast_equals_stable_sort(scores):
    """The ranking (``rank_fast``, an alias of the contract's ``rank_scores``) equals the
    stable sort of the negated scores, with and without ties."""
    scores = np.array(scores)
    expected = np.empty(scores.size, dtype=np.int64)
    expected[np.argsort(-scores, kind="stable")] = np.arange(1, scores.size + 1)
    np.testing.assert_array_equal(K.rank_fast(scores), expected)


def test_select_top_k_breaks_ties_by_lower_index():
    gains = np.array([0.0, 2.0, 1.0, 2.0, 0.0, 1.0])
    assert np.flatnonzero(K.select_top_k(gains, 3)).tolist() == [1, 2, 3]
    assert np.flatnonzero(K.select_top_k(gains, 5)).tolist() == [0, 1, 2, 3, 5]


def test_block_width_is_odd_and_balances_threads():
    for n, p, t in [(200, 20000, 2), (20000, 2000, 2), (10, 7, 1), (5, 1, 4), (100, 64, 1)]:
        w = K.block_width(n, p, t)
        assert 1 <= w <= p and (w % 2 == 1 or w == 1)
    assert K.block_width(200, 20000, 2) <= 20000 // 8 + 1


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_center_scores_are_distance_differences_and_sparse_equals_dense(norm):
    """s_c = dist(x, shared) - dist(x, theta^c) on the features (l2); -dist (l1); additive."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(25, 10)) * (rng.random((25, 10)) < 0.5)
    theta = rng.normal(size=(3, 10))
    shared = rng.normal(size=10)
    feats = np.array([7, 1, 4])
    if norm == "l2":
        expected = np.stack(
            [((X[:, feats] - shared[feats]) ** 2 - (X[:, feats] - theta[c, feats]) ** 2).sum(1)
             for c in range(3)], axis=1)
    else:
        expected = np.stack([-np.abs(X[:, feats] - theta[c, feats]).sum(1) for c in range(3)],
                            axis=1)
    for Xv in (X, sp.csr_array(X), sp.csc_matrix(X)):
        got = K.center_scores(Xv, feats, theta, shared, norm)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    parts = K.center_scores(X, feats[:1], theta, shared, norm) + K.center_scores(
        X, feats[1:], theta, shared, norm
    )
    np.testing.assert_allclose(parts, expected, rtol=1e-12, atol=1e-12)
    assert np.all(K.center_scores(X, feats[:0], theta, shared, norm) == 0)
    with pytest.raises(ValueError, match="norm="):
        K.center_scores(X, feats, theta, shared, "l3")


def test_engine_is_checked():
    with pytest.raises(ValueError, match="engine="):
        K.l1_centers(np.zeros((4, 2)), np.array([0, 0, 1, 1]), 2, engine="cuda")


@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_run_blocks_runs_each_block_once_and_raises(n_threads):
    """The shared block queue: every block exactly once (caller + pool threads); an
    exception in a block is raised after the other threads stopped."""
    seen = []
    K._run_blocks(lambda a, b: seen.append((a, b)), [(i, i + 1) for i in range(17)], n_threads)
    assert sorted(seen) == [(i, i + 1) for i in range(17)]

    def fail(a, b):
        if a == 3:
            raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        K._run_blocks(fail, [(i, i + 1) for i in range(8)], n_threads)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_class_sums_dense_kernel_equals_sparse_product(dtype, n_threads, monkeypatch):
    """The compiled tiled class sums (forced onto several blocks) equal the sparse-indicator
    product exactly (same order of additions per column), for float64 and float32 X."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(37, 1500)).astype(dtype)
    y = rng.integers(0, 4, 37)
    monkeypatch.setattr(K, "_SUM_THREADED_MIN", 0)
    got = K.class_sums(X, y, 4, n_threads)
    ref = K.class_sums(np.asfortranarray(X), y, 4)  # F-order: the sparse-product path
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("norm", ["l2", "l1"])
@pytest.mark.parametrize("k", [-990, -100, 0, 100, 990])
def test_power_of_two_units_make_gains_and_scores_exactly_scale_free(norm, k):
    """X * 2**k (an exact scaling): gains in units of ``unit`` and the decision scores are the
    scale-1 values times an exact power of two, so the ranking and every argmax are equal.
    Reference: the same kernel at scale 1 (division by a power of two is exact)."""
    rng = np.random.default_rng(3)
    y = np.arange(40) % 3
    X = rng.normal(size=(40, 6))
    X[:, 1] += 2.0 * y
    fit = K.l2_centers if norm == "l2" else K.l1_centers
    ref = fit(X, y, 3)
    Xk = X * 2.0**k
    got = fit(Xk, y, 3)
    assert ref.unit == 1.0 and got.finite
    e = np.frexp(max(np.abs(ref.class_centers).max(), np.abs(ref.shared_center).max()))[1]
    assert got.unit == (1.0 if -100 <= k + e - 1 < 100 else 2.0 ** (k + e))
    power = 2 if norm == "l2" else 1
    factor = (2.0**k / got.unit) ** power
    np.testing.assert_array_equal(got.gains, ref.gains * factor)
    feats = np.arange(6)
    s_ref = K.center_scores(X, feats, ref.class_centers, ref.shared_center, norm)
    s_got = K.center_scores(Xk, feats, got.class_centers, got.shared_center, norm,
                            unit=got.unit)
    np.testing.assert_allclose(s_got, s_ref * factor, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(np.argmax(s_got, axis=1), np.argmax(s_ref, axis=1))
    sparse = K.center_scores(sp.csr_array(Xk), feats, got.class_centers, got.shared_center,
                             norm, unit=got.unit)
    np.testing.assert_allclose(sparse, s_got, rtol=1e-12, atol=1e-12)


def test_center_unit_is_one_in_the_ordinary_range_and_a_power_of_two_outside():
    """Definition of :func:`center_unit` (the paper's decision values are kept for ordinary
    data; an exact power of two elsewhere)."""
    assert K.center_unit(np.array([0.0])) == 1.0
    assert K.center_unit(np.array([3.0, -1e20])) == 1.0
    assert K.center_unit(np.array([np.inf, 2.0])) == 1.0  # non-finite values ignored
    u = K.center_unit(np.array([-3e300]))
    assert np.log2(u) == round(np.log2(u)) and 0.5 <= 3e300 / u < 1.0
    u = K.center_unit(np.array([5e-300]))
    assert 0.5 <= 5e-300 / u < 1.0


# --------------------------------------------------------------------------------------------
# The sorting-network path of the l1 kernel (small classes) against the transposed one
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", list(range(1, 13)))
def test_merge_exchange_network_sorts_every_zero_one_input(n):
    """Knuth's zero-one principle: a comparator network sorts every input iff it sorts every
    0/1 input; checked exhaustively for n <= 12 (4096 inputs), comparators in order."""
    pairs = K._merge_exchange_pairs(n)
    assert np.all(pairs[:, 0] < pairs[:, 1]) and (pairs.size == 0 or pairs.max() < n)
    bits = (np.arange(2**n)[:, None] >> np.arange(n)) & 1  # every 0/1 vector, one per row
    v = bits.T.copy()  # rows = positions, columns = inputs (the kernel's layout)
    for i, j in pairs:
        lo, hi = np.minimum(v[i], v[j]), np.maximum(v[i], v[j])
        v[i], v[j] = lo, hi
    np.testing.assert_array_equal(v.T, np.sort(bits, axis=1))


def test_merge_exchange_network_sizes_and_larger_inputs():
    """Batcher's comparator counts (Knuth 5.3.4: 19 for n = 8, 63 for 16, 543 for 64) and
    random inputs with ties up to the largest class size the path takes."""
    assert [len(K._merge_exchange_pairs(n)) for n in (1, 2, 8, 16, 64)] == [0, 1, 19, 63, 543]
    rng = np.random.default_rng(0)
    for n in (17, 33, 47, 67, K._NETWORK_MAX_CLASS_SIZE):
        v = rng.integers(-3, 4, size=(n, 50)).astype(float)
        ref = np.sort(v, axis=0)
        for i, j in K._merge_exchange_pairs(n):
            v[i], v[j] = np.minimum(v[i], v[j]), np.maximum(v[i], v[j])
        np.testing.assert_array_equal(v, ref)


def _both_l1_paths(X, y, n_classes, monkeypatch, **kw):
    """l1_centers by the network path and by the transposed (sorted-runs) path."""
    assert np.bincount(y).max() <= K._NETWORK_MAX_CLASS_SIZE
    net = K.l1_centers(X, y, n_classes, **kw)
    with monkeypatch.context() as m:
        m.setattr(K, "_NETWORK_MAX_CLASS_SIZE", 0)
        old = K.l1_centers(X, y, n_classes, **kw)
    return net, old


def _assert_same_stats(a, b, signed_zeros=False):
    """Equal values; equal signs of zero too unless X holds both 0.0 and -0.0 (equal keys:
    where a sort leaves them is unspecified, in numpy's sorts as in a network)."""
    assert a.finite == b.finite and a.unit == b.unit
    for name in ("class_centers", "shared_center", "gains", "spread", "counts"):
        u, v = getattr(a, name), getattr(b, name)
        np.testing.assert_array_equal(u, v, err_msg=name)
        if not signed_zeros:
            np.testing.assert_array_equal(np.signbit(u), np.signbit(v), err_msg=name)


@pytest.mark.parametrize("balanced", [True, False])
def test_l1_network_path_equals_transposed_path_bit_for_bit(balanced, monkeypatch):
    """Reference: the transposed path (each class sorted by numpy, itself checked against
    np.median and the brute-force weighted median above). Random designs with odd and even
    class sizes, 1-sample classes, ties (integer values), constant columns, 1-5 classes,
    any block width and thread count: centers, shared centers, gains, spreads, finiteness
    and unit are equal bit for bit (signs of zeros too, where X has no -0.0)."""
    rng = np.random.default_rng(21 + balanced)
    for trial in range(40):
        n_classes = 1 + trial % 5
        n = int(rng.integers(n_classes, 70))
        y = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n - n_classes)])
        rng.shuffle(y)
        p = int(rng.integers(1, 90))
        kind = trial % 4
        if kind == 0:
            X = rng.normal(size=(n, p))
        elif kind == 1:  # heavy ties
            X = rng.integers(-2, 3, size=(n, p)).astype(float)
        elif kind == 2:  # constant columns and signed zeros
            X = rng.normal(size=(n, p))
            X[:, ::3] = 1.5
            X[:, 1::4] = rng.choice([0.0, -0.0], size=(n, X[:, 1::4].shape[1]))
        else:  # one sample in class 0
            y[y == 0] = 1 % n_classes
            y[0] = 0
            X = rng.exponential(size=(n, p)) * (rng.random((n, p)) < 0.4)
        width = int(rng.integers(1, 140))
        net, old = _both_l1_paths(X, y, n_classes, monkeypatch, balanced=balanced,
                                  n_threads=1 + trial % 3, width=width)
        _assert_same_stats(net, old, signed_zeros=kind == 2)
        med = np.array([np.median(X[y == c], axis=0) for c in range(n_classes)])
        np.testing.assert_array_equal(net.class_centers, med)


def test_l1_network_path_float32_scales_and_non_finite(monkeypatch):
    """float32 input, extreme scales (the power-of-two unit) and NaN/inf (flagged) take the
    same values on both paths; F-ordered X (transposed path) equals C-ordered X."""
    rng = np.random.default_rng(8)
    y = rng.permutation(np.arange(45) % 3)
    X = rng.normal(size=(45, 70))
    for Xs in (X.astype(np.float32), X * 1e300, X * 1e-300):
        _assert_same_stats(*_both_l1_paths(Xs, y, 3, monkeypatch, width=33))
    # F-ordered X takes the transposed path: the same statistics as C-ordered X
    _assert_same_stats(K.l1_centers(np.asfortranarray(X), y, 3), K.l1_centers(X, y, 3))
    for bad in (np.nan, np.inf, -np.inf):
        Xb = X.copy()
        Xb[7, 5] = bad
        net, old = _both_l1_paths(Xb, y, 3, monkeypatch)
        assert not net.finite and not old.finite
