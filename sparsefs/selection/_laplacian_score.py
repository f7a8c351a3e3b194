"""Laplacian score: features that respect the local geometry of the samples."""

from typing import ClassVar

from sparsefs._kernels import laplacian_score as _kernel
from sparsefs._kernels.columns import tie_duplicate_scores
from sparsefs.base import BaseSelector
from sparsefs.selection._graph_common import (
    AFFINITY_CONSTRAINTS,
    as_float_input,
    build_knn_graph,
    default_n_select,
    effective_neighbors,
)

__all__ = ["LaplacianScore"]


class LaplacianScore(BaseSelector):
    r"""Rank features by their Laplacian score (He, Cai & Niyogi, 2005); unsupervised.

    On the k-nearest-neighbour graph of the samples (:math:`x_i` and :math:`x_j` joined when
    either is among the other's :math:`k` nearest neighbours, heat weights
    :math:`W_{ij} = e^{-\|x_i - x_j\|^2/t}`), with :math:`D = \mathrm{diag}(W\mathbf 1)` and
    :math:`L = D - W`, feature :math:`f_r` scores

    .. math::

        L_r = \frac{\tilde f_r^\top L \tilde f_r}{\tilde f_r^\top D \tilde f_r},
        \qquad
        \tilde f_r = f_r - \frac{f_r^\top D\mathbf 1}{\mathbf 1^\top D\mathbf 1}\mathbf 1,

    **lower is better**: a good feature varies little between neighbouring samples relative
    to its (degree-weighted) variance. :math:`L_r \in [0, 2]`. The raw statistic is kept in
    ``laplacian_scores_``; ``scores_`` is the higher-is-better :math:`1 / (1 + L_r)`, a
    decreasing transform, so both rank the features identically.

    The graph is built by an exact, blocked nearest-neighbour search (never an ``n x n``
    matrix) and equals the construction from :func:`sklearn.neighbors.kneighbors_graph`; X is
    never modified (scikit-feature's ``lap_score`` row-normalises the caller's X in place and
    builds a different graph, ``jundongl/scikit-feature#78``). CSR/CSC input is used without
    densifying.

    Edge cases: a constant feature (:math:`0/0`) gets ``laplacian_scores_ = inf`` and
    ``scores_ = 0``, below every other feature (whose scores are at least 1/3). The score is
    invariant to shifting and scaling a feature; values near 1e300 / 1e-300 are handled by
    exact power-of-two rescaling.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        How many features to keep: an int count, a float fraction in (0, 1] (rounded down, at
        least 1), or ``None``: the paper ranks features but defines no count, so ``None`` keeps
        the best 10 % (at least one), like :class:`sklearn.feature_selection.SelectPercentile`.
    n_neighbors : int, default=5
        :math:`k`, the number of nearest neighbours of each sample (capped at
        ``n_samples - 1``).
    affinity : {"heat", "binary", "cosine"}, default="heat"
        Edge weights: the paper's heat kernel :math:`e^{-\|x_i-x_j\|^2/t}`, 0-1 weights, or
        the cosine similarity (clipped at 0; neighbours by cosine).
    bandwidth : float or None, default=None
        The heat-kernel :math:`t > 0`; ``None``: the mean squared distance between each sample
        and its :math:`k` neighbours. Unused by the other affinities.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        :math:`1 / (1 + L_r)`, higher is better.
    laplacian_scores_ : ndarray of shape (n_features_in_,)
        The raw Laplacian scores :math:`L_r` (lower is better; ``inf`` for constant features).
    ranking_ : ndarray of shape (n_features_in_,)
        1 = best; ties broken by the lower feature index.
    support_ : ndarray of shape (n_features_in_,), dtype bool
    n_features_to_select_ : int
    n_neighbors_ : int
        The number of neighbours used.
    bandwidth_ : float or None
        The heat-kernel :math:`t` used.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X is a DataFrame with string column names.

    See Also
    --------
    SPEC : spectral feature selection; its ``variant="phi2"`` is the Laplacian score of the
        same graph with the normalised Laplacian.

    References
    ----------
    .. [1] X. He, D. Cai and P. Niyogi, "Laplacian score for feature selection", Advances in
       Neural Information Processing Systems 18 (NIPS 2005).

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import LaplacianScore
    >>> data = make_planted_classification(random_state=0)  # 100 x 2000, 20 planted
    >>> selector = LaplacianScore(n_features_to_select=20).fit(data.X)  # labels unused
    >>> int((selector.support_ & data.support).sum())
    19
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        **AFFINITY_CONSTRAINTS,
    }
    _supervised = False
    _accept_sparse = ("csr", "csc")

    def __init__(self, n_features_to_select=None, *, n_neighbors=5, affinity="heat",
                 bandwidth=None):
        self.n_features_to_select = n_features_to_select
        self.n_neighbors = n_neighbors
        self.affinity = affinity
        self.bandwidth = bandwidth

    def _fit(self, X, y_idx):
        X = as_float_input(self, X)
        graph = build_knn_graph(X, self.n_neighbors, self.affinity, self.bandwidth)
        # exact copies of a column get exactly equal scores (rounding removed)
        raw = tie_duplicate_scores(X, _kernel.laplacian_score(X, graph.W))
        self.laplacian_scores_ = raw
        self.n_neighbors_ = effective_neighbors(self.n_neighbors, X.shape[0])
        self.bandwidth_ = graph.bandwidth
        self.n_features_to_select_ = default_n_select(self, X.shape[1])
        self._set_selection(1.0 / (1.0 + raw))
