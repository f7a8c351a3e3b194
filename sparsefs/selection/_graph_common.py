"""Shared glue of the graph-based unsupervised selectors (LaplacianScore, SPEC, MCFS, UDFS, NDFS).

Parameter constraints, input preparation (float64, CSR, at least two samples), the neighbour
count capped at ``n_samples - 1``, the kNN graph, and the rule for ``n_features_to_select=None``.
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp

from sparsefs._kernels.graphs import AffinityGraph, knn_affinity
from sparsefs.base import resolve_n_features_to_select
from sparsefs.utils._sklearn_compat import Interval, StrOptions

__all__ = [
    "AFFINITY_CONSTRAINTS",
    "DEFAULT_FRACTION",
    "as_float_input",
    "build_knn_graph",
    "check_n_clusters",
    "default_n_select",
    "effective_neighbors",
]

#: the fraction kept when ``n_features_to_select=None`` by methods without a selection rule
#: of their own (as scikit-learn's ``SelectPercentile`` keeps 10 % by default)
DEFAULT_FRACTION = 0.1

AFFINITY_CONSTRAINTS = {
    "n_neighbors": [Interval(Integral, 1, None, closed="left")],
    "affinity": [StrOptions({"heat", "binary", "cosine"})],
    "bandwidth": [Interval(Real, 0, None, closed="neither"), None],
}


def as_float_input(est, X, *, min_samples: int = 2):
    """Validated X as float64 (CSR when sparse), with at least ``min_samples`` rows."""
    n = X.shape[0]
    if n < min_samples:
        raise ValueError(
            f"{type(est).__name__} builds a graph over the samples and needs at least "
            f"{min_samples} samples; got n_samples={n}."
        )
    if sp.issparse(X):
        return sp.csr_array(X, dtype=np.float64)
    return np.asarray(X, dtype=np.float64)


def effective_neighbors(n_neighbors: int, n_samples: int) -> int:
    """``n_neighbors`` capped at ``n_samples - 1`` (a sample is never its own neighbour)."""
    return int(min(n_neighbors, n_samples - 1))


def build_knn_graph(X, n_neighbors: int, affinity: str, bandwidth) -> AffinityGraph:
    """The symmetrised kNN affinity graph; a clear error when every weight underflows."""
    graph = knn_affinity(
        X, effective_neighbors(n_neighbors, X.shape[0]), weight=affinity, bandwidth=bandwidth
    )
    if graph.W.nnz == 0:
        raise ValueError(
            f"the {affinity!r} affinity graph has no positive weight (bandwidth={bandwidth!r}, "
            "or all samples have zero norm for 'cosine'); pass a larger bandwidth or another "
            "affinity."
        )
    return graph


def default_n_select(est, n_features: int) -> int:
    """The resolved count: ``n_features_to_select_`` if given, else 10 % (at least one)."""
    if est.n_features_to_select_ is not None:
        return est.n_features_to_select_
    return resolve_n_features_to_select(DEFAULT_FRACTION, n_features)


def check_n_clusters(est, n_clusters: int, limit: int, what: str) -> None:
    """Raise a clear ValueError when ``n_clusters`` exceeds ``limit``."""
    if n_clusters > limit:
        raise ValueError(
            f"{type(est).__name__}: n_clusters={n_clusters} exceeds {what}={limit}; pass "
            f"n_clusters <= {limit}."
        )
