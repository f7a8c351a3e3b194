"""Sparse l1 and l2 center classifiers (Calafiore & Fracastoro, IEEE TNNLS 2022).

Estimators only: the math lives in :mod:`sparsefs._kernels.sparse_centers`.
"""

from numbers import Integral
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import StratifiedKFold, check_cv
from sklearn.utils import check_random_state
from sklearn.utils.validation import assert_all_finite, check_is_fitted, validate_data

from sparsefs._kernels import sparse_centers as _kernel
from sparsefs._kernels import threads as _threads
from sparsefs._kernels.sparse_centers_cv import grid_predictions
from sparsefs.base import BaseSelectingClassifier
from sparsefs.utils._sklearn_compat import StrOptions

__all__ = ["SparseCenterClassifier", "SparseCenterClassifierCV"]

_FLOAT_DTYPES = [np.float64, np.float32]
#: ``n_features_to_select=None`` in SparseCenterClassifier: this many features, capped at p.
DEFAULT_N_FEATURES = 10


def default_n_features_grid(n_features: int) -> np.ndarray:
    """The default grid of ``k``: 1, 2, 5, 10, 20, 50, ... below n_features, then n_features.

    Parameters
    ----------
    n_features : int

    Returns
    -------
    ndarray of int

    Examples
    --------
    >>> from sparsefs.classification._sparse_centers import default_n_features_grid
    >>> default_n_features_grid(120).tolist()
    [1, 2, 5, 10, 20, 50, 100, 120]
    """
    grid, scale = [], 1
    while scale < n_features:
        grid.extend(f * scale for f in (1, 2, 5) if f * scale < n_features)
        scale *= 10
    grid.append(n_features)
    return np.asarray(grid, dtype=np.intp)


