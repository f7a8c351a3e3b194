"""SPEC: spectral feature selection on a sample similarity graph."""

from numbers import Integral
from typing import ClassVar

import numpy as np

from sparsefs._kernels import spec as _kernel
from sparsefs._kernels.columns import tie_duplicate_scores
from sparsefs._kernels.graphs import complete_affinity
from sparsefs.base import BaseSelector
from sparsefs.selection._graph_common import (
    AFFINITY_CONSTRAINTS,
    as_float_input,
    build_knn_graph,
    check_n_clusters,
    default_n_select,
    effective_neighbors,
)
from sparsefs.utils._sklearn_compat import Interval, StrOptions

__all__ = ["SPEC"]

#: Largest n_samples for the complete graph (``n_neighbors=None``), a dense n x n matrix.
COMPLETE_GRAPH_MAX_SAMPLES = 5000


class SPEC(BaseSelector):
    r"""Spectral feature selection (Zhao & Liu, 2007); unsupervised.

    With a similarity graph W over the samples, :math:`D = \mathrm{diag}(W\mathbf 1)`, the
    normalised Laplacian :math:`\mathcal L = D^{-1/2}(D - W)D^{-1/2}` with eigenpairs
    :math:`(\lambda_j, \xi_j)`, :math:`0 = \lambda_1 \le \lambda_2 \le \dots`, the normalised
    feature :math:`\hat f = D^{1/2}f/\|D^{1/2}f\|` and :math:`\alpha_j = \xi_j^\top\hat f`,
    the paper's three ranking functions are

    .. math::

        \varphi_1 = \hat f^\top\mathcal L\hat f = \sum_j \alpha_j^2\lambda_j, \qquad
        \varphi_2 = \frac{\hat f^\top\mathcal L\hat f}{1 - (\hat f^\top\xi_1)^2}, \qquad
        \varphi_3 = \sum_{j=2}^{k}(2 - \lambda_j)\,\alpha_j^2

    (spectral function :math:`\gamma(\lambda) = \lambda`). :math:`\varphi_1, \varphi_2` are
    lower-is-better, :math:`\varphi_3` higher-is-better; :math:`\varphi_2` equals the
    Laplacian score of the same graph, and :math:`\varphi_3` uses the :math:`k - 1` leading
    non-trivial eigenvectors (``n_clusters`` :math:`= k`). The raw values are kept in
    ``spec_scores_``; ``scores_`` is higher-is-better: :math:`1/(1 + \varphi)` for
    :math:`\varphi_1, \varphi_2` and :math:`\varphi_3` itself.

    The graph is the paper's complete RBF graph by default (``n_neighbors=None``: every pair
    of samples, :math:`W_{ij} = e^{-\|x_i - x_j\|^2/t}` with :math:`t = 2\delta^2` in the
    paper's notation) — a dense ``n x n`` matrix, allowed up to
    ``COMPLETE_GRAPH_MAX_SAMPLES`` (5000) samples; pass an int ``n_neighbors`` for the sparse
    kNN graph of :class:`LaplacianScore` (needed beyond that size). Eigenvectors for
    :math:`\varphi_3` come from a dense ``eigh`` up to 1000 samples, from Lanczos (``eigsh``)
    on the sparse graph above.

    Constant features would score best under :math:`\varphi_1` (:math:`\hat f = \xi_1`);
    they get the worst value instead (``spec_scores_`` ``inf`` for :math:`\varphi_1,\varphi_2`,
    0 for :math:`\varphi_3`; ``scores_`` 0). CSR/CSC input is used without densifying X.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        An int count, a float fraction in (0, 1] (rounded down, at least 1), or ``None``:
        SPEC ranks features but defines no count, so ``None`` keeps the best 10 % (at least
        one), like :class:`sklearn.feature_selection.SelectPercentile`.
    variant : {"phi1", "phi2", "phi3"}, default="phi2"
        The ranking function :math:`\varphi_1`, :math:`\varphi_2` or :math:`\varphi_3`.
    n_clusters : int, default=5
        :math:`k` of :math:`\varphi_3`, the number of clusters (at most ``n_samples - 1``;
        :math:`k = 1` leaves an empty sum, :math:`\varphi_3 = 0` for every feature); unused by
        the other variants.
    n_neighbors : int or None, default=None
        ``None``: the complete graph of the paper; an int: the symmetrised kNN graph with
        that many neighbours (capped at ``n_samples - 1``).
    affinity : {"heat", "binary", "cosine"}, default="heat"
        kNN edge weights (see :class:`LaplacianScore`); the complete graph is always "heat".
    bandwidth : float or None, default=None
        The heat-kernel :math:`t > 0`; ``None``: the mean squared distance over the graph's
        pairs (all pairs, or each sample and its neighbours).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        Higher is better (see above).
    spec_scores_ : ndarray of shape (n_features_in_,)
        The raw :math:`\varphi` values.
    ranking_, support_, n_features_to_select_, n_features_in_, feature_names_in_
        As in every sparsefs selector.
    bandwidth_ : float or None
        The heat-kernel :math:`t` used.
    n_neighbors_ : int
        Neighbours per sample in the graph (``n_samples - 1`` for the complete graph).

    See Also
    --------
    LaplacianScore : the Laplacian score (:math:`\varphi_2` on the kNN graph).

    References
    ----------
    .. [1] Z. Zhao and H. Liu, "Spectral feature selection for supervised and unsupervised
       learning", Proceedings of the 24th International Conference on Machine Learning
       (ICML 2007), pp. 1151-1157.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import SPEC
    >>> data = make_planted_classification(n_samples=90, n_features=300, random_state=0)
    >>> selector = SPEC(n_features_to_select=20).fit(data.X)
    >>> int((selector.support_ & data.support).sum())
    20
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        **AFFINITY_CONSTRAINTS,
        "n_neighbors": [Interval(Integral, 1, None, closed="left"), None],
        "variant": [StrOptions(set(_kernel.VARIANTS))],
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
    }
    _supervised = False
    _accept_sparse = ("csr", "csc")

    def __init__(self, n_features_to_select=None, *, variant="phi2", n_clusters=5,
                 n_neighbors=None, affinity="heat", bandwidth=None):
        self.n_features_to_select = n_features_to_select
        self.variant = variant
        self.n_clusters = n_clusters
        self.n_neighbors = n_neighbors
        self.affinity = affinity
        self.bandwidth = bandwidth

    def _fit(self, X, y_idx):
        X = as_float_input(self, X)
        n = X.shape[0]
        if self.variant == "phi3":
            check_n_clusters(self, self.n_clusters, n - 1, "n_samples - 1")
        if self.n_neighbors is None:
            if n > COMPLETE_GRAPH_MAX_SAMPLES:
                raise ValueError(
                    f"SPEC(n_neighbors=None) builds the paper's complete graph, a dense "
                    f"n_samples x n_samples matrix; n_samples={n} exceeds "
                    f"{COMPLETE_GRAPH_MAX_SAMPLES}. Pass an int n_neighbors for a sparse kNN "
                    "graph."
                )
            graph = complete_affinity(X, bandwidth=self.bandwidth)
            if not np.any(graph.W):
                raise ValueError(
                    f"the complete affinity graph has no positive weight (bandwidth="
                    f"{self.bandwidth!r}); pass a larger bandwidth."
                )
            self.n_neighbors_ = n - 1
        else:
            graph = build_knn_graph(X, self.n_neighbors, self.affinity, self.bandwidth)
            self.n_neighbors_ = effective_neighbors(self.n_neighbors, n)
        # exact copies of a column get exactly equal scores (rounding removed)
        raw = _kernel.spec_scores(X, graph.W, self.variant, self.n_clusters)
        raw = tie_duplicate_scores(X, raw)
        self.spec_scores_ = raw
        self.bandwidth_ = graph.bandwidth
        self.n_features_to_select_ = default_n_select(self, X.shape[1])
        scores = 1.0 / (1.0 + raw) if _kernel.is_lower_better(self.variant) else raw
        self._set_selection(scores)
