"""The vocabulary of the experiment specifications: protocols, metrics, modes, built-in
downstream estimators, key checking, the plain-data view of values and the k grid."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

PROTOCOLS: tuple[str, ...] = ("supervised", "unsupervised", "clustering", "regression",
                               "survival")
"""The evaluation protocols (see ``docs/harness.md``): class labels (``supervised``),
clusters (``unsupervised``, ``clustering``), a continuous target (``regression``) and a
censored survival target (``survival``; docs/outcomes.md)."""

OUTCOME_PROTOCOLS: tuple[str, ...] = ("regression", "survival")
"""The protocols whose target is not class labels."""

MODES: tuple[str, ...] = ("rank", "refit", "own", "all")
"""How a method is turned into feature subsets: ``rank`` (fit once per fold, top-k of its
ranking for every k), ``refit`` (one fit per k with ``n_features_to_select=k``), ``own`` (one
fit with the given parameters; the method's own rule decides the count), ``all`` (no
selection: every feature)."""

SCHEMES: tuple[str, ...] = ("kfold", "split", "none")
PREPROCESSING: tuple[str, ...] = ("zscore", "smote")

SUPERVISED_METRICS: tuple[str, ...] = (
    "accuracy",
    "error",
    "precision_macro",
    "recall_macro",
    "f1_macro",
    "roc_auc",
)
"""Metrics of the supervised protocol, computed on each test fold."""

UNSUPERVISED_METRICS: tuple[str, ...] = ("acc", "nmi")
"""Metrics of the unsupervised protocol (k-means on the selected features)."""

CLUSTERING_METRICS: tuple[str, ...] = ("cer", "acc", "nmi")
"""Metrics of the clustering protocol (the clusterer's own labels)."""

REGRESSION_METRICS: tuple[str, ...] = ("r2", "rmse")
"""Metrics of the regression protocol (a model of the continuous target on the selected
features, on each test fold)."""

SURVIVAL_METRICS: tuple[str, ...] = ("c_index",)
"""Metrics of the survival protocol: Harrell's concordance index of a Cox model's risk score
on each test fold (:func:`sparsefs.metrics.concordance_index`)."""

_PROTOCOL_METRICS = {
    "supervised": SUPERVISED_METRICS,
    "unsupervised": UNSUPERVISED_METRICS,
    "clustering": CLUSTERING_METRICS,
    "regression": REGRESSION_METRICS,
    "survival": SURVIVAL_METRICS,
}
_DEFAULT_METRICS = {
    "supervised": ("accuracy", "precision_macro", "recall_macro", "f1_macro", "roc_auc"),
    "unsupervised": UNSUPERVISED_METRICS,
    "clustering": CLUSTERING_METRICS,
    "regression": REGRESSION_METRICS,
    "survival": SURVIVAL_METRICS,
}
_DEFAULT_ESTIMATORS = {
    "supervised": ("svm", "nb", "knn", "tree"),
    "unsupervised": ("kmeans",),
    "clustering": ("self",),
    "regression": ("ridge",),
    "survival": ("cox",),
}
BUILTIN_ESTIMATORS: tuple[str, ...] = ("svm", "nb", "knn", "tree", "self", "kmeans", "ridge",
                                       "cox")
"""Downstream estimators known by name: ``svm`` (linear SVM, C=1), ``nb`` (Gaussian naive
Bayes), ``knn`` (5 nearest neighbours), ``tree`` (decision tree), ``self`` (the method's own
``predict`` or ``labels_``), ``kmeans`` (k-means, the unsupervised protocol), ``ridge``
(ridge regression with its penalty chosen by leave-one-out CV on the training rows, the
regression protocol), ``cox`` (a ridge-penalised Cox model, the survival protocol)."""


def _check_keys(data: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    if not isinstance(data, Mapping):
        raise TypeError(f"{where} must be a table (mapping), got {type(data).__name__}.")
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ValueError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; allowed keys are "
            f"{', '.join(allowed)}."
        )


def _jsonable(value: Any) -> Any:
    """A plain-data view of spec values (for hashing, metadata and reports)."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, type):
        return f"{value.__module__}:{value.__qualname__}"
    return repr(value)


# --------------------------------------------------------------------------------------------
# the k grid
# --------------------------------------------------------------------------------------------


def parse_k_grid(value: Any) -> tuple[int, ...]:
    """Parse a grid of numbers of selected features.

    Parameters
    ----------
    value : int, str or sequence of int
        An int ``k``; a range ``"a:b"`` (inclusive) or ``"a:b:step"``; a comma-separated list
        ``"5,10,20"``; or a sequence of ints (and range strings).

    Returns
    -------
    tuple of int
        Sorted, without duplicates, all >= 1.

    Raises
    ------
    ValueError
        If the grid is empty or holds a value that is not a positive integer.

    Examples
    --------
    >>> parse_k_grid("1:5")
    (1, 2, 3, 4, 5)
    >>> parse_k_grid("10:50:20")
    (10, 30, 50)
    >>> parse_k_grid([20, "5,10", 5])
    (5, 10, 20)
    """
    out: list[int] = []

    def add(item: Any) -> None:
        if isinstance(item, bool | np.bool_):
            raise ValueError(f"k grid: {item!r} is a bool, not a number of features.")
        if isinstance(item, int | np.integer):
            out.append(int(item))
            return
        if isinstance(item, float) and item.is_integer():
            out.append(int(item))
            return
        if isinstance(item, str):
            text = item.strip()
            if "," in text:
                for part in text.split(","):
                    if part.strip():
                        add(part)
                return
            if ":" in text:
                parts = text.split(":")
                try:
                    nums = [int(p) for p in parts]
                except ValueError:
                    raise ValueError(
                        f"k grid {item!r}: a range is 'first:last' or 'first:last:step' with "
                        "integers, e.g. '1:80'."
                    ) from None
                if len(nums) not in (2, 3) or (len(nums) == 3 and nums[2] < 1):
                    raise ValueError(f"k grid {item!r}: expected 'first:last[:step]', step >= 1.")
                step = nums[2] if len(nums) == 3 else 1
                out.extend(range(nums[0], nums[1] + 1, step))
                return
            try:
                out.append(int(text))
                return
            except ValueError:
                raise ValueError(
                    f"k grid {item!r}: give an int, 'first:last[:step]' or '5,10,20'."
                ) from None
        if isinstance(item, Sequence):
            for sub in item:
                add(sub)
            return
        raise ValueError(f"k grid: cannot read {item!r} as numbers of features.")

    add(value)
    grid = sorted(set(out))
    if not grid:
        raise ValueError(f"k grid {value!r} is empty.")
    if grid[0] < 1:
        raise ValueError(f"k grid {value!r} holds {grid[0]}; every k must be >= 1.")
    return tuple(grid)