class _BaseSparseCenters(BaseSelectingClassifier):
    """Shared fitting (class statistics) and prediction of the sparse center classifiers."""

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelectingClassifier._parameter_constraints,
        "norm": [StrOptions({"l1", "l2"})],
        "objective": [StrOptions({"balanced", "pooled"})],
        "standardize": ["boolean"],
        "n_jobs": [Integral, None],
    }
    _accept_sparse = ("csr", "csc")
    _outputs = frozenset({"class_centers_"})
    # Every entry of X enters a class sum (l2) or a class dispersion (l1), so NaN or infinity
    # in X makes those non-finite; only then is X itself scanned (scikit-learn's
    # ``assert_all_finite``, with its usual messages, in _center_stats). This saves one full
    # read of X per fit.
    _fit_checks_finite = False

    # -- fitting -------------------------------------------------------------------------

    def _pool_limit(self) -> int:
        # n_jobs caps the own pool inside the fit: None is every CPU (resolve_n_jobs's rule)
        return _threads.resolve_n_jobs(self.n_jobs, within_fit=True)

    def _center_stats(self, X, y_idx, n_classes: int) -> _kernel.CenterStats:
        balanced = self.objective == "balanced"
        if self.norm == "l2":
            stats = _kernel.l2_centers(
                X, y_idx, n_classes, balanced=balanced, spread=self.standardize,
                n_threads=_threads.pool_ceiling(),
            )
        else:
            stats = _kernel.l1_centers(
                X, y_idx, n_classes, balanced=balanced, n_threads=_threads.pool_ceiling()
            )
        if not stats.finite:
            with np.errstate(invalid="ignore", over="ignore"):  # sklearn's quick sum check
                assert_all_finite(X.data if sp.issparse(X) else X, input_name="X")
            raise ValueError(
                f"{type(self).__name__}: the class statistics overflow float64 (X holds values "
                f"up to {abs(X).max():.3g}); rescale X."
            )
        return stats

    def _scaled(self, stats: _kernel.CenterStats):
        """``(gains, scale)``: the gains of the standardised problem when ``standardize``.

        ``stats.gains`` are in units of ``stats.unit`` and ``scale`` in those of X: the ratio
        is taken with ``scale / unit`` (exact), free of overflow at any scale of X."""
        if not self.standardize:
            return stats.gains, None
        scale = _kernel.standard_scale(stats.spread)
        rel = scale / stats.unit
        return stats.gains / (rel * rel if self.norm == "l2" else rel), scale

    def _store(self, stats: _kernel.CenterStats) -> None:
        """Keep the statistics, select the top features and build the centers."""
        gains, self.scale_ = self._scaled(stats)
        self.unit_ = float(stats.unit)
        self.class_centers_ = stats.class_centers
        self.shared_center_ = stats.shared_center
        self.gains_ = gains.copy()
        self.n_informative_ = int(np.count_nonzero(gains > 0))
        self._set_selection(gains)
        self._support_idx = np.flatnonzero(self.support_)

    @property
    def centers_(self) -> np.ndarray:
        """The fitted centers: class centers on ``support_``, the shared center elsewhere."""
        check_is_fitted(self, "support_")
        return np.where(self.support_, self.class_centers_, self.shared_center_)

    # -- prediction ----------------------------------------------------------------------

    def _decision_function_in_memory(self, X):
        """Class scores computed on the selected features only, O(k) per sample.

        For two classes, the paper's :math:`\\Delta(x)` = distance to the first class center
        minus distance to the second (squared Euclidean for l2, l1 for l1), on the selected
        features; positive means ``classes_[1]``. For more classes, one column per class:
        minus the l1 distance (l1), or minus the squared distance plus a term that is the same
        for every class (l2, see :func:`sparsefs._kernels.sparse_centers.center_scores`).
        With ``standardize=True`` each feature's term is in units of ``scale_``; otherwise
        the distances are those of ``X / unit_`` (``unit_`` is 1 unless the class centers lie
        beyond about 1e±30), so the decision is finite and its sign right at any scale of X
        (e.g. X * 1e300 or X * 1e-300, where the squares of X itself overflow or underflow).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        check_is_fitted(self, "support_")
        X = validate_data(
            self, X, reset=False, accept_sparse=self._accept_sparse, dtype=_FLOAT_DTYPES
        )
        scores = _kernel.center_scores(
            X, self._support_idx, self.class_centers_, self.shared_center_, self.norm,
            self.scale_, self.unit_,
        )
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def _predict_in_memory(self, X):
        """The class of the nearest center on the selected features.

        Ties (equal distances, e.g. every selected feature shared) go to the class that comes
        first in ``classes_``, consistently with ``decision_function``: for two classes
        ``classes_[1]`` is predicted exactly when the decision is > 0.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return self._labels_from_decision(self.decision_function(X))

    def _decision_function_dask(self, X):
        """``decision_function`` on a dask array: a lazy dask array, per row block
        (docs/dask.md)."""
        from sparsefs._dask._sparse_centers import decision_function

        return decision_function(self, X)

    def _predict_dask(self, X):
        """``predict`` on a dask array: a lazy dask array, per row block (docs/dask.md)."""
        from sparsefs._dask._sparse_centers import predict

        return predict(self, X)


