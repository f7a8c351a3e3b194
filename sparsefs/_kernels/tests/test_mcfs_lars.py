"""The LARS helpers of ``_kernels.mcfs_lars`` against scikit-learn's own (``arrayfuncs``):
the kernel rewrites them without importing scikit-learn, on the same BLAS routines, so the
Cholesky downdate must be equal to the bit and ``min_pos`` equal."""

import numpy as np
import pytest
from sklearn.utils import arrayfuncs

from sparsefs._kernels.mcfs_lars import _cholesky_delete, _min_pos


@pytest.mark.parametrize("seed", range(4))
def test_cholesky_delete_is_scikit_learns_to_the_bit(seed):
    """Reference: sklearn.utils.arrayfuncs.cholesky_delete on the same factor, a view of a
    larger buffer (as LARS passes it), every row removed in turn, scales 1e-3 to 1e3."""
    rng = np.random.default_rng(seed)
    for m in (2, 3, 7, 12):
        A = rng.standard_normal((m + 5, m)) * 10.0 ** rng.integers(-3, 4)
        L0 = np.linalg.cholesky(A.T @ A)
        for go_out in range(m):
            want = np.zeros((m + 2, m + 2))
            want[:m, :m] = L0
            got = want.copy()
            arrayfuncs.cholesky_delete(want[:m, :m], go_out)
            _cholesky_delete(got[:m, :m], go_out)
            np.testing.assert_array_equal(got, want)


def test_min_pos_is_scikit_learns():
    """Reference: sklearn.utils.arrayfuncs.min_pos (the largest float when nothing is
    positive; zeros, negatives, NaN and infinity are not candidates)."""
    rng = np.random.default_rng(0)
    cases = [rng.standard_normal(20), -np.abs(rng.standard_normal(5)), np.zeros(3),
             np.array([np.nan, 2.0, np.inf, 0.5]), np.array([np.inf]), np.empty(0)]
    for x in cases:
        assert _min_pos(x) == arrayfuncs.min_pos(x)
