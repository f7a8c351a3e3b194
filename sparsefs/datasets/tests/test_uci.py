"""The UCI loaders of the sparse KOS paper (local copies of the shared data)."""

import numpy as np
import pytest


def test_uci_loaders_raise_file_not_found_and_read_the_credit_data(tmp_path, monkeypatch):
    """Reference: the shared data MANIFEST (section 2) - UCI default of credit card clients,
    30000 x (ID, X1..X23, Y), Y 0: 23364 / 1: 6636; the paper subsamples n = 3000. Without the
    files every loader raises FileNotFoundError (the harness skips such data sets)."""
    from sparsefs.datasets import _uci as rep
    from sparsefs.datasets._asu import shared_data_dir

    root = shared_data_dir()
    with monkeypatch.context() as m:
        m.setenv("SPARSEFS_DATA", str(tmp_path))
        for loader in (rep.load_blood_transfusion, rep.load_climate_crashes,
                       rep.load_credit_default):
            with pytest.raises(FileNotFoundError, match="SPARSEFS_DATA"):
                loader()
    if root is None or not (root / "UCI_Credit_Card.csv").is_file():
        pytest.skip("UCI_Credit_Card.csv not available")
    ds = rep.load_credit_default(n_samples=3000, random_state=0)
    assert ds.X.shape == (3000, 23) and set(np.unique(ds.y)) == {0, 1}
    assert ds.feature_names[5] == "X6"
    again = rep.load_credit_default(n_samples=3000, random_state=0)
    np.testing.assert_array_equal(ds.X, again.X)
    # X2 (sex) in {1, 2}, X6 (repayment status, September 2005) in -2..8: the UCI coding
    assert set(np.unique(ds.X[:, 1])) <= {1.0, 2.0}
    assert ds.X[:, 5].min() >= -2 and ds.X[:, 5].max() <= 8
