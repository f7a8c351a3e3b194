"""l0 sparse k-means (:class:`~sparsefs.clustering.L0KMeans`) on a dask array.

The alternation of the in-memory estimator, with every pass over X written with dask:

* the column transform (centre and scale, or a power-of-two scale) from one pass of column
  moments, then applied lazily per row block;
* the first partition: the in-memory estimator's Hartigan–Wong k-means (``n_init`` k-means++
  starts, same generator) on the transformed X when it fits in ``INIT_SAMPLE_BYTES`` (then it
  is the in-memory estimator's first partition exactly), else on a seeded random sample of that
  many bytes of rows, whose centres then label every row;
* when the transformed X fits in ``INIT_SAMPLE_BYTES`` it is computed once, and the whole
  alternation (the restart search included) runs on it in memory: the in-memory estimator's
  fit exactly, without a scheduler round trip for each of its many small passes;
* otherwise, each C-step: when the selected weighted columns (n x s) fit in
  ``INIT_SAMPLE_BYTES``, they are computed into memory and the in-memory C-step runs on
  them (warm and fresh Hartigan–Wong starts, scored by the sparse objective, each
  candidate's BCSS from one pass over the row blocks): the same alternation as the
  in-memory estimator (``_sparse_kmeans._alternate``). Otherwise a warm-started Lloyd step
  in dask: iterations of **one pass** over the row blocks that assigns every row to its
  nearest centre on the selected (weighted) columns and, in the same pass, sums every
  column by cluster (a one-hot product, tree-reduced), until no label changes;
* the w-step (top-``s`` of the small per-feature BCSS vector) in numpy.

X is rechunked to row blocks holding every column (:func:`sparsefs._dask._core.to_row_blocks`).
Each candidate and each Lloyd iteration reads X once: persist X (``X = X.persist()``) when it
fits in the cluster's memory.
"""

from __future__ import annotations

import math

import dask
import numpy as np

from sparsefs._dask._core import raise_nonfinite, row_slices, to_row_blocks, tree_reduce
from sparsefs._dask._moments import class_moments
from sparsefs._kernels import kmeans as _km
from sparsefs._kernels import sparse_kmeans as _k

__all__ = ["fit", "predict"]

#: Bytes of transformed rows (float64) given to scikit-learn's k-means++ for the first partition.
INIT_SAMPLE_BYTES = 256 * 2**20
#: Lloyd passes per weighted k-means step, at most.
LLOYD_MAX_ITER = 300


def _transform_block(block, c, offset, sd, constant):
    """``(x / c - offset) / sd`` with constant columns at 0, as ``_column_transform``."""
    out = np.asarray(block, dtype=np.float64)
    if c != 1.0:
        out = out / c
    if offset is None:
        return out
    out = out - offset
    out[:, constant] = 0.0
    out /= sd
    return out


def column_transform(X, standardize: bool, name: str):
    """The lazily transformed X, its offset and scale (``_column_transform`` of the estimator).

    One pass of column moments (extremes, and the scatter when ``standardize``).
    """
    from sparsefs._kernels.sparse_kmeans_alternation import data_scale

    n, p = X.shape
    mom = class_moments(X, np.zeros(n, dtype=np.intp), 1, within=standardize,
                        extremes="minmax", estimator_name=name)
    colmax, colmin = mom.colmax, mom.colmin
    if not (np.isfinite(colmax).all() and np.isfinite(colmin).all()):
        raise_nonfinite(name, False, True)
    c = data_scale(colmax=colmax, colmin=colmin)
    if not standardize:
        Xt = X.map_blocks(_transform_block, c, None, None, None, dtype=np.float64)
        return Xt, np.zeros(p), c
    constant = colmax == colmin
    mean = mom.sums[0] / n / c
    mean[constant] = colmax[constant] / c
    sd = np.sqrt(mom.m2[0] / (c * c) / n)
    sd[constant] = 1.0
    Xt = X.map_blocks(_transform_block, c, mean, sd, constant, dtype=np.float64)
    return Xt, mean * c, sd * c


