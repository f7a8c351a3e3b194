"""Tests of load_default, the wine + permuted-noise demo data set."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.datasets import load_wine

from sparsefs.datasets import load_default


def test_shape_support_and_labels():
    ds = load_default()
    assert ds.X.shape == (178, 500)
    assert ds.support.sum() == 13
    assert ds.name == "wine+noise"
    assert sorted(np.unique(ds.y).tolist()) == [0, 1, 2]
    wine = load_wine()
    assert_array_equal(ds.X[:, ds.support], wine.data)  # real columns, original order
    assert_array_equal(ds.feature_names[ds.support], wine.feature_names)
    assert_array_equal(ds.y, wine.target)
    noise_names = ds.feature_names[~ds.support]
    assert noise_names[0] == "noise_000" and noise_names[-1] == "noise_486"
    assert not np.array_equal(np.flatnonzero(ds.support), np.arange(13))
    assert "permuted" in ds.description


def test_deterministic():
    a, b = load_default(), load_default()
    assert_array_equal(a.X, b.X)
    assert_array_equal(a.feature_names, b.feature_names)
    c = load_default(random_state=1)
    assert not np.array_equal(a.support, c.support)


def test_noise_columns_are_permutations_of_real_columns():
    ds = load_default(n_noise_features=60, random_state=3)
    real_sorted = np.sort(ds.X[:, ds.support], axis=0)
    for column in ds.X[:, ~ds.support].T:
        matches = np.all(np.sort(column)[:, None] == real_sorted, axis=0)
        assert matches.any()
    # ... and are not the real columns themselves (rows really were permuted)
    noise = ds.X[:, ~ds.support]
    real = ds.X[:, ds.support]
    assert not any(np.array_equal(n, r) for n in noise.T for r in real.T)


def test_no_noise_and_validation():
    ds = load_default(n_noise_features=0)
    assert ds.X.shape == (178, 13) and ds.support.all()
    with pytest.raises(ValueError, match="n_noise_features must be >= 0, got -1"):
        load_default(n_noise_features=-1)
    with pytest.raises(TypeError, match="n_noise_features must be an int"):
        load_default(n_noise_features=2.5)
    with pytest.raises(TypeError, match="n_noise_features must be an int"):
        load_default(n_noise_features=True)
