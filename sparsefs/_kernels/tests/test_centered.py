"""The shared implicitly centred sparse operator (``_kernels/centered.py``, issue #34).

Every check compares with numpy on the explicitly centred dense copy (the independent
reference), in both storage formats.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from sparsefs._kernels.centered import CenteredSparse, center_sparse, sparse_col_extrema
from sparsefs._kernels.kmeans import ImplicitRows


def _data(n=14, d=9, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(loc=1.0, size=(n, d)) * (rng.random((n, d)) < 0.4)
    X[:, 2] = 0.0   # all zero
    X[:, 3] = -1.5  # constant, no implicit zero
    return X


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_products_grams_and_rows_are_those_of_the_dense_centred_matrix(fmt):
    X = _data()
    m = np.random.default_rng(1).normal(size=X.shape[1])  # any offset, not only the means
    Z = CenteredSparse(sp.csr_array(X) if fmt == "csr" else sp.csc_array(X), m)
    D = X - m
    rng = np.random.default_rng(2)
    V, R = rng.normal(size=(9, 3)), rng.normal(size=(14, 2))
    b = rng.random(9) + 0.1
    labels = np.arange(14) % 3
    close = {"rtol": 1e-12, "atol": 1e-12}
    assert Z.S.format == fmt
    np.testing.assert_allclose(Z @ V, D @ V, **close)
    np.testing.assert_allclose(Z @ V[:, 0], D @ V[:, 0], **close)
    np.testing.assert_allclose(Z.T @ R, D.T @ R, **close)
    np.testing.assert_allclose(Z.T @ R[:, 0], D.T @ R[:, 0], **close)
    assert Z.T.shape == (9, 14)
    np.testing.assert_allclose(Z.row_gram(), D @ D.T, **close)
    np.testing.assert_allclose(Z.row_gram(b), (D * b) @ D.T, **close)
    np.testing.assert_allclose(Z.col_gram(), D.T @ D, **close)
    np.testing.assert_allclose(Z.col_sums(), D.sum(axis=0), **close)
    np.testing.assert_allclose(Z.col_sq_sums(), (D * D).sum(axis=0), **close)
    np.testing.assert_allclose(Z.row_sq_norms(), (D * D).sum(axis=1), **close)
    np.testing.assert_allclose(Z.rows(np.array([4, 1])), D[[4, 1]], **close)
    np.testing.assert_allclose(Z.rows(5), D[5], **close)
    sums = np.zeros((3, 9))
    np.add.at(sums, labels, D)
    np.testing.assert_allclose(Z.group_sums(labels, 3), sums, **close)
    cols = np.array([7, 0, 4])
    np.testing.assert_allclose(Z[:, cols].toarray(), D[:, cols], **close)
    np.testing.assert_allclose((Z * b).toarray(), D * b, **close)
    np.testing.assert_allclose(Z.toarray(), D, **close)
    with pytest.raises(IndexError, match="column selection"):
        Z[1:3, cols]


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_the_other_format_is_built_once_and_holds_the_same_matrix(fmt):
    X = _data(seed=3)
    Z = CenteredSparse(sp.csr_array(X) if fmt == "csr" else sp.csc_array(X), np.zeros(9))
    assert Z.csr.format == "csr" and Z.csc.format == "csc"
    assert Z.csr is Z.csr and Z.csc is Z.csc  # cached
    assert (Z.csr if fmt == "csr" else Z.csc) is Z.S  # the held format is not copied
    np.testing.assert_array_equal(Z.csr.toarray(), X)
    np.testing.assert_array_equal(Z.csc.toarray(), X)


def test_duplicates_are_summed_and_other_formats_become_csr():
    coo = sp.coo_array((np.array([1.0, 2.0, 5.0]), (np.array([0, 0, 1]), np.array([1, 1, 0]))),
                       shape=(2, 2))
    Z = CenteredSparse(coo, np.array([0.5, 0.25]))
    assert Z.S.format == "csr" and Z.S.nnz == 2
    np.testing.assert_array_equal(Z.toarray(), np.array([[0.0, 3.0], [5.0, 0.0]]) - [0.5, 0.25])


def test_csr_parts_and_background_give_the_implicit_rows_of_kmeans():
    """Reference: ImplicitRows(E, b) built from the parts holds the same dense matrix."""
    X = _data(seed=4)
    m = X.mean(axis=0)
    Z = CenteredSparse(sp.csc_array(X), m)
    data, indices, indptr = Z.csr_parts()
    assert data.dtype == np.float64 and indices.dtype == indptr.dtype == np.int64
    E = sp.csr_array((data, indices, indptr), shape=Z.shape)
    rows = ImplicitRows(E, Z.background)
    np.testing.assert_array_equal(rows.toarray(), Z.toarray())
    np.testing.assert_array_equal(rows._parts()[0], data)
    np.testing.assert_array_equal(rows._parts()[1], indices)


def test_sparse_col_extrema_include_the_implicit_zeros():
    X = np.array([[0.0, 2.0, -1.0], [3.0, 0.0, -2.0]])
    hi, lo = sparse_col_extrema(sp.csr_array(X))
    np.testing.assert_array_equal(hi, X.max(axis=0))
    np.testing.assert_array_equal(lo, X.min(axis=0))
    hi, lo = sparse_col_extrema(sp.csr_array((0, 3)))
    np.testing.assert_array_equal(hi, np.zeros(3))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("scale", [1.0, 1e-300, 1e300])
def test_center_sparse_standardises_as_the_dense_z_scores(fmt, scale):
    """Reference: numpy's column means and standard deviations of the dense copy (taken before
    the scaling by 1e-300 / 1e300, under which its squares would under- or overflow)."""
    X0 = _data(seed=5)
    Z, offset, sd, constant = center_sparse(sp.csr_array(X0 * scale), standardize=True,
                                            fmt=fmt)
    assert Z.S.format == fmt
    np.testing.assert_array_equal(constant, np.ptp(X0, axis=0) == 0)
    live = ~constant
    np.testing.assert_allclose(offset, X0.mean(axis=0) * scale, rtol=1e-12)
    np.testing.assert_allclose(sd[live], X0.std(axis=0)[live] * scale, rtol=1e-10)
    dense = np.zeros_like(X0)
    dense[:, live] = (X0[:, live] - X0.mean(axis=0)[live]) / X0.std(axis=0)[live]
    np.testing.assert_allclose(Z.toarray(), dense, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("center", [True, False])
def test_center_sparse_with_one_common_factor(center):
    """Reference: (X - means) / max|X| (centred; constant columns 0) or X / max|X|."""
    X = _data(seed=6)
    Z, offset, sd, constant = center_sparse(sp.csc_array(X), standardize=False, center=center)
    common = np.abs(X).max()
    np.testing.assert_array_equal(sd, np.full(9, common))
    if center:
        expect = (X - X.mean(axis=0)) / common
        expect[:, constant] = 0.0
        np.testing.assert_allclose(offset, X.mean(axis=0), rtol=1e-12)
    else:
        expect = X / common
        np.testing.assert_array_equal(offset, np.zeros(9))
    np.testing.assert_allclose(Z.toarray(), expect, rtol=1e-12, atol=1e-15)


def test_center_sparse_by_a_power_of_two_beyond_the_float_range():
    """An exponent of 1024 (data near the largest float): exact division by 2**1024, whose
    factor itself is not a float; no warning."""
    X = _data(seed=7)
    X = X / np.abs(X).max() * 1.5e308
    e = int(np.frexp(np.abs(X).max())[1])
    assert e == 1024
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Z, _, sd, _ = center_sparse(sp.csr_array(X), standardize=False, exponent=e)
    assert np.isinf(sd[0])
    np.testing.assert_array_equal(Z.S.toarray()[:, [0, 1, 4]],
                                  np.ldexp(X, -e)[:, [0, 1, 4]])
    assert np.all(np.isfinite(Z.m))


def test_the_docs_example_runs():
    """``docs/centered_sparse.md``'s example (its own asserts against the dense copy)."""
    from pathlib import Path

    page = Path(__file__).resolve().parents[3] / "docs" / "centered_sparse.md"
    if not page.exists():
        pytest.skip("docs/ is not part of an installed package")
    block = page.read_text(encoding="utf-8").split("```python", 1)[1].split("```", 1)[0]
    exec(compile(block, str(page), "exec"), {})
