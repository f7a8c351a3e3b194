"""Sparse l1 / l2 center statistics of a dask array, and predictions per row block.

l2: class means (and the pooled within-class spread) from one pass of one-hot moments on any
chunking (:mod:`sparsefs._dask._moments`), then the closed forms of
:func:`sparsefs._kernels.sparse_centers.l2_centers`. Equal to the in-memory statistics up to the
order of the float64 sums (relative ``~1e-15``).

l1: class medians and the weighted median need every row of a feature, so X is rechunked to
feature blocks (:func:`sparsefs._dask._core.to_feature_blocks`) and the in-memory kernel
:func:`sparsefs._kernels.sparse_centers.l1_centers` runs on each block: its per-feature results
do not depend on the other features, so the statistics are *identical* to the in-memory ones.
"""

from __future__ import annotations

import dask
import dask.array as da
import numpy as np

from sparsefs._dask._core import raise_nonfinite, to_feature_blocks
from sparsefs._dask._moments import assemble, class_moments_delayed
from sparsefs._kernels import sparse_centers as _kernel

__all__ = ["center_stats", "decision_function", "fit", "predict"]


def _l2_stats(X, y_idx, n_classes: int, balanced: bool, spread: bool, name: str):
    mom = assemble(
        list(dask.compute(*class_moments_delayed(X, y_idx, n_classes, within=spread))), name
    )
    counts = mom.counts
    means = mom.sums / counts[:, None]
    finite = bool(np.isfinite(means).all())
    # The closed forms of _kernels.sparse_centers.l2_centers, from the class means.
    weight = np.ones(n_classes) if balanced else counts
    with np.errstate(over="ignore", invalid="ignore"):
        shared = weight @ means / weight.sum()
        gains = np.zeros(means.shape[1])
        for c in range(n_classes):
            dev = means[c] - shared
            dev *= dev
            if not balanced:
                dev *= weight[c]
            gains += dev
    sd = None
    if spread and finite:
        dof = X.shape[0] - n_classes
        sd = np.sqrt(mom.within / dof) if dof > 0 else np.zeros(X.shape[1])
    return _kernel.CenterStats(means, shared, gains, counts, finite, sd)


def _l1_block(block, y_idx, n_classes: int, balanced: bool) -> dict:
    T = np.asarray(block)
    stats = _kernel.l1_centers(T, y_idx, n_classes, balanced=balanced, n_threads=1)
    out = {"stats": stats, "nan": False, "inf": False}
    if not stats.finite:
        with np.errstate(invalid="ignore"):
            out["nan"] = bool(np.isnan(T).any())
            out["inf"] = bool(np.isinf(T).any())
    return out


def _l1_stats(X, y_idx, n_classes: int, balanced: bool, name: str):
    Xf = to_feature_blocks(X)
    fn = dask.delayed(_l1_block, pure=True)
    blocks = Xf.to_delayed()[0]
    labels = dask.delayed(np.asarray(y_idx, dtype=np.intp))  # one key, not one copy per task
    parts = dask.compute(*[fn(b, labels, n_classes, balanced) for b in blocks])
    raise_nonfinite(name, any(p["nan"] for p in parts), any(p["inf"] for p in parts))
    stats = [p["stats"] for p in parts]
    return _kernel.CenterStats(
        class_centers=np.concatenate([s.class_centers for s in stats], axis=1),
        shared_center=np.concatenate([s.shared_center for s in stats]),
        gains=np.concatenate([s.gains for s in stats]),
        counts=stats[0].counts,
        finite=all(s.finite for s in stats),
        spread=np.concatenate([s.spread for s in stats]),
    )


def center_stats(X, y_idx: np.ndarray, n_classes: int, *, norm: str, balanced: bool,
                 spread: bool, estimator_name: str) -> _kernel.CenterStats:
    """:class:`~sparsefs._kernels.sparse_centers.CenterStats` of a dask array.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
    y_idx : ndarray of shape (n_samples,)
    n_classes : int
    norm : {"l2", "l1"}
    balanced : bool
    spread : bool
        Also the pooled within-class spread (always computed for l1).
    estimator_name : str

    Returns
    -------
    CenterStats
        numpy arrays.
    """
    if norm == "l2":
        return _l2_stats(X, y_idx, n_classes, balanced, spread, estimator_name)
    return _l1_stats(X, y_idx, n_classes, balanced, estimator_name)


def decision_blocks(X, features, class_centers, shared_center, norm, scale,
                    unit: float = 1.0) -> da.Array:
    """:func:`~sparsefs._kernels.sparse_centers.center_scores` per row block, lazily.

    Only the selected columns are read; they are rechunked to one column chunk (``k``
    columns: small), and each row block gives its rows' scores.

    Returns
    -------
    dask.array.Array of shape (n_samples, n_classes), float64
    """
    features = np.asarray(features, dtype=np.intp)
    k = features.size
    C = class_centers.shape[0]
    sub_centers = class_centers[:, features]
    sub_shared = shared_center[features]
    sub_scale = None if scale is None else np.asarray(scale)[features]
    if k == 0:
        return da.zeros((X.shape[0], C), chunks=(X.chunks[0], C))
    Xs = X[:, features].rechunk({1: -1})

    def block_scores(block):
        return _kernel.center_scores(block, np.arange(k), sub_centers, sub_shared, norm,
                                     sub_scale, unit)

    return Xs.map_blocks(block_scores, chunks=(Xs.chunks[0], (C,)), dtype=np.float64)


# --------------------------------------------------------------------------------------------
# Estimator glue (called by SparseCenterClassifier)
# --------------------------------------------------------------------------------------------


def fit(estimator, X, y_idx: np.ndarray) -> None:
    """``SparseCenterClassifier._fit`` on a dask array: statistics here, then ``_store``.

    The estimator has resolved ``n_features_to_select_`` (its own default included).
    """
    name = type(estimator).__name__
    stats = center_stats(
        X, y_idx, estimator.classes_.shape[0], norm=estimator.norm,
        balanced=estimator.objective == "balanced", spread=estimator.standardize,
        estimator_name=name,
    )
    if not stats.finite:
        raise ValueError(f"{name}: the class statistics overflow float64; rescale X.")
    estimator._store(stats)


def decision_function(estimator, X) -> da.Array:
    """``decision_function`` of a fitted sparse center classifier on a dask array (lazy)."""
    from sklearn.utils.validation import check_is_fitted

    from sparsefs._dask._core import check_dask_array

    check_is_fitted(estimator, "support_")
    X = check_dask_array(X, type(estimator).__name__)
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input."
        )
    scores = decision_blocks(X, estimator._support_idx, estimator.class_centers_,
                             estimator.shared_center_, estimator.norm, estimator.scale_,
                             estimator.unit_)
    if scores.shape[1] == 2:
        return scores[:, 1] - scores[:, 0]
    return scores


def predict(estimator, X) -> da.Array:
    """``predict`` on a dask array: a lazy dask array of labels, one block per row block."""
    scores = decision_function(estimator, X)
    classes = estimator.classes_
    if scores.ndim == 1:
        return scores.map_blocks(lambda s: classes[(s > 0).astype(np.intp)], dtype=classes.dtype)
    return scores.map_blocks(lambda s: classes[np.argmax(s, axis=1)], drop_axis=1,
                             dtype=classes.dtype)
