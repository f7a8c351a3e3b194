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
"""

from __future__ import annotations

from dataclasses import dataclass

import dask
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


def _tile_moments(tile, y, n_classes: int, within: bool, extremes: str | None) -> dict:
    """Partial moments of one tile (its rows ``y`` are class indices)."""
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
