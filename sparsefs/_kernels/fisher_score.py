"""Fisher score (Duda, Hart & Stork 2001; Gu, Li & Han 2011).

For feature j with class means :math:`m_{cj}`, grand mean :math:`m_j` and class sizes
:math:`n_c`,

.. math::

    F_j = \\frac{\\sum_c n_c (m_{cj} - m_j)^2}{\\sum_c \\sum_{i \\in c} (x_{ij} - m_{cj})^2}
        = \\frac{\\mathrm{SSB}_j}{\\mathrm{SSW}_j},

the ratio of between- to within-class scatter. The one-way ANOVA F statistic is
:math:`F_j (n - K)/(K - 1)`, a monotone transform, so both rank features identically.
"""

import numpy as np

from sparsefs._kernels.arrays import column_max_abs, stored_values, to_dense
from sparsefs._kernels.columns import SAFE_RANGE
from sparsefs._kernels.stats import class_moments

__all__ = ["fisher_from_scatter", "fisher_ratios"]


def _check_finite(values) -> None:
    """scikit-learn's errors for NaN / infinite X: the fit skips its scan of X (a whole read)
    because only the columns whose scatter is not finite (or 0) can hold such values."""
    finite = np.isfinite(values)
    if not finite.all():
        if np.isnan(values).any():
            raise ValueError("Input X contains NaN.")
        raise ValueError(
            f"Input X contains infinity or a value too large for {np.asarray(values).dtype!r}."
        )


def fisher_from_scatter(between_ss: np.ndarray, within_ss: np.ndarray) -> np.ndarray:
    """Fisher ratio SSB / SSW with the edge cases defined.

    * ``SSW = 0`` and ``SSB > 0`` (a perfect separator): ``+inf``, ranked first;
    * ``SSW = 0`` and ``SSB = 0`` (a constant feature): ``0``, the lowest possible score.
    """
    out = np.zeros_like(between_ss, dtype=np.float64)
    pos = within_ss > 0
    out[pos] = between_ss[pos] / within_ss[pos]
    out[~pos & (between_ss > 0)] = np.inf
    return out


def fisher_ratios(X, y_idx: np.ndarray, n_classes: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fisher scores of every column of ``X``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    y_idx : ndarray of shape (n_samples,)
        Class index of each sample in ``0..n_classes-1``.
    n_classes : int

    Returns
    -------
    scores : ndarray of shape (n_features,)
        SSB / SSW (see :func:`fisher_from_scatter` for the edge cases).
    between_ss, within_ss : ndarray of shape (n_features,)

    Raises
    ------
    ValueError
        When X holds NaN or infinite values (scikit-learn's messages).
    """
    with np.errstate(over="ignore", invalid="ignore"):  # handled below
        mom = class_moments(X, y_idx, n_classes)
    between, within = mom.between_ss, mom.within_ss
    # Squares of values near 1e300 overflow, and those of values near 1e-300 underflow to a zero
    # scatter. The ratio is scale invariant, so such columns (few in practice) are recomputed
    # divided by their largest magnitude; the scatter returned for them is that of the scaled
    # column. Only those columns are ever densified.
    overflow = ~(np.isfinite(between) & np.isfinite(within))
    cols = np.flatnonzero(overflow | (within == 0))
    if cols.size:
        Xb = X[:, cols]
        _check_finite(stored_values(Xb))
        amax = column_max_abs(Xb)
        redo = overflow[cols] | ((amax > 0) & (amax < SAFE_RANGE[0]))  # squares underflow
        if redo.any():
            cols, amax = cols[redo], amax[redo]
            Xb = X[:, cols]
            Xb = to_dense(Xb, np.float64)
            sub = class_moments(Xb / amax, y_idx, n_classes)
            between, within = between.copy(), within.copy()
            between[cols], within[cols] = sub.between_ss, sub.within_ss
    return fisher_from_scatter(between, within), between, within