_MATH = r"""
    Each feature is either *shared* (one center for all classes) or *free* (one center per
    class), with at most ``k`` free features; the centers minimise the class-normalised
    training cost (the paper's problems (8) and (10))

    .. math::

        \min_{\theta^1..\theta^C}\ \sum_c \frac{1}{n_c} \sum_{j \in c} \rho(x_j - \theta^c)
        \quad \text{s.t.}\quad \#\{i : \theta^c_i \ne \theta^{c'}_i
        \text{ for some } c, c'\} \le k,

    with :math:`\rho = \|\cdot\|_2^2` (``norm="l2"``) or :math:`\|\cdot\|_1` (``norm="l1"``).
    The cost separates over features, so the exact solution frees the ``k`` features of largest
    **gain** :math:`g_i` (the cost of the best shared center minus that of the best class
    centers; ``gains_``), and

    * l2: free centers are the class means :math:`\bar x^c`; a shared feature takes the mean of
      the class means :math:`\bar m_i = \frac{1}{C}\sum_c \bar x^c_i` (for two classes the
      midpoint, eq. 11); :math:`g_i = \sum_c (\bar x^c_i - \bar m_i)^2`, i.e.
      :math:`\delta_i^2/2` with :math:`\delta = \bar x^+ - \bar x^-` for two classes: the
      paper's rule "largest :math:`|\delta_i|`";
    * l1: free centers are the class medians :math:`\mu^c` with dispersions
      :math:`d^c_i = \frac{1}{n_c}\sum_{j\in c}|x_{ji} - \mu^c_i|` (eq. 18); a shared feature
      takes the weighted median :math:`\mu_i` of all samples with weights :math:`1/n_{y_j}`,
      cost :math:`d_i` (eq. 19); :math:`g_i = d_i - \sum_c d^c_i \ge 0`, the paper's
      :math:`-e_i` for two classes: its rule "smallest :math:`e_i`".

    For more than two classes this is the exact row-sparse extension of specs/sparse-centers.md
    section 1.10 (shared centers on unselected features, class centers on selected ones). A
    sample is assigned to the nearest center on the selected features only (the shared features
    are equally far from every center): O(k) per sample; linear in ``x`` for l2.
"""

_CHOICES = r"""
    Choices where the paper leaves room (specs/sparse-centers.md section 1.8):

    * ties in the gains: the lower feature index first (``ranking_``, ``support_``); when
      ``k`` exceeds the number of features with positive gain (``n_informative_``), the
      optimum is not unique and zero-gain features fill the support by index;
    * medians and weighted medians whose minimiser set is an interval take its midpoint (for
      unit weights, ``np.median``); only the centers depend on this, not the selection;
    * ties in the decision go to the first class of ``classes_`` (scikit-learn's convention
      ``predict == classes_[decision_function > 0]``; the spec's recommendation "positive
      class" would break it);
    * features are not standardised by default (the paper): both rules then depend on each
      feature's units. ``standardize=True`` measures feature :math:`i` in units of
      :math:`s_i + s_0`, its pooled within-class spread (standard deviation for l2, mean
      absolute deviation from the class medians for l1) plus the median spread :math:`s_0`
      (the offset of nearest shrunken centroids): the objective's term of feature :math:`i` is
      divided by :math:`(s_i + s_0)^2` (l2) or :math:`s_i + s_0` (l1), so are the gains and
      the distances of the decision; the centers do not change. For two classes and l2 this
      ranks by a t-like statistic and keeps exactly the features that hard-thresholded
      nearest shrunken centroids (PAM) keeps;
    * ``objective="pooled"`` gives :math:`\sum_j \rho(x_j - \theta^{y_j})` (every sample
      weighs 1 instead of every class): overall mean / plain median as shared center,
      between-class sum of squares as l2 gain. The parameter is not called ``class_weight``
      because these weights do not move the decision towards heavy classes (scikit-learn's
      meaning of ``class_weight``): they enter only through the shared centers and the
      selection; the decision stays "nearest center".
"""


