"""Pearson correlations of the columns of a dask array with a continuous target, one pass.

Every tile gives its row count, column sums, the sum of squared deviations from the tile's
own column means (dense tiles: residuals, no cancellation; sparse tiles: from the stored
values' sums of squares) and :math:`\\sum_i x_{ij}(y_i - \\bar y)` with the target centred
once on the client (it is small). The partials of the row blocks merge exactly: counts, sums
and cross products add, the squared deviations by the pairwise update of Chan, Golub &
LeVeque. Columns whose sums overflow, or whose values are tiny (squares underflow), are the few
recomputed by the in-memory kernel (``X[:, cols]``).
"""

from __future__ import annotations

import dask
import numpy as np
import scipy.sparse as sp

from sparsefs._dask._core import raise_nonfinite, reduce_blocks
from sparsefs._kernels import univariate_score as _kernel
from sparsefs._kernels.arrays import to_dense

__all__ = ["dask_correlations"]


def _tile(tile, yc):
    if sp.issparse(tile):
        T = sp.csr_array(tile)
        n = T.shape[0]
        data = T.data.astype(np.float64)
        s1 = np.bincount(T.indices, weights=data, minlength=T.shape[1])
        sq = np.bincount(T.indices, weights=data * data, minlength=T.shape[1])
        with np.errstate(over="ignore", invalid="ignore"):
            m2 = np.maximum(sq - s1 * s1 / max(n, 1), 0.0)
        sxy = np.asarray(T.T @ yc).ravel()
        bad = not np.isfinite(data).all()
        nan = bool(np.isnan(data).any()) if bad else False
    else:
        T = np.asarray(tile, dtype=np.float64)
        n = T.shape[0]
        with np.errstate(over="ignore", invalid="ignore"):
            s1 = T.sum(axis=0)
            R = T - s1 / max(n, 1)
            m2 = np.einsum("ij,ij->j", R, R)
            sxy = yc @ T
        bad = not np.isfinite(s1).all()
        nan = bool(np.isnan(T).any()) if bad else False
    inf = bad and not nan
    return {"n": float(n), "s1": s1, "m2": m2, "sxy": sxy, "nan": nan, "inf": inf}


def _merge(*parts):
    out = parts[0]
    for b in parts[1:]:
        a = out
        n = a["n"] + b["n"]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            delta = b["s1"] / max(b["n"], 1.0) - a["s1"] / max(a["n"], 1.0)
            m2 = a["m2"] + b["m2"] + (a["n"] * b["n"] / max(n, 1.0)) * delta * delta
        out = {"n": n, "s1": a["s1"] + b["s1"], "m2": m2, "sxy": a["sxy"] + b["sxy"],
               "nan": a["nan"] or b["nan"], "inf": a["inf"] or b["inf"]}
    return out


def dask_correlations(X, y: np.ndarray, estimator_name: str = "UnivariateScore"):
    """Pearson correlations of every column of the dask array ``X`` with ``y``.

    Returns
    -------
    sparsefs._kernels.univariate_score.CorrelationResult
    """
    y = np.asarray(y, dtype=np.float64)
    ys = y / max(float(np.abs(y).max()), 1e-300)
    yc = ys - ys.mean()
    syy = float(yc @ yc)
    parts = dask.compute(*reduce_blocks(X, _tile, _merge, row_args=[yc]))
    raise_nonfinite(estimator_name, any(p["nan"] for p in parts),
                    any(p["inf"] for p in parts))
    s1 = np.concatenate([p["s1"] for p in parts])
    m2 = np.concatenate([p["m2"] for p in parts])
    sxy = np.concatenate([p["sxy"] for p in parts])
    n = X.shape[0]
    p = s1.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):
        scale = np.abs(s1) / n
        finite = np.isfinite(m2) & np.isfinite(sxy) & np.isfinite(s1)
    # overflow, or a deviation at rounding level of the mean (a constant column, or values too
    # small for their squares): the in-memory kernel on those columns
    constant = finite & (m2 == 0.0)  # every tile constant at one value
    suspect = ~finite | (~constant & (m2 <= 1e-24 * np.maximum(scale * scale * n, 1e-300)))
    r = np.zeros(p)
    ok = ~suspect & ~constant
    r[ok] = sxy[ok] / np.sqrt(m2[ok] * syy)
    cols = np.flatnonzero(suspect)
    if cols.size:
        sub = X[:, cols].compute()
        sub = to_dense(sub, np.float64)
        res = _kernel.correlations(sub, y)
        r[cols], constant[cols] = res.r, res.constant
    return _kernel.CorrelationResult(np.clip(r, -1.0, 1.0), constant)
