"""Odds-ratio term ranking for two-class text: a baseline of the sparse center classifiers'
reproduction (Mladenic & Grobelnik 1999), not a registered sparsefs method.

Estimator only: the score is :func:`sparsefs._kernels.odds_ratio.odds_ratio_scores`.
"""

from numbers import Real
from typing import ClassVar

from sparsefs._kernels.odds_ratio import odds_ratio_scores
from sparsefs.base import BaseSelector
from sparsefs.utils._sklearn_compat import Interval

__all__ = ["OddsRatioSelector"]

#: ``n_features_to_select=None``: this many features, capped at p (as the sparse centers).
_DEFAULT_K = 10


class OddsRatioSelector(BaseSelector):
    """Odds-ratio term ranking for two-class text (not a registered sparsefs method).

    Scores are :func:`~sparsefs.harness.baselines.odds_ratio_scores` (absolute log odds ratio
    of term presence, Laplace smoothing; Mladenic & Grobelnik 1999); the ``k`` highest are
    selected, ties to the lower index.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        A count, a fraction, or ``None``: ``min(10, n_features)``.
    alpha : float, default=1.0
        Smoothing of the document frequencies.

    Attributes
    ----------
    scores_, ranking_, support_, n_features_to_select_, n_features_in_
        As every sparsefs selector.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsefs.selection import OddsRatioSelector
    >>> X = np.array([[1, 0, 1], [2, 0, 1], [0, 1, 1], [0, 3, 1]], dtype=float)
    >>> OddsRatioSelector(1).fit(X, [1, 1, 0, 0]).ranking_.tolist()
    [1, 2, 3]
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "alpha": [Interval(Real, 0, None, closed="neither")],
    }
    _accept_sparse = ("csr", "csc")

    def __init__(self, n_features_to_select=None, *, alpha=1.0):
        self.n_features_to_select = n_features_to_select
        self.alpha = alpha

    def _fit(self, X, y_idx):
        if int(y_idx.max()) != 1:
            raise ValueError("OddsRatioSelector needs exactly two classes.")
        if self.n_features_to_select_ is None:
            self.n_features_to_select_ = min(_DEFAULT_K, X.shape[1])
        self._set_selection(odds_ratio_scores(X, y_idx, self.alpha))