class SparseCenterClassifier(_BaseSparseCenters):
    __doc__ = (
        r"""Sparse l1 / l2 center classifier: nearest class center on k exactly chosen features.

    The classifier of Calafiore & Fracastoro [1]_: a nearest-centroid (l2) or nearest-median
    (l1) classifier whose class centers may differ on at most ``k`` features, found exactly.
    """
        + _MATH
        + _CHOICES
        + r"""
    Cost: l2, one pass over X (class sums by a compiled loop over column tiles, on threads
    over column blocks; sparse X: one product with the class-indicator matrix, never
    densified); l1, class medians by partitioning column blocks in class
    order, and weighted medians by a compiled weighted selection, on a thread pool, memory
    bounded by a few column blocks. The ranking is nested in ``k`` (the solution for ``k`` is
    the top ``k`` of ``ranking_``), so one fit answers every ``k``
    (see :class:`SparseCenterClassifierCV`).

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        ``k``, the number of free (selected) features: an int count (at most n_features), a
        float fraction in (0, 1] (rounded down, at least 1), or ``None`` for this method's own
        rule: ``min(10, n_features)``. (The paper takes ``k`` as given; choose it by
        cross-validation with :class:`SparseCenterClassifierCV`.)
    norm : {"l2", "l1"}, default="l2"
        Squared Euclidean distance and class means, or l1 distance and class medians (robust
        to outliers).
    objective : {"balanced", "pooled"}, default="balanced"
        ``"balanced"``: every class weighs 1 in the training objective (the paper's
        normalisation by :math:`1/n_c`). ``"pooled"``: every sample weighs 1.
    standardize : bool, default=False
        Measure each feature in units of its pooled within-class spread plus the median spread
        (see the choices above); ``False`` is the paper's classifier.
    n_jobs : int or None, default=None
        Threads over column blocks (l1 statistics; l2 class sums of dense X with at least
        2**20 entries). ``None`` or ``-1``: all CPUs available to the process (not
        scikit-learn's "None means 1": it caps sparsefs's own pool inside one fit, which runs on
        every CPU in the estimators without an ``n_jobs``, as scikit-learn's OpenMP threads
        do; docs/contract.md, "n_jobs"); ``-2``: all but one; a positive count. The result
        does not depend on it.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    centers_ : ndarray of shape (n_classes, n_features_in_)
        The fitted centers :math:`\theta^c`: class centers on the selected features, the
        shared center elsewhere (rows coincide off ``support_``).
    class_centers_ : ndarray of shape (n_classes, n_features_in_)
        Class means (l2) or class medians (l1) of every feature: the centers if it is freed.
    shared_center_ : ndarray of shape (n_features_in_,)
        The shared center of every feature: the center if it is not freed.
    scores_ : ndarray of shape (n_features_in_,)
        The gains (higher = better).
    gains_ : ndarray of shape (n_features_in_,)
        The same raw statistic under its own name: :math:`g_i \ge 0`, the decrease of the
        training objective when feature ``i`` is freed (in units of ``unit_**2`` for l2,
        ``unit_`` for l1).
    ranking_ : ndarray of shape (n_features_in_,)
        1 = best; ties broken by the lower feature index.
    support_ : ndarray of shape (n_features_in_,), dtype bool
        The selected (free) features.
    n_features_to_select_ : int
        ``k``.
    n_informative_ : int
        Number of features with a positive gain.
    scale_ : ndarray of shape (n_features_in_,) or None
        The per-feature units :math:`s_i + s_0` when ``standardize=True``, else ``None``.
    unit_ : float
        A power of two: ``gains_`` and the distances of ``decision_function`` are those of
        ``X / unit_`` (exact rescaling), so that neither overflows nor underflows at any scale
        of X. 1 unless the class centers lie beyond ``2**±100`` (about 1e±30).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X is a DataFrame with string column names.

    See Also
    --------
    SparseCenterClassifierCV : chooses ``k`` by stratified cross-validation.
    sklearn.neighbors.NearestCentroid : the ``k = n_features`` case (l2; ``metric="manhattan"``
        for l1 medians), and nearest shrunken centroids.

    References
    ----------
    .. [1] G. C. Calafiore and G. Fracastoro, "Sparse l1- and l2-center classifiers", IEEE
       Transactions on Neural Networks and Learning Systems 33(3):996-1009, 2022,
       doi:10.1109/TNNLS.2020.3036838 (arXiv:1911.07320).

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.classification import SparseCenterClassifier
    >>> data = make_planted_classification(n_samples=90, n_features=300, random_state=0)
    >>> clf = SparseCenterClassifier(n_features_to_select=20).fit(data.X, data.y)
    >>> int((clf.support_ & data.support).sum())
    20
    >>> clf.transform(data.X).shape
    (90, 20)
    """
    )

    def _dask_sparse_blocks(self) -> bool:
        """Whether the dask path takes scipy.sparse blocks: the l2 class sums do; the l1
        medians need dense feature blocks."""
        return self.norm == "l2"

    def __init__(self, n_features_to_select=None, *, norm="l2", objective="balanced",
                 standardize=False, n_jobs=None):
        self.n_features_to_select = n_features_to_select
        self.norm = norm
        self.objective = objective
        self.standardize = standardize
        self.n_jobs = n_jobs

    def _fit(self, X, y_idx):
        if self.n_features_to_select_ is None:
            self.n_features_to_select_ = min(DEFAULT_N_FEATURES, X.shape[1])
        self._store(self._center_stats(X, y_idx, self.classes_.shape[0]))

    def _fit_dask(self, X, y_idx):
        """``fit`` on a dask array: the same statistics, as numpy (docs/dask.md)."""
        from sparsefs._dask import _sparse_centers as _dask_centers

        if self.n_features_to_select_ is None:
            self.n_features_to_select_ = min(DEFAULT_N_FEATURES, X.shape[1])
        _dask_centers.fit(self, X, y_idx)