def _assign_block(block, cols, sw, centres, n_clusters):
    """Nearest centre of every row (weighted columns ``cols``), and the cluster sums."""
    T = np.asarray(block, dtype=np.float64)
    Z = T[:, cols]
    if sw is not None:
        Z *= sw
    dist = (Z * Z).sum(axis=1)[:, None] - 2.0 * (Z @ centres.T) + (centres * centres).sum(axis=1)
    labels = np.argmin(dist, axis=1).astype(np.intp)
    return labels, _sums_block(T, labels, n_clusters)


def _sums_block(T, labels, n_clusters):
    """Cluster sizes and sums of one block of rows: the k-means core's compiled pass."""
    counts, sums = _km.cluster_sums(T, labels, n_clusters)
    return {"counts": counts.astype(np.float64), "sums": sums}


def _add(*parts):
    return {"counts": sum(p["counts"] for p in parts), "sums": sum(p["sums"] for p in parts)}


def cluster_means(Xt, labels, n_clusters):
    """Cluster sizes and means of every column for given labels (one pass)."""
    rows = row_slices(Xt)
    fn = dask.delayed(_sums_block, pure=True)
    parts = [fn(b, labels[r], n_clusters) for b, r in zip(Xt.to_delayed()[:, 0], rows,
                                                          strict=True)]
    (total,) = dask.compute(tree_reduce(parts, _add))
    return total["counts"], total["sums"] / np.maximum(total["counts"], 1.0)[:, None]


def assign(Xt, cols, sw, centres, n_clusters):
    """Labels of every row (nearest centre) and the cluster sizes and means: one pass."""
    fn = dask.delayed(_assign_block, pure=True, nout=2)
    args = dask.delayed(cols), dask.delayed(sw), dask.delayed(centres)
    outs = [fn(b, *args, n_clusters) for b in Xt.to_delayed()[:, 0]]
    labels, total = dask.compute([o[0] for o in outs], tree_reduce([o[1] for o in outs], _add))
    counts = total["counts"]
    return np.concatenate(labels), counts, total["sums"] / np.maximum(counts, 1.0)[:, None]


def _farthest_block(block, labels, cols, sw, wmeans, movable):
    Z = np.asarray(block, dtype=np.float64)[:, cols]
    if sw is not None:
        Z *= sw
    dist = ((Z - wmeans[labels]) ** 2).sum(axis=1)
    dist[~movable[labels]] = -np.inf
    i = int(np.argmax(dist))
    return float(dist[i]), i


def fill_empty(Xt, labels, counts, means, cols, sw, n_clusters):
    """:func:`sparsefs._kernels.sparse_kmeans.fill_empty_clusters` on a dask array."""
    rows = row_slices(Xt)
    blocks = Xt.to_delayed()[:, 0]
    for k in np.flatnonzero(counts == 0):
        wmeans = means[:, cols] * (1.0 if sw is None else sw)
        fn = dask.delayed(_farthest_block, pure=True)
        found = dask.compute(*[fn(b, labels[r], cols, sw, wmeans, counts >= 2)
                               for b, r in zip(blocks, rows, strict=True)])
        best = int(np.argmax([d for d, _ in found]))  # the first block on ties
        i = rows[best].start + found[best][1]
        row = np.asarray(Xt[i].compute(), dtype=np.float64)
        old = labels[i]
        sums = means * np.maximum(counts, 1.0)[:, None]
        sums[old] -= row
        counts[old] -= 1
        labels[i], counts[k], sums[k] = k, 1, row
        means = sums / np.maximum(counts, 1.0)[:, None]
    return labels, counts, means


def weighted_kmeans(Xt, w, labels, means, n_clusters):
    """One weighted k-means step (Lloyd, warm-started at the current partition's means).

    Returns the labels, sizes and means (every column) of the new partition.
    """
    cols = np.flatnonzero(w > 0)
    if cols.size == 0:
        counts = np.bincount(labels, minlength=n_clusters).astype(np.float64)
        return labels, counts, means
    uniform = cols.size == w.shape[0] and np.all(w == w[0])
    sw = None if uniform or np.all(w[cols] == 1.0) else np.sqrt(w[cols])
    scale = 1.0 if sw is None else sw
    prev = labels
    for _ in range(LLOYD_MAX_ITER):
        centres = means[:, cols] * scale
        labels, counts, new_means = assign(Xt, cols, sw, centres, n_clusters)
        empty = counts == 0
        new_means[empty] = means[empty]  # an empty cluster keeps its centre
        means = new_means
        if np.array_equal(labels, prev):
            break
        prev = labels
    if (counts == 0).any():
        labels, counts, means = fill_empty(Xt, labels, counts, means, cols, sw, n_clusters)
    return labels, counts, means


