"""Result tables: a fitted selector's scores as a DataFrame, one row per feature."""

from typing import TYPE_CHECKING

import numpy as np
from sklearn.utils.validation import check_is_fitted

__all__ = ["scores_frame"]

if TYPE_CHECKING:
    import pandas as pd


def scores_frame(estimator, feature_names=None, *, sort: bool = True) -> "pd.DataFrame":
    """Per-feature scores, ranks and selection of a fitted sparsefs estimator.

    Parameters
    ----------
    estimator : fitted sparsefs estimator
        Anything with ``scores_``, ``ranking_`` and ``support_``.
    feature_names : sequence of str, optional
        Defaults to ``feature_names_in_`` when the estimator was fitted on a DataFrame, else
        ``x0, x1, ...``.
    sort : bool, default=True
        Order rows by rank (best first); otherwise by feature index.

    Returns
    -------
    pandas.DataFrame
        Columns ``feature``, ``index``, ``score``, ``rank``, ``selected``.
    """
    import pandas as pd

    check_is_fitted(estimator, ["scores_", "ranking_", "support_"])
    p = estimator.scores_.shape[0]
    if feature_names is None:
        feature_names = getattr(estimator, "feature_names_in_", None)
    if feature_names is None:
        feature_names = [f"x{j}" for j in range(p)]
    feature_names = np.asarray(feature_names, dtype=object)
    if feature_names.shape != (p,):
        raise ValueError(f"feature_names has {feature_names.shape[0]} names for {p} features.")
    frame = pd.DataFrame(
        {
            "feature": feature_names,
            "index": np.arange(p),
            "score": estimator.scores_,
            "rank": estimator.ranking_,
            "selected": estimator.support_,
        }
    )
    return frame.sort_values("rank", kind="stable").reset_index(drop=True) if sort else frame
