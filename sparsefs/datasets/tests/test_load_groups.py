"""``load(path, groups=...)``: the sample groups (donors) from every format, out of X."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from sparsefs.datasets import Dataset, load


def test_table_groups_column_leaves_the_features(tmp_path):
    path = tmp_path / "cells.csv"
    path.write_text("g1,g2,donor,type\n1,2,d0,a\n3,4,d0,b\n5,6,d1,a\n7,8,d1,b\n")
    ds = load(path, target="type", groups="donor")
    assert ds.feature_names.tolist() == ["g1", "g2"]
    assert_array_equal(ds.groups, ["d0", "d0", "d1", "d1"])
    assert ds.X.shape == (4, 2)
    numeric = tmp_path / "num.csv"  # numeric donor ids must not stay a feature either
    numeric.write_text("g1,donor\n1,7\n2,7\n3,8\n")
    ds = load(numeric, groups="donor")
    assert ds.feature_names.tolist() == ["g1"] and ds.groups.tolist() == [7, 7, 8]
    with pytest.raises(ValueError, match="groups='nope' is not a column"):
        load(path, target="type", groups="nope")
    with pytest.raises(ValueError, match="also the target"):
        load(path, target="type", groups="type")
    with pytest.raises(ValueError, match="transpose=True is not supported"):
        load(path, groups="donor", transpose=True)
    with pytest.raises(TypeError, match="groups must be a str"):
        load(path, groups=3)


def test_npz_and_h5ad_groups(tmp_path):
    X = np.arange(12.0).reshape(4, 3)
    np.savez(tmp_path / "d.npz", X=X, y=np.array([0, 1, 0, 1]),
             donor=np.array(["a", "a", "b", "b"]))
    ds = load(tmp_path / "d.npz", groups="donor")
    assert_array_equal(ds.groups, ["a", "a", "b", "b"])
    with pytest.raises(ValueError, match="not an array"):
        load(tmp_path / "d.npz", groups="nope")
    anndata = pytest.importorskip("anndata")
    import pandas as pd

    obs = pd.DataFrame({"type": ["x", "y", "x", "y"], "donor": ["a", "a", "b", "b"]},
                       index=[f"c{i}" for i in range(4)])
    anndata.AnnData(X=X, obs=obs).write_h5ad(tmp_path / "d.h5ad")
    ds = load(tmp_path / "d.h5ad", target="type", groups="donor")
    assert_array_equal(ds.groups, ["a", "a", "b", "b"])
    with pytest.raises(ValueError, match=r"not a column of adata\.obs"):
        load(tmp_path / "d.h5ad", groups="nope")


def test_mat_groups(tmp_path):
    import scipy.io

    scipy.io.savemat(tmp_path / "d.mat", {"X": np.ones((3, 2)), "Y": np.array([1, 2, 1]),
                                          "donor": np.array([5, 5, 6])})
    ds = load(tmp_path / "d.mat", groups="donor")
    assert_array_equal(ds.groups, [5, 5, 6])
    with pytest.raises(ValueError, match="not a variable"):
        load(tmp_path / "d.mat", groups="nope")


def test_dataset_checks_groups_shape():
    with pytest.raises(ValueError, match="groups must have shape"):
        Dataset(X=np.zeros((3, 2)), y=None, feature_names=["a", "b"], support=None,
                name="x", groups=np.zeros(2))