class SparseCenterClassifierCV(_BaseSparseCenters):
    __doc__ = (
        r"""Sparse l1 / l2 center classifier with ``k`` chosen by stratified cross-validation.

    The classifier of :class:`SparseCenterClassifier` (Calafiore & Fracastoro [1]_); ``k`` is
    the grid value of highest mean cross-validated accuracy (ties: the smallest ``k``), then
    the model is refitted on all data with it.

    The solution for ``k`` frees the top ``k`` features of one ranking and its decision is a
    sum over those features, so each fold is fitted **once** and the test scores of every ``k``
    in the grid are accumulated along the ranking: the cost of a fold is one fit plus one
    prediction with the largest ``k``.
    """
        + _MATH
        + r"""
    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        ``None``: chosen by cross-validation over ``n_features_grid``. An int count or a float
        fraction fixes ``k`` as in :class:`SparseCenterClassifier`; the cross-validation curve
        is still computed (``cv_results_``, ``best_n_features_``) for comparison.
    n_features_grid : array-like of int, default=None
        Candidate values of ``k``, each in ``[1, n_features]``. ``None``: 1, 2, 5, 10, 20, 50,
        ... below n_features, and n_features itself (:func:`default_n_features_grid`).
    norm : {"l2", "l1"}, default="l2"
    objective : {"balanced", "pooled"}, default="balanced"
    standardize : bool, default=False
    cv : int, cross-validation generator or iterable, default=5
        An int is the number of stratified folds (``StratifiedKFold``, shuffled by
        ``random_state`` when one is given), reduced to the size of the largest class when that
        is smaller (scikit-learn warns about classes smaller than the number of folds).
        Other values as in :func:`sklearn.model_selection.check_cv`.
    random_state : int, RandomState instance or None, default=None
        Shuffles the samples before they are split into folds (int ``cv`` only). ``None``: no
        shuffling, so two fits give the same folds and the same k (as scikit-learn's ``*CV``
        estimators).
    n_jobs : int or None, default=None
        Threads, as in :class:`SparseCenterClassifier`.

    Attributes
    ----------
    cv_results_ : dict of ndarray
        ``"n_features"`` (the grid), ``"mean_test_score"``, ``"std_test_score"`` (accuracy,
        population sd over folds) and ``"split{i}_test_score"`` for each fold. Plot it with
        ``sparsefs.plotting.plot_cv_curve(r["n_features"], r["mean_test_score"],
        r["std_test_score"], clf.n_features_to_select_, ylabel="CV accuracy")``.
    best_n_features_ : int
        The grid value of highest mean accuracy (smallest on ties).
    n_features_to_select_ : int
        The ``k`` of the final model: ``best_n_features_`` unless ``n_features_to_select``
        fixes it.
    classes_, centers_, class_centers_, shared_center_, scores_, gains_, ranking_, support_,
    n_informative_, scale_, unit_, n_features_in_, feature_names_in_
        As in :class:`SparseCenterClassifier`, for the final model fitted on all data.

    See Also
    --------
    SparseCenterClassifier : the classifier with ``k`` given.

    References
    ----------
    .. [1] G. C. Calafiore and G. Fracastoro, "Sparse l1- and l2-center classifiers", IEEE
       Transactions on Neural Networks and Learning Systems 33(3):996-1009, 2022.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.classification import SparseCenterClassifierCV
    >>> data = make_planted_classification(n_samples=90, n_features=300, random_state=0)
    >>> clf = SparseCenterClassifierCV(random_state=0).fit(data.X, data.y)
    >>> clf.cv_results_["n_features"].tolist()
    [1, 2, 5, 10, 20, 50, 100, 200, 300]
    >>> int(clf.n_features_to_select_) in clf.cv_results_["n_features"]
    True
    """
    )

    _parameter_constraints: ClassVar[dict] = {
        **_BaseSparseCenters._parameter_constraints,
        "n_features_grid": ["array-like", None],
        "cv": ["cv_object"],
        "random_state": ["random_state"],
    }

    def __init__(self, n_features_to_select=None, *, n_features_grid=None, norm="l2",
                 objective="balanced", standardize=False, cv=5, random_state=None, n_jobs=None):
        self.n_features_to_select = n_features_to_select
        self.n_features_grid = n_features_grid
        self.norm = norm
        self.objective = objective
        self.standardize = standardize
        self.cv = cv
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _grid(self, n_features: int) -> np.ndarray:
        if self.n_features_grid is None:
            return default_n_features_grid(n_features)
        grid = np.asarray(self.n_features_grid)
        ok = grid.ndim == 1 and grid.size > 0 and np.issubdtype(grid.dtype, np.integer)
        if not ok or grid.min() < 1 or grid.max() > n_features:
            raise ValueError(
                f"n_features_grid={self.n_features_grid!r} must be a non-empty list of ints in "
                f"[1, n_features={n_features}]."
            )
        return np.unique(grid).astype(np.intp)

    def _splits(self, X, y_idx):
        if self.cv is None or isinstance(self.cv, Integral):
            n_splits = 5 if self.cv is None else int(self.cv)
            n_splits = max(2, min(n_splits, int(np.bincount(y_idx).max())))
            # deterministic by default, as scikit-learn's *CV estimators: folds in the order of
            # the rows unless a random_state asks for shuffled ones
            shuffle = self.random_state is not None
            splitter = StratifiedKFold(
                n_splits, shuffle=shuffle,
                random_state=check_random_state(self.random_state) if shuffle else None,
            )
        else:
            splitter = check_cv(self.cv, y_idx, classifier=True)
        return list(splitter.split(np.zeros((X.shape[0], 1)), y_idx))

    def _fold_scores(self, X, y_idx, train, test, grid) -> np.ndarray:
        """Accuracy on ``test`` of the model fitted on ``train``, for every ``k`` in the grid."""
        present, local = np.unique(y_idx[train], return_inverse=True)
        y_test = y_idx[test]
        if present.shape[0] < 2:  # a degenerate fold: every k predicts the one class seen
            return np.full(grid.shape[0], np.mean(y_test == present[0]))
        stats = self._center_stats(X[train], local, present.shape[0])
        gains, scale = self._scaled(stats)
        order = np.argsort(_kernel.rank_fast(gains))
        predictions = grid_predictions(
            X[test], order, grid, stats.class_centers, stats.shared_center, self.norm, scale,
            stats.unit,
        )
        return np.mean(present[predictions] == y_test, axis=1)

    def _fit(self, X, y_idx):
        grid = self._grid(X.shape[1])
        splits = self._splits(X, y_idx)
        table = np.array([self._fold_scores(X, y_idx, tr, te, grid) for tr, te in splits])
        mean, std = table.mean(axis=0), table.std(axis=0)
        results = {"n_features": grid.copy(), "mean_test_score": mean, "std_test_score": std}
        for i, row in enumerate(table):
            results[f"split{i}_test_score"] = row
        self.cv_results_ = results
        self.best_n_features_ = int(grid[int(np.argmax(mean))])
        if self.n_features_to_select_ is None:
            self.n_features_to_select_ = self.best_n_features_
        self._store(self._center_stats(X, y_idx, self.classes_.shape[0]))
