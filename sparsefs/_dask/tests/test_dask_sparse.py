"""Dask arrays of scipy.sparse blocks (a stored CSR matrix read lazily) give the in-memory answer.

The one-pass sparse moments (:func:`sparsefs._dask._moments._sparse_tile_moments`) are
compared with the *dense float64* in-memory kernels on the same numbers (``RTOL = 1e-12``, the
tolerance of ``test_dask.py``: the sums are in another order), and the rankings and supports
exactly. The data are float32 counts at ~5% density with a few planted marker columns, the
single-cell case.
"""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

import scipy.sparse as sp  # noqa: E402
from numpy.testing import assert_allclose, assert_array_equal  # noqa: E402

from sparsefs._dask._moments import class_moments  # noqa: E402
from sparsefs.classification import SparseCenterClassifier  # noqa: E402
from sparsefs.clustering import L0KMeans  # noqa: E402
from sparsefs.selection import SMBA, FisherScore  # noqa: E402

RTOL = 1e-12

#: row blocks (uneven), tiles (CSR blocks split by columns too), one block
CHUNKINGS = {
    "rows": (97, -1),
    "tiles": (150, 90),
    "uneven": ((10, 290, 133, 167), (7, 200, 73)),
    "single": (-1, -1),
}


@pytest.fixture(scope="module")
def counts():
    """600 x 280 float32 CSR counts, 3 groups, columns 0-5 raised in one group each."""
    rng = np.random.default_rng(3)
    n, p = 600, 280
    y = rng.integers(0, 3, n)
    X = sp.random(n, p, density=0.05, format="csr", random_state=4, dtype=np.float32)
    X.data = rng.poisson(1.5, X.nnz).astype(np.float32) + 1
    X = X.tolil()
    for j in range(6):
        rows = np.flatnonzero(y == j % 3)
        X[rows[: rows.size // 2], j] = 6.0
    X[:, 7] = 0.0  # an all-zero column
    X[:, 8] = 0.0
    X[np.flatnonzero(y == 1), 8] = 2.5  # constant within each class, not between: +inf
    X = X.tocsr()
    X.eliminate_zeros()
    return X, y


def _sparse_dask(X, chunks):
    return da.from_array(X, chunks=chunks, asarray=False)


def _close(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert_allclose(b, a, rtol=RTOL, atol=RTOL * max(1.0, float(np.abs(a).max())))


@pytest.mark.parametrize("chunks", CHUNKINGS.values(), ids=CHUNKINGS.keys())
def test_fisher_sparse_blocks_equal_numpy(counts, chunks):
    X, y = counts
    Xd = _sparse_dask(X, chunks)
    assert isinstance(Xd._meta, sp.spmatrix | sp.sparray) and Xd.dtype == np.float32
    ref = FisherScore(6).fit(X.toarray().astype(np.float64), y)
    got = FisherScore(6).fit(Xd, y)
    finite = np.isfinite(ref.scores_)
    assert_array_equal(finite, np.isfinite(got.scores_))
    _close(ref.scores_[finite], got.scores_[finite])
    assert got.scores_[7] == 0 and got.scores_[8] == np.inf
    assert_array_equal(ref.ranking_, got.ranking_)
    assert set(np.argsort(-got.scores_, kind="stable")[:7]) == {0, 1, 2, 3, 4, 5, 8}


@pytest.mark.parametrize("chunks", CHUNKINGS.values(), ids=CHUNKINGS.keys())
@pytest.mark.parametrize("objective", ["balanced", "pooled"])
@pytest.mark.parametrize("standardize", [False, True])
def test_l2_centers_sparse_blocks_equal_numpy(counts, chunks, objective, standardize):
    X, y = counts
    kw = {"norm": "l2", "objective": objective, "standardize": standardize}
    ref = SparseCenterClassifier(6, **kw).fit(X.toarray().astype(np.float64), y)
    got = SparseCenterClassifier(6, **kw).fit(_sparse_dask(X, chunks), y)
    for name in ("gains_", "class_centers_", "shared_center_"):
        _close(getattr(ref, name), getattr(got, name))
    assert (ref.scale_ is None) == (got.scale_ is None) == (not standardize)
    if standardize:
        _close(ref.scale_, got.scale_)
    assert_array_equal(ref.support_, got.support_)
    assert_array_equal(ref.ranking_, got.ranking_)


@pytest.mark.parametrize("extremes", ["minmax", "absmax"])
def test_sparse_tile_moments_equal_dense_tiles(counts, extremes):
    X, y = counts
    X = X.copy()
    X.data[::7] *= -1.0  # negative values: the extremes must see the implicit zeros
    ref = class_moments(da.from_array(X.toarray(), chunks=(150, 90)), y, 3, extremes=extremes)
    got = class_moments(_sparse_dask(X, (150, 90)), y, 3, extremes=extremes)
    assert_array_equal(ref.counts, got.counts)
    for name in ("sums", "m2", "colmax", "colmin", "absmax"):
        a, b = getattr(ref, name), getattr(got, name)
        assert (a is None) == (b is None)
        if a is not None:
            _close(a, b)


def test_sparse_tiles_are_not_densified(counts, monkeypatch):
    X, y = counts
    from sparsefs._dask import _moments

    def no_dense(*args, **kwargs):
        raise AssertionError("a sparse tile was densified")

    monkeypatch.setattr(sp.csr_matrix, "toarray", no_dense)
    monkeypatch.setattr(sp.csr_array, "toarray", no_dense)
    calls = []
    real = _moments._csr_tile_pass

    def counting(data, *args):
        calls.append(data.dtype)
        return real(data, *args)

    monkeypatch.setattr(_moments, "_csr_tile_pass", counting)
    Xd = _sparse_dask(X, (150, 90))
    FisherScore(3).fit(Xd, y)
    SparseCenterClassifier(3, norm="l2", standardize=True).fit(Xd, y)
    assert len(calls) == 2 * Xd.npartitions  # one pass per tile and fit
    assert set(calls) == {np.dtype(np.float32)}  # float32 values read as stored


@pytest.mark.parametrize("bad, match", [(np.nan, "NaN"), (np.inf, "infinity")])
def test_sparse_non_finite_is_rejected(counts, bad, match):
    X, y = counts
    X = X.copy()
    X.data[5] = bad
    for est in (FisherScore(3), SparseCenterClassifier(3, norm="l2")):
        with pytest.raises(ValueError, match=match):
            est.fit(_sparse_dask(X, (150, 90)), y)


def test_sparse_blocks_unsupported_estimators(counts):
    X, y = counts
    Xd = _sparse_dask(X, (150, -1))
    with pytest.raises(TypeError, match="sparse dask blocks are supported by"):
        SparseCenterClassifier(3, norm="l1").fit(Xd, y)
    with pytest.raises(TypeError, match="sparse dask blocks are supported by"):
        L0KMeans(n_clusters=3, n_features_to_select=5).fit(Xd)
    with pytest.raises(TypeError, match="sparse dask blocks are supported by"):
        SMBA(penalty="l1").fit(Xd)
    clf = SparseCenterClassifier(3, norm="l2").fit(Xd, y)
    with pytest.raises(TypeError, match="numpy blocks"):  # predict reads dense row blocks
        clf.predict(Xd)


def test_sparse_transform_stays_sparse(counts):
    X, y = counts
    fs = FisherScore(6).fit(_sparse_dask(X, (150, -1)), y)
    out = fs.transform(_sparse_dask(X, (200, -1)))
    assert isinstance(out._meta, sp.spmatrix | sp.sparray) and out.shape == (X.shape[0], 6)
    assert_array_equal(out.compute().toarray(), X[:, fs.get_support(indices=True)].toarray())


@pytest.mark.filterwarnings("ignore:Writing zarr v2:UserWarning")
@pytest.mark.parametrize("fmt", ["h5ad", "zarr"])
def test_anndata_lazy_csr_store(counts, tmp_path, fmt):
    """A CSR matrix written by anndata, read back by ``read_elem_lazy``: CSR dask blocks."""
    ad = pytest.importorskip("anndata")
    X, y = counts
    adata = ad.AnnData(X)
    path = tmp_path / f"cells.{fmt}"
    if fmt == "h5ad":
        h5py = pytest.importorskip("h5py")
        adata.write_h5ad(path)
        store = h5py.File(path, "r")
    else:
        zarr = pytest.importorskip("zarr")
        adata.write_zarr(path)
        store = zarr.open_group(path, mode="r")
    try:
        Xd = ad.experimental.read_elem_lazy(store["X"], chunks=(128, X.shape[1]))
        assert sp.issparse(Xd._meta) and Xd.numblocks == (5, 1)
        ref = FisherScore(6).fit(X, y)
        got = FisherScore(6).fit(Xd, y)
        finite = np.isfinite(ref.scores_)
        _close(ref.scores_[finite], got.scores_[finite])
        assert_array_equal(ref.support_, got.support_)
    finally:
        if fmt == "h5ad":
            store.close()
