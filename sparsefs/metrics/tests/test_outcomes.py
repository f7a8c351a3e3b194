"""R², RMSE and Harrell's C-index.

Independent references: scikit-learn's ``r2_score`` / ``mean_squared_error``, lifelines'
``concordance_index`` (an O(n log n) tree algorithm) and a pair-by-pair loop.
"""

import numpy as np
import pytest
from sklearn.metrics import mean_squared_error, r2_score

from sparsefs.metrics import concordance_index, r2, rmse


def test_r2_and_rmse_equal_scikit_learn():
    rng = np.random.default_rng(0)
    y, p = rng.normal(size=50), rng.normal(size=50)
    assert r2(y, p) == pytest.approx(r2_score(y, p), rel=1e-12)
    assert rmse(y, p) == pytest.approx(np.sqrt(mean_squared_error(y, p)), rel=1e-12)
    assert np.isnan(r2(np.ones(5), np.arange(5.0)))


def _pairs_loop(t, e, r):
    num = den = 0.0
    for i in range(len(t)):
        for j in range(len(t)):
            if e[i] and (t[i] < t[j] or (t[i] == t[j] and not e[j])):
                den += 1
                num += 1.0 if r[i] > r[j] else 0.5 if r[i] == r[j] else 0.0
    return num / den


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_c_index_equals_lifelines_and_the_pair_loop(seed):
    lifelines_utils = pytest.importorskip("lifelines.utils")
    rng = np.random.default_rng(seed)
    n = 120
    t = np.round(rng.exponential(size=n), 1)  # tied times
    e = rng.random(n) < 0.6
    r = np.round(rng.normal(size=n) - t, 1)  # tied risks, informative
    got = concordance_index(t, e, r, block=17)
    assert got == pytest.approx(lifelines_utils.concordance_index(t, -r, e), rel=1e-12)
    assert got == pytest.approx(_pairs_loop(t, e, r), rel=1e-12)
    assert concordance_index(t, e, -r) == pytest.approx(1.0 - got, abs=1e-12)
    assert np.isnan(concordance_index(t, np.zeros(n, bool), r))
