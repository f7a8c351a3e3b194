"""Per-feature results: the outputs an estimator declares, and the one table of a fit.

:func:`scores_frame` is the one builder of the per-feature table (one row per feature): the
CLI writes it (``sparsefs select``) and ``sparsefs.tl`` stores its columns in ``adata.var``.
"""

from typing import TYPE_CHECKING

import numpy as np
from sklearn.utils.validation import check_is_fitted

__all__ = ["OUTPUTS", "OUTPUT_COLUMNS", "declared_outputs", "scores_frame"]

if TYPE_CHECKING:
    import pandas as pd

#: The outputs beyond the selection (``scores_``, ``ranking_``, ``support_``) that an estimator
#: may declare in its ``_outputs`` (docs/contract.md, "Declared outputs"): a declared output is
#: set by every fit with the shape given here (p = ``n_features_in_``, K = ``len(classes_)``),
#: so that ``sparsefs.tl``, the CLI and the plots read what a class declares instead of probing
#: fitted attributes (:func:`declared_outputs`; also exported by :mod:`sparsefs.base`).
OUTPUTS: dict[str, str] = {
    "pvalues_": "(p,) float: a p-value per feature (NaN where the test does not apply)",
    "qvalues_": "(p,) float: the p-values adjusted by the estimator's FDR / FWER procedure",
    "frequencies_": "(p,) float: the fraction of resamples that selected each feature",
    "weights_": "(p,) float: one nonnegative weight per feature (the method's own statistic)",
    "class_rankings_": "(K, p) int: a ranking per class, rows in the order of classes_",
    "class_supports_": "(K, p) bool: the selection per class, rows in the order of classes_",
    "class_centers_": "(K, p) float: a centre per class, with shared_center_ (p,), the "
                      "centre of a feature that is not selected",
}

#: The declared per-feature outputs that :func:`scores_frame` adds, and their column names.
OUTPUT_COLUMNS: dict[str, str] = {
    "frequencies_": "frequency",
    "pvalues_": "pvalue",
    "qvalues_": "qvalue",
}


def declared_outputs(estimator) -> frozenset[str]:
    """The outputs (names in :data:`OUTPUTS`) that ``estimator``'s class declares.

    The declaration is the class attribute ``_outputs`` of the sparsefs estimators
    (:mod:`sparsefs.base`; docs/contract.md, "Declared outputs").

    Parameters
    ----------
    estimator : object
        An estimator instance or class; one without the declaration declares none.

    Returns
    -------
    frozenset of str
    """
    cls = estimator if isinstance(estimator, type) else type(estimator)
    return frozenset(getattr(cls, "_outputs", ()))


def scores_frame(estimator, feature_names=None, *, sort: bool = True,
                 outputs: bool = False) -> "pd.DataFrame":
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
    outputs : bool, default=False
        Also the per-feature outputs the estimator declares (:data:`OUTPUT_COLUMNS`:
        ``frequency``, ``pvalue``, ``qvalue``, as float64, NaN kept).

    Returns
    -------
    pandas.DataFrame
        Columns ``feature``, ``index``, ``score``, ``rank``, ``selected`` (then the declared
        outputs, in the order of :data:`OUTPUT_COLUMNS`).

    Examples
    --------
    >>> import numpy as np
    >>> from sparsefs.selection import FisherScore
    >>> from sparsefs.utils import scores_frame
    >>> X = np.array([[0.0, 1.0], [0.1, 1.0], [1.0, 0.9], [1.1, 1.1]]); y = np.array([0, 0, 1, 1])
    >>> frame = scores_frame(FisherScore(1).fit(X, y), outputs=True)
    >>> list(frame.columns)
    ['feature', 'index', 'score', 'rank', 'selected', 'pvalue']
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
    columns = {
        "feature": feature_names,
        "index": np.arange(p),
        "score": estimator.scores_,
        "rank": estimator.ranking_,
        "selected": estimator.support_,
    }
    if outputs:
        declared = declared_outputs(estimator)
        columns.update({name: np.asarray(getattr(estimator, attr), dtype=np.float64)
                        for attr, name in OUTPUT_COLUMNS.items() if attr in declared})
    frame = pd.DataFrame(columns)
    return frame.sort_values("rank", kind="stable").reset_index(drop=True) if sort else frame
