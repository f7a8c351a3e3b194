"""The shared scale guard (:mod:`sparsefs._kernels.columns`): every option of
:func:`power_of_two_scale` against a brute-force search over the powers of two."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from sparsefs._kernels.columns import (
    SAFE_RANGE,
    TINY,
    power_of_two_exponent,
    power_of_two_scale,
)


def _brute_exponent(m: float, above: bool) -> int:
    """The exponent by exact comparisons with every power of two float64 has."""
    powers = range(-1074, 1024)  # every power of two float64 holds
    if above:  # the smallest 2**e strictly above m (the largest one, 2**1023, at the top)
        return min((e for e in powers if math.ldexp(1.0, e) > m), default=1023)
    return max(e for e in powers if math.ldexp(1.0, e) <= m)


_MAGNITUDES = [1.0, 3.0, 4.0, np.nextafter(4.0, 0.0), np.nextafter(8.0, 0.0), 0.75, 1e-5,
               5e-300, 3e300, 1.7e308, 1e-100, 1e100, np.nextafter(1e100, np.inf), 2.0**-1022]


@pytest.mark.parametrize("m", _MAGNITUDES)
@pytest.mark.parametrize("above", [False, True])
def test_exponent_is_the_power_of_two_next_to_max_abs(m, above):
    X = np.array([[0.5 * m, -m], [0.0, 0.25 * m]])
    e = power_of_two_exponent(X, above=above)
    assert e == _brute_exponent(m, above)
    s = power_of_two_scale(X, above=above)
    assert s == math.ldexp(1.0, e)
    lo, hi = (0.5, 1.0) if above and m < 2.0**1023 else (1.0, 2.0)
    assert lo <= m / s < hi
    # the same from the column extremes, from amax, and from a sparse X
    assert power_of_two_scale(colmax=X.max(axis=0), colmin=X.min(axis=0), above=above) == s
    assert power_of_two_scale(amax=m, above=above) == s
    assert power_of_two_scale(sp.csr_array(X), above=above) == s


@pytest.mark.parametrize("m", _MAGNITUDES)
def test_safe_range_leaves_ordinary_data_alone(m):
    s = power_of_two_scale(amax=m, safe_range=SAFE_RANGE, above=True)
    if SAFE_RANGE[0] <= m <= SAFE_RANGE[1]:
        assert s == 1.0
    else:
        assert s == math.ldexp(1.0, _brute_exponent(m, True))
        assert 1e-10 < m / s < 2.0  # now safe to square


def test_zero_empty_and_non_finite_give_one():
    assert power_of_two_scale(np.zeros((3, 2))) == 1.0
    assert power_of_two_scale(np.zeros((0, 2))) == 1.0
    assert power_of_two_scale(sp.csr_array((3, 2))) == 1.0
    assert power_of_two_scale(np.array([1.0, np.nan])) == 1.0
    assert power_of_two_scale(np.array([1.0, -np.inf]), above=True) == 1.0
    assert power_of_two_exponent(amax=0.0, safe_range=SAFE_RANGE) == 0
    # all-negative columns: the magnitude comes from the minima
    assert power_of_two_scale(colmax=np.array([-3.0]), colmin=np.array([-6.0])) == 4.0
    assert np.finfo(np.float64).tiny == TINY
