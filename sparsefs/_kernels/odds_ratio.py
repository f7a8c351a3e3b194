"""The odds-ratio score of term presence between two classes (Mladenic & Grobelnik 1999)."""

import numpy as np
import scipy.sparse as sp

__all__ = ["odds_ratio_scores"]


def odds_ratio_scores(X, y_idx: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    r"""Absolute log odds ratio of each term's presence between two classes.

    With :math:`p_c` the smoothed fraction of the documents of class :math:`c` that contain
    the term, :math:`p_c = (\mathrm{df}_c + \alpha) / (n_c + 2\alpha)`, the score is

    .. math::

        \left|\log \frac{p_1 (1 - p_0)}{(1 - p_1)\, p_0}\right|,

    the odds ratio of Mladenic & Grobelnik (1999) made symmetric, so that words typical of
    either class rank high (sentiment: positive and negative words). Presence is ``x != 0``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
    y_idx : ndarray of shape (n_samples,)
        Class indices 0 and 1.
    alpha : float, default=1.0
        Additive (Laplace) smoothing of the document frequencies.

    Returns
    -------
    scores : ndarray of shape (n_features,)

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1, 0], [1, 0], [0, 1], [1, 1]], dtype=float)
    >>> odds_ratio_scores(X, np.array([1, 1, 0, 0])).round(3).tolist()
    [1.099, 2.197]
    """
    y_idx = np.asarray(y_idx)
    df = np.empty((2, X.shape[1]))
    n = np.empty(2)
    for c in (0, 1):
        rows = X[y_idx == c]
        n[c] = rows.shape[0]
        if sp.issparse(rows):
            df[c] = np.asarray((rows != 0).sum(axis=0), dtype=np.float64).ravel()
        else:
            df[c] = np.count_nonzero(rows, axis=0)
    p = (df + alpha) / (n[:, None] + 2.0 * alpha)
    logit = np.log(p) - np.log1p(-p)
    return np.abs(logit[1] - logit[0])
