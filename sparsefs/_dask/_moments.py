"""Per-class moments of a dask array in one pass over its blocks.

Every tile (a block of rows and columns) gives, per class, its count, its column sums and its
within-class sum of squared deviations from the *tile's* class means (exact: residuals, no
cancellation); the partials of the row blocks are merged with the pairwise update of Chan,
Golub & LeVeque (1979),

.. math::

    M_{ab} = M_a + M_b + \\frac{n_a n_b}{n_a + n_b} (\\bar x_a - \\bar x_b)^2,

so one read of X gives the class means and the within-class scatter that the in-memory
kernels get from two passes. The two differ only by the order of the float64 sums: relative
differences of order ``1e-15 * log2(number of row blocks)``.

Sparse tiles (scipy CSR; CSC is converted) are read in one compiled pass over their stored
values (:func:`_csr_tile_pass`): per class and column, the stored values' count, sum and
Welford scatter about their own mean; the implicit zeros of the class, a group of mean 0 and
scatter 0, are then merged in by the same update (:func:`_sparse_tile_moments`). Nothing is
densified, float32 values are read as float32 and accumulated in float64, and the scatter is
formed from residuals (no ``sum x^2 - n m^2`` cancellation). Extra memory per tile:
``O(n_classes x n_features)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import dask
import numba
import numpy as np
import scipy.sparse as sp

from sparsefs._dask._core import raise_nonfinite, reduce_blocks

__all__ = ["DaskMoments", "assemble", "class_moments", "class_moments_delayed"]


@dataclass(frozen=True)
class DaskMoments:
    """Counts, class sums and within-class scatter of every feature.

    Attributes
    ----------
    counts : ndarray of shape (n_classes,)
    sums : ndarray of shape (n_classes, n_features)
    m2 : ndarray of shape (n_classes, n_features) or None
        Sum of squared deviations from the class mean, per class.
    colmax, colmin, absmax : ndarray of shape (n_features,) or None
        Column maxima, minima (``extremes="minmax"``) or largest magnitudes
        (``extremes="absmax"``).
    """

    counts: np.ndarray
    sums: np.ndarray
    m2: np.ndarray | None
    colmax: np.ndarray | None = None
    colmin: np.ndarray | None = None
    absmax: np.ndarray | None = None

    @property
    def means(self) -> np.ndarray:
        """Class means (0 for an empty class)."""
        return self.sums / np.maximum(self.counts, 1.0)[:, None]

    @property
    def within(self) -> np.ndarray:
        """Within-class sum of squares of every feature."""
        return self.m2.sum(axis=0)


def _indicator(y: np.ndarray, n_classes: int) -> sp.csr_array:
    m = y.shape[0]
    return sp.csr_array((np.ones(m), (y, np.arange(m))), shape=(n_classes, m))


@numba.njit(cache=True, nogil=True)
def _csr_tile_pass(data, indices, indptr, y, acc, col_nnz, colmax, colmin, absmax, within,
                   extremes):  # pragma: no cover - compiled
    """One pass over the stored values of a CSR tile (float64 accumulators, in place).

    ``acc[c, j]`` holds, for class ``c`` and column ``j``: the sum of the stored values and,
    when ``within``, their count, Welford's running mean and sum of squared deviations (one
    record per (class, column): the four fields share a cache line, ~1.5x faster than four
    arrays at 20000 columns). Per column: ``col_nnz`` and the extremes of the stored values
    (``extremes`` 1: max and min, 2: largest magnitude).
    """
    for i in range(indptr.shape[0] - 1):
        c = y[i]
        for t in range(indptr[i], indptr[i + 1]):
            v = np.float64(data[t])
            j = indices[t]
            acc[c, j, 0] += v
            if within:
                k = acc[c, j, 1] + 1.0
                acc[c, j, 1] = k
                mean = acc[c, j, 2]
                delta = v - mean
                mean += delta / k
                acc[c, j, 2] = mean
                acc[c, j, 3] += delta * (v - mean)
            if extremes == 1:
                col_nnz[j] += 1.0
                if v > colmax[j]:
                    colmax[j] = v
                if v < colmin[j]:
                    colmin[j] = v
            elif extremes == 2:
                a = abs(v)
                if a > absmax[j]:
                    absmax[j] = a


def _sparse_tile_moments(tile, y, n_classes: int, within: bool, extremes: str | None) -> dict:
    """:func:`_tile_moments` of a scipy.sparse tile, from its stored values only."""
    T = tile if tile.format == "csr" else sp.csr_array(tile)
    n, p = T.shape
    data = T.data
    if data.dtype.kind != "f":
        data = data.astype(np.float64)
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    acc = np.zeros((n_classes, p, 4 if within else 1))
    ext = {"minmax": 1, "absmax": 2}.get(extremes, 0)
    size1 = p if ext else 1
    col_nnz = np.zeros(size1)
    colmax, colmin = np.full(size1, -np.inf), np.full(size1, np.inf)
    absmax = np.zeros(size1)
    _csr_tile_pass(data, T.indices, T.indptr, np.ascontiguousarray(y, dtype=np.intp), acc,
                   col_nnz, colmax, colmin, absmax, within, ext)
    sums = np.ascontiguousarray(acc[:, :, 0])
    out = {"counts": counts, "nan": False, "inf": False, "sums": sums}
    if not np.isfinite(sums).all():  # NaN/inf among the stored values, or an overflow
        out["nan"] = bool(np.isnan(data).any())
        out["inf"] = bool(np.isinf(data).any())
    if within:
        # merge the class's implicit zeros (count n_c - nnz, mean 0, scatter 0): Chan's update
        nnz, mean_nz = acc[:, :, 1], acc[:, :, 2]
        with np.errstate(over="ignore", invalid="ignore"):
            factor = nnz * (counts[:, None] - nnz) / np.maximum(counts, 1.0)[:, None]
            out["m2"] = acc[:, :, 3] + factor * (mean_nz * mean_nz)
    if ext == 1:
        has_zero = col_nnz < n  # an implicit zero in the column
        out["colmax"] = np.where(has_zero, np.maximum(colmax, 0.0), colmax)
        out["colmin"] = np.where(has_zero, np.minimum(colmin, 0.0), colmin)
    elif ext == 2:
        out["absmax"] = absmax
    return out


def _tile_moments(tile, y, n_classes: int, within: bool, extremes: str | None) -> dict:
    """Partial moments of one tile (its rows ``y`` are class indices)."""
    if sp.issparse(tile):
        return _sparse_tile_moments(tile, y, n_classes, within, extremes)
    T = np.asarray(tile, dtype=np.float64)
    counts = np.bincount(y, minlength=n_classes).astype(np.float64)
    Yt = _indicator(y, n_classes)
    out = {"counts": counts, "nan": False, "inf": False}
    with np.errstate(over="ignore", invalid="ignore"):
        sums = np.asarray(Yt @ T)
        if not np.isfinite(sums).all():  # NaN/inf in the tile, or an overflow: scan it
            out["nan"] = bool(np.isnan(T).any())
            out["inf"] = bool(np.isinf(T).any())
        out["sums"] = sums
        if within:
            R = T - (sums / np.maximum(counts, 1.0)[:, None])[y]
            R *= R
            out["m2"] = np.asarray(Yt @ R)
    if extremes == "minmax":
        out["colmax"] = T.max(axis=0)
        out["colmin"] = T.min(axis=0)
    elif extremes == "absmax":
        out["absmax"] = np.abs(T).max(axis=0)
    return out


def _merge_two(a: dict, b: dict) -> dict:
    n_a, n_b = a["counts"], b["counts"]
    n = n_a + n_b
    out = {"counts": n, "sums": a["sums"] + b["sums"], "nan": a["nan"] or b["nan"],
           "inf": a["inf"] or b["inf"]}
    if "m2" in a:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            delta = b["sums"] / np.maximum(n_b, 1.0)[:, None] - a["sums"] / np.maximum(
                n_a, 1.0
            )[:, None]
            factor = np.where(n > 0, n_a * n_b / np.maximum(n, 1.0), 0.0)
            out["m2"] = a["m2"] + b["m2"] + factor[:, None] * (delta * delta)
    if "colmax" in a:
        out["colmax"] = np.maximum(a["colmax"], b["colmax"])
        out["colmin"] = np.minimum(a["colmin"], b["colmin"])
    if "absmax" in a:
        out["absmax"] = np.maximum(a["absmax"], b["absmax"])
    return out


def _merge(*parts: dict) -> dict:
    out = parts[0]
    for part in parts[1:]:
        out = _merge_two(out, part)
    return out


def class_moments_delayed(X, y_idx: np.ndarray, n_classes: int, *, within: bool = True,
                          extremes: str | None = None) -> list:
    """The delayed per-column-block partials (compute them with other work in one call)."""
    return reduce_blocks(
        X, _tile_moments, _merge, row_args=[np.asarray(y_idx, dtype=np.intp)],
        extra=[n_classes, within, extremes],
    )


def assemble(parts: list[dict], estimator_name: str) -> DaskMoments:
    """Concatenate the column blocks' partials; raise on NaN or infinity in X."""
    raise_nonfinite(estimator_name, any(p["nan"] for p in parts), any(p["inf"] for p in parts))
    cat = lambda key: np.concatenate([p[key] for p in parts], axis=-1)  # noqa: E731
    has = lambda key: key in parts[0]  # noqa: E731
    return DaskMoments(
        counts=parts[0]["counts"],
        sums=cat("sums"),
        m2=cat("m2") if has("m2") else None,
        colmax=cat("colmax") if has("colmax") else None,
        colmin=cat("colmin") if has("colmin") else None,
        absmax=cat("absmax") if has("absmax") else None,
    )


def class_moments(X, y_idx: np.ndarray, n_classes: int, *, within: bool = True,
                  extremes: str | None = None, estimator_name: str = "sparsefs") -> DaskMoments:
    """Class counts, sums, within-class scatter (and column extremes) in one pass.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        Any chunking.
    y_idx : ndarray of shape (n_samples,)
        Class indices ``0..n_classes-1`` (zeros for the plain column moments).
    n_classes : int
    within : bool, default=True
        Also the within-class sums of squared deviations.
    extremes : {None, "minmax", "absmax"}, default=None
        Also the column maxima and minima, or the largest magnitudes.
    estimator_name : str
        For the error on NaN or infinity in X.

    Returns
    -------
    DaskMoments
    """
    parts = dask.compute(*class_moments_delayed(X, y_idx, n_classes, within=within,
                                                extremes=extremes))
    return assemble(list(parts), estimator_name)
