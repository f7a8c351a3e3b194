"""Dask input: detection, light validation, the chunking policy and the block reductions.

Chunking policy (``docs/dask.md``)
----------------------------------
* **Moments** (class sums, within-class scatter, column extremes: l2 centers, Fisher score,
  k-means statistics) accept any chunking: every block ("tile") gives a small partial result
  (``n_classes x block width``) and the partials of one column block are combined by a tree
  (:func:`reduce_blocks`), ``split_every`` at a time. Nothing is rechunked.
* **Per-feature medians** (l1 centers) need every row of a feature at once: X is rechunked to
  *feature blocks* (all rows, :func:`feature_block_width` columns, about
  ``TARGET_CHUNK_BYTES`` per block) unless it already has one row chunk and blocks of at most
  twice that size.
* **k-means** needs every (selected) feature of a row: X is rechunked to *row blocks* (all
  columns, about ``TARGET_CHUNK_BYTES`` per block) unless it already has one column chunk.

* **Sparse blocks** (scipy CSR/CSC, e.g. a stored ``.h5ad`` / zarr CSR matrix read by
  ``anndata.experimental.read_elem_lazy``): the moments only (FisherScore,
  ``SparseCenterClassifier(norm="l2")``), one compiled pass over each block's stored values,
  never densified, float32 values read as they are.

Memory bound: every task holds one block of X plus its float64 copy and small partials, so
the peak is about ``block bytes x 3 x (threads of all workers)`` plus the ``p x n_classes``
results (a few float64 arrays) on the client. Rechunking a row-chunked array to feature
blocks may hold several row chunks at once: store large arrays in tiles or feature blocks.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import dask
import dask.array as da
import numpy as np
import scipy.sparse as sp
from sklearn.base import is_classifier
from sklearn.utils.multiclass import check_classification_targets

#: Target bytes of one block (float64) when sparsefs rechunks (feature or row blocks).
TARGET_CHUNK_BYTES = 128 * 2**20
#: Partial results combined per node of the reduction tree.
SPLIT_EVERY = 8

_SUPPORTED = ("SparseCenterClassifier (l1, l2), FisherScore, UnivariateScore (continuous "
              "targets), L0KMeans, SMBA (penalty='l1')")
_SPARSE_SUPPORTED = ("FisherScore, UnivariateScore and SparseCenterClassifier(norm='l2') fit, "
                     "and transform")


def sparse_blocks_supported(estimator) -> bool:
    """Whether ``estimator``'s dask ``fit`` takes scipy.sparse blocks.

    The one-pass class moments (:mod:`sparsefs._dask._moments`) read the stored values of
    CSR blocks; the methods built on them alone take sparse blocks: ``FisherScore`` and
    ``SparseCenterClassifier(norm="l2")``. The l1 centers (medians over feature blocks) and
    the k-means / SMBA paths need dense blocks. An estimator says so by a
    ``_dask_sparse_blocks`` attribute (a bool, or a method for a parameter-dependent answer).
    """
    # a small protocol on the estimator (no estimator import here: the adapter layer depends
    # on the estimators' interface, not on their modules)
    flag = getattr(estimator, "_dask_sparse_blocks", False)
    return bool(flag() if callable(flag) else flag)


def check_dask_array(X, estimator_name: str, accept_sparse: bool = False) -> da.Array:
    """A 2-d floating dask array with known chunk sizes and at least one sample and feature.

    Floating dtypes are kept (float32 stays float32 on disk; the statistics are float64);
    integer and boolean arrays are cast to float64 lazily. Finiteness is checked by the
    estimators in the same pass that computes their statistics.

    Parameters
    ----------
    X : dask collection
    estimator_name : str
        For the error messages.
    accept_sparse : bool, default=False
        Also accept blocks that are scipy sparse matrices or arrays (``X._meta`` sparse, as
        ``anndata.experimental.read_elem_lazy`` gives for a stored CSR matrix). Blocks stay
        sparse; only the moment passes (:func:`sparse_blocks_supported`) take them.

    Returns
    -------
    dask.array.Array
    """
    if not isinstance(X, da.Array):
        raise TypeError(
            f"{estimator_name} accepts dask arrays, not {type(X).__name__}; convert a dask "
            "DataFrame with .to_dask_array(lengths=True)."
        )
    if X.ndim != 2:
        raise ValueError(f"{estimator_name} expects a 2-d dask array; got {X.ndim} dimension(s).")
    meta = getattr(X, "_meta", None)
    if meta is not None and not isinstance(meta, np.ndarray):
        if not sp.issparse(meta):
            raise TypeError(
                f"{estimator_name} accepts dask arrays of numpy or scipy.sparse blocks; these "
                f"blocks are {type(meta).__name__}."
            )
        if not accept_sparse:
            raise TypeError(
                f"{estimator_name} accepts dask arrays of numpy blocks here; these blocks are "
                f"{type(meta).__name__} (sparse dask blocks are supported by: "
                f"{_SPARSE_SUPPORTED})."
            )
    if any(math.isnan(c) for chunks in X.chunks for c in chunks):
        raise ValueError(
            f"{estimator_name} needs known chunk sizes; call X.compute_chunk_sizes() first."
        )
    n, p = X.shape
    if n < 1:
        raise ValueError(f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 "
                         "is required.")
    if p < 1:
        raise ValueError(f"Found array with 0 feature(s) (shape={X.shape}) while a minimum of 1 "
                         "is required.")
    kind = X.dtype.kind
    if kind == "f" and X.dtype.itemsize in (4, 8):
        return X
    if kind in "biuf":
        return X.astype(np.float64)
    raise ValueError(f"{estimator_name} needs numeric X; the dask array has dtype {X.dtype}.")


def labels_to_indices(y, n_samples: int, estimator_name: str, min_classes: int):
    """``(classes, y_idx)`` from labels ``y`` (numpy or dask: computed, it is small)."""
    if y is None:
        raise ValueError(
            f"{estimator_name} is supervised and requires y to be passed, but the target y is "
            "None."
        )
    if hasattr(y, "compute"):
        y = y.compute()
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(
            f"{estimator_name}: y has shape {y.shape}; expected ({n_samples},) to match X."
        )
    check_classification_targets(y)
    classes, y_idx = np.unique(y, return_inverse=True)
    if classes.shape[0] < min_classes:
        raise ValueError(
            f"{estimator_name} needs at least {min_classes} classes in y; got "
            f"{classes.shape[0]} class ({classes.tolist()!r})."
        )
    return classes, y_idx.astype(np.intp, copy=False)


def fit_dask(estimator, X, y, **fit_params):
    """The dask branch of :meth:`sparsefs.base._SparseEstimatorBase.fit`.

    Validates lightly (2-d, dtype, known chunks, labels), sets ``n_features_in_``,
    ``classes_`` (classifiers) and ``n_features_to_select_``, then calls the estimator's
    ``_fit_dask(X, y_idx)``.

    Parameters
    ----------
    estimator : sparsefs estimator
    X : dask.array.Array of shape (n_samples, n_features)
    y : array-like or dask array of shape (n_samples,), or None
    **fit_params : dict
        Passed to ``_fit_dask``.

    Returns
    -------
    estimator
    """
    from sparsefs._kernels.ranking import resolve_n_features_to_select

    name = type(estimator).__name__
    fit_hook = getattr(estimator, "_fit_dask", None)
    if fit_hook is None:
        raise TypeError(
            f"{name} does not accept dask arrays (dask support: {_SUPPORTED}); pass "
            "X.compute() if it fits in memory."
        )
    X = check_dask_array(X, name, accept_sparse=sparse_blocks_supported(estimator))
    n, p = X.shape
    y_idx = None
    if estimator._supervised and "classification" not in estimator._targets:
        # a continuous or survival target (small: computed), validated as in-memory fits
        from sparsefs.utils._targets import resolve_target

        if hasattr(y, "compute"):
            y = y.compute()
        if y is None:
            raise ValueError(f"{name} is supervised and requires y to be passed, but the "
                             "target y is None.")
        target = resolve_target(y, estimator._targets, name=name,
                                target_type=estimator._resolved_target_type())
        if target.y.shape[0] != n:
            raise ValueError(f"{name}: y has {target.y.shape[0]} values; X has {n} rows.")
        estimator.target_type_ = target.kind
        y_idx = target.y
    elif estimator._supervised:
        if y is not None:  # a continuous or survival y: the error that names what it takes
            from sparsefs.utils._targets import resolve_target

            resolve_target(y.compute() if hasattr(y, "compute") else y, estimator._targets,
                           name=name, target_type=estimator._resolved_target_type())
        classes, y_idx = labels_to_indices(y, n, name, estimator._min_classes)
        estimator.target_type_ = "classification"
        if is_classifier(estimator):
            estimator.classes_ = classes
    estimator.n_features_in_ = p
    if hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    estimator.n_features_to_select_ = resolve_n_features_to_select(
        estimator.n_features_to_select, p
    )
    fit_hook(X, y_idx, **fit_params)
    return estimator


def predict_dask(estimator, X, method: str = "predict"):
    """``predict`` / ``decision_function`` of a fitted estimator on a dask collection: its
    ``_<method>_dask`` hook (a lazy dask array), or a ``TypeError`` naming the estimator."""
    hook = getattr(estimator, f"_{method}_dask", None)
    if hook is None:
        raise TypeError(
            f"{type(estimator).__name__}.{method} does not accept dask arrays (dask support: "
            f"{_SUPPORTED}); pass X.compute() if it fits in memory."
        )
    return hook(X)


def transform_dask(estimator, X) -> da.Array:
    """``X[:, support_]`` of a dask array, lazily (the selected columns only are read)."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator, "support_")
    name = type(estimator).__name__
    X = check_dask_array(X, name, accept_sparse=True)  # a column selection: stays sparse
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {name} is expecting "
                         f"{estimator.n_features_in_} features as input.")
    return X[:, np.flatnonzero(estimator.support_)]