def first_partitions(Xt, estimator, rng):
    """The first partitions: k-means++ on X (or a sample of rows), see the module docstring.

    Returns the list of the ``n_init`` starts' labels when X fits in ``INIT_SAMPLE_BYTES``
    (exactly the in-memory estimator's), else one partition: the best start on the sample,
    whose centres label every row; and the transformed X in memory when it fits (else None).
    """
    n, p = Xt.shape
    K = estimator.n_clusters
    m = int(min(n, max(K, INIT_SAMPLE_BYTES // (8 * p))))
    if m == n:
        Xs = np.asarray(Xt.compute(), dtype=np.float64)
        starts = _km.kmeans(Xs, K, n_init=estimator.n_init, seed=rng,
                        algorithm=estimator.algorithm, return_all=True)
        return [f.labels for f in starts], Xs
    idx = np.sort(rng.choice(n, size=m, replace=False))
    sample = np.asarray(Xt[idx].compute(), dtype=np.float64)
    best = _km.kmeans(sample, K, n_init=estimator.n_init, seed=rng, algorithm=estimator.algorithm)
    del sample
    labels, counts, means = assign(Xt, np.arange(p), None, best.centers, K)
    if (counts == 0).any():
        labels, counts, means = fill_empty(Xt, labels, counts, means, np.arange(p), None, K)
    return [labels], None


class _DaskOps:
    """The alternation's view of a dask X (``_sparse_kmeans._InMemory`` for dask arrays)."""

    def __init__(self, Xt):
        self.Xt = Xt

    def stats(self, labels, n_clusters):
        counts, means = cluster_means(self.Xt, labels, n_clusters)
        return counts, means, _k.bcss_from_means(counts, means)

    def columns(self, w):
        cols = np.flatnonzero(w > 0)
        Z = np.ascontiguousarray(self.Xt[:, cols].compute(), dtype=np.float64)
        return _km.weighted_columns(Z, w[cols])

    def _centred_stats(self):
        if getattr(self, "_centred", None) is None:
            n = self.Xt.shape[0]
            mean = np.asarray(self.Xt.mean(axis=0).compute(), dtype=np.float64)
            sq = np.asarray((self.Xt * self.Xt).sum(axis=0).compute(), dtype=np.float64)
            norms = np.sqrt(np.maximum(sq - n * mean**2, 0.0))
            self._centred = (mean, np.where(norms > 0, norms, np.inf))
        return self._centred

    def correlation_matrix(self, cols):
        """``|corr|`` among the columns ``cols`` (``InMemory.correlation_matrix``), in one
        pass reading those columns."""
        mean, norms = self._centred_stats()
        Z = np.asarray(self.Xt[:, cols].compute(), dtype=np.float64) - mean[cols]
        return np.abs(Z.T @ Z) / np.outer(norms[cols], norms[cols])

    def correlations(self, j):
        """``|corr(x_j, x_l)|`` for every column l (the in-memory ``InMemory.correlations``:
        centred inner products over the norms; 0 for constant columns)."""
        mean, norms = self._centred_stats()
        z = np.asarray(self.Xt[:, j].compute(), dtype=np.float64) - mean[j]
        inner = np.asarray((self.Xt.T @ z).compute(), dtype=np.float64)
        return np.abs(inner) / (norms * norms[j])

    def tail_scores(self):
        """``|excess kurtosis|`` of every column (``InMemory.tail_scores``)."""
        C = self.Xt - self.Xt.mean(axis=0)
        C2 = C * C
        m2 = np.asarray(C2.mean(axis=0).compute(), dtype=np.float64)
        m4 = np.asarray((C2 * C2).mean(axis=0).compute(), dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            k = np.where(m2 > 0, m4 / (m2 * m2) - 3.0, 0.0)
        return np.abs(k)


def fit(estimator, X) -> None:
    """``L0KMeans._fit`` on a dask array (the sparsity ``n_features_to_select`` given)."""
    from sparsefs._kernels.sparse_kmeans_alternation import Fit as _Fit
    from sparsefs._kernels.sparse_kmeans_alternation import InMemory as _InMemory
    from sparsefs._kernels.sparse_kmeans_alternation import restart_search as _restart_search
    from sparsefs._kernels.sparse_kmeans_alternation import starts as _starts

    name = type(estimator).__name__
    s = estimator.n_features_to_select_
    if s is None:
        raise ValueError(
            f"{name} on a dask array needs n_features_to_select (an int or a fraction): "
            "choosing it by the gap statistic refits on column-permuted copies of X, which "
            "is not supported for dask input."
        )
    n, p = X.shape
    K = estimator.n_clusters
    if n < K:
        raise ValueError(f"n_samples={n} should be >= n_clusters={K}.")
    X = to_row_blocks(X)
    Xt, estimator._x_offset, estimator._x_scale = column_transform(X, estimator.standardize,
                                                                   name)
    final_seed, _, _ = estimator._seeds()
    estimator.gap_ = None
    rng = np.random.default_rng(final_seed)
    partitions, in_memory = first_partitions(Xt, estimator, rng)
    w_step = estimator._w_step(s)
    # X computed whole for the first partitions: the alternation reads it in memory (the
    # restart search's thousands of small passes would each be a scheduler round trip:
    # 76 s instead of 0.3 s on 120 x 120 with a distributed client)
    ops = _DaskOps(Xt) if in_memory is None else _InMemory(in_memory)
    if 8 * n * min(int(s), p) <= INIT_SAMPLE_BYTES:  # the in-memory restart search
        search = _restart_search(ops, _starts(ops, partitions, K), w_step,
                                 max_iter=estimator.max_iter, tol=estimator.tol,
                                 solver=estimator._solver(rng),
                                 restarts=estimator._restarts((n, p)),
                                 subset_size=estimator._subset_size(s))
        estimator._search_result = search
        fit_ = search.fit
    else:  # warm-started Lloyd steps in dask passes, from the first start
        labels = partitions[0]
        counts, means, bcss = ops.stats(labels, K)
        w_prev = np.full(p, 1.0 / math.sqrt(p))
        w = w_step(bcss)
        history = [float(w @ bcss)]
        converged = _k.weight_change(w, w_prev) <= estimator.tol
        n_iter = 1
        while not converged and n_iter < estimator.max_iter:
            labels, counts, means = weighted_kmeans(Xt, w, labels, means, K)
            bcss = _k.bcss_from_means(counts, means)
            w_prev, w = w, w_step(bcss)
            history.append(float(w @ bcss))
            converged = _k.weight_change(w, w_prev) <= estimator.tol
            n_iter += 1
        fit_ = _Fit(labels, w, bcss, means, np.asarray(history), n_iter, bool(converged))
    estimator._store(fit_)
    estimator._set_selection(fit_.bcss, fit_.weights > 0)


def predict(estimator, X):
    """``predict`` on a dask array: a lazy dask array of labels, one block per row block."""
    from sklearn.utils.validation import check_is_fitted

    from sparsefs._dask._core import check_dask_array

    check_is_fitted(estimator, "cluster_centers_")
    name = type(estimator).__name__
    X = check_dask_array(X, name)
    if X.shape[1] != estimator.n_features_in_:
        raise ValueError(f"X has {X.shape[1]} features, but {name} is expecting "
                         f"{estimator.n_features_in_} features as input.")
    cols = np.flatnonzero(estimator.weights_ > 0)
    if cols.size == 0:
        import dask.array as da

        return da.zeros(X.shape[0], chunks=X.chunks[0], dtype=np.intp)
    sw = np.sqrt(estimator.weights_[cols])
    x_scale = estimator._x_scale
    scale = x_scale[cols] if np.ndim(x_scale) else x_scale
    offset = estimator._x_offset[cols]
    Cw = estimator._centers_fit[:, cols] * sw
    Xs = X[:, cols].rechunk({1: -1})

    def block_labels(block):  # the in-memory predict's arithmetic, per row block
        Xw = (np.asarray(block, dtype=np.float64) - offset) / scale * sw
        dist = (Xw * Xw).sum(axis=1)[:, None] - 2.0 * Xw @ Cw.T + (Cw * Cw).sum(axis=1)
        return np.argmin(dist, axis=1).astype(np.intp)

    return Xs.map_blocks(block_labels, drop_axis=1, dtype=np.intp)