# --------------------------------------------------------------------------------------------
# Chunking policy
# --------------------------------------------------------------------------------------------


def feature_block_width(n_samples: int, n_features: int, itemsize: int = 8,
                        target_bytes: int = TARGET_CHUNK_BYTES) -> int:
    """Columns per feature block: about ``target_bytes`` with all rows."""
    return int(max(1, min(n_features, target_bytes // max(1, itemsize * n_samples))))


def to_feature_blocks(X: da.Array, target_bytes: int = TARGET_CHUNK_BYTES) -> da.Array:
    """X with one row chunk (every sample) and column blocks of about ``target_bytes``.

    When X's column chunks already give blocks of at most twice the target, only the row
    chunks are merged (each stored tile is read once, whole); otherwise the columns are
    rechunked too.
    """
    n, p = X.shape
    itemsize = X.dtype.itemsize
    if itemsize * n * max(X.chunks[1]) <= 2 * target_bytes:
        return X if X.numblocks[0] == 1 else X.rechunk({0: -1})
    return X.rechunk({0: -1, 1: feature_block_width(n, p, itemsize, target_bytes)})


def to_row_blocks(X: da.Array, target_bytes: int = TARGET_CHUNK_BYTES) -> da.Array:
    """X with one column chunk (every feature) and row blocks of about ``target_bytes``.

    Kept as is when it already has one column chunk and no block above twice the target.
    """
    n, p = X.shape
    itemsize = X.dtype.itemsize
    if X.numblocks[1] == 1 and itemsize * p * max(X.chunks[0]) <= 2 * target_bytes:
        return X
    rows = int(max(1, min(n, target_bytes // max(1, itemsize * p))))
    return X.rechunk({0: rows, 1: -1})


def row_slices(X: da.Array) -> list[slice]:
    """The row range of each row chunk of X."""
    edges = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(int)
    return [slice(int(a), int(b)) for a, b in itertools.pairwise(edges)]


# --------------------------------------------------------------------------------------------
# Block reductions
# --------------------------------------------------------------------------------------------


def tree_reduce(parts: list, combine: Callable, split_every: int = SPLIT_EVERY) -> Any:
    """Combine delayed partials ``split_every`` at a time until one is left."""
    combine_d = dask.delayed(combine, pure=True)
    while len(parts) > 1:
        parts = [
            combine_d(*parts[i : i + split_every]) if len(parts[i : i + split_every]) > 1
            else parts[i]
            for i in range(0, len(parts), split_every)
        ]
    return parts[0]


def reduce_blocks(
    X: da.Array,
    block_fn: Callable,
    combine: Callable,
    *,
    row_args: Sequence[np.ndarray] = (),
    extra: Sequence[Any] = (),
    split_every: int = SPLIT_EVERY,
) -> list:
    """Per column block, ``block_fn`` on every tile combined over the row blocks (a tree).

    Returns the delayed result of each column block, in order (compute them together with
    ``dask.compute``).

    Parameters
    ----------
    X : dask.array.Array
    block_fn : callable
        ``block_fn(tile, *row_args_slices, *extra)`` -> partial result.
    combine : callable
        ``combine(*partials)`` -> partial result (associative).
    row_args : sequence of ndarray
        Per-sample arrays (labels): each tile receives the slice of its rows.
    extra : sequence
        Further arguments passed to every ``block_fn`` call.
    split_every : int, default=8

    Returns
    -------
    list of dask.delayed.Delayed
    """
    blocks = X.to_delayed()
    rows = row_slices(X)
    fn = dask.delayed(block_fn, pure=True)
    # one graph key per row block and per-sample array, shared by that row's tiles
    row_parts = [[dask.delayed(np.asarray(a)[r]) for a in row_args] for r in rows]
    out = []
    for j in range(blocks.shape[1]):
        parts = [fn(blocks[i, j], *row_parts[i], *extra) for i in range(blocks.shape[0])]
        out.append(tree_reduce(parts, combine, split_every))
    return out


def raise_nonfinite(estimator_name: str, has_nan: bool, has_inf: bool) -> None:
    """The messages of scikit-learn's ``assert_all_finite`` for X."""
    if has_nan:
        raise ValueError(f"Input X contains NaN. ({estimator_name}, dask input)")
    if has_inf:
        raise ValueError(
            f"Input X contains infinity or a value too large for dtype('float64'). "
            f"({estimator_name}, dask input)"
        )
