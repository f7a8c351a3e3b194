"""The selection contract shared by every sparsefs estimator.

Every estimator that selects features - a plain selector, a classifier that selects while it
learns, a clusterer that keeps only the features that separate clusters - fits through one
template (:meth:`_SparseEstimatorBase.fit`) and exposes one result interface:

``scores_``
    float array of length ``n_features_in_``, **higher = more important**, whatever the method's
    raw statistic (which is also kept under its own name, e.g. ``fisher_scores_``). Never NaN.
``ranking_``
    1 = best; ties broken deterministically by the lower feature index.
``support_`` / ``get_support()``
    boolean mask; always the top ``support_.sum()`` features of ``ranking_``.
``transform(X)``
    ``X[:, support_]``, with ``get_feature_names_out`` and ``set_output`` from scikit-learn.
``n_features_to_select``
    int (a count), float in (0, 1] (a fraction of the features, rounded down, at least 1), or
    ``None``: the method's own rule (a penalty's nonzeros, a gap statistic, a test). The resolved
    count is ``n_features_to_select_``.

Subclasses implement ``_fit(X, y)`` and call :meth:`SupportMixin._set_selection` once.

Threads: ``fit`` chooses the thread counts of every library involved once, from the sizes the
estimator states (:meth:`_SparseEstimatorBase._blas_flops`, :meth:`_pool_limit`), and applies
them for the whole fit (:mod:`sparsefs._kernels.threads`).
"""

import warnings
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, ClusterMixin
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

import sparsefs._dask  # noqa: F401  (registers the dask side of the array dispatch, lazily)
from sparsefs._kernels import threads as _threads
from sparsefs._kernels.arrays import estimator_call
from sparsefs._kernels.ranking import (
    is_top_set,
    rank_scores,
    resolve_n_features_to_select,
)
from sparsefs.exceptions import NoFeatureSelectedWarning
from sparsefs.utils._results import OUTPUTS, declared_outputs
from sparsefs.utils._sklearn_compat import Interval, RealNotInt, _fit_context
from sparsefs.utils._targets import resolve_target

__all__ = [
    "OUTPUTS",
    "BaseSelectingClassifier",
    "BaseSelectingClusterer",
    "BaseSelector",
    "SupportMixin",
    "declared_outputs",
    "resolve_n_features_to_select",
]

_FLOAT_DTYPES = [np.float64, np.float32]

N_FEATURES_TO_SELECT_CONSTRAINT = [
    Interval(Integral, 1, None, closed="left"),
    Interval(RealNotInt, 0, 1, closed="right"),
    None,
]


class SupportMixin(SelectorMixin):
    """``scores_`` → ``ranking_`` → ``support_``, and scikit-learn's selector interface."""

    def _set_selection_tied(self, X, scores: np.ndarray,
                            support: np.ndarray | None = None) -> None:
        """:meth:`_set_selection` after giving exact copies of a column equal scores.

        For methods that treat the columns symmetrically in exact arithmetic (a copy would
        get its original's score but for rounding): each group of identical columns of ``X``
        gets its mean score (:func:`sparsefs._kernels.columns.tie_duplicate_scores`), so the
        tie rule (lower index first) orders them. Kept as computed when the method's own
        support would then not be a top set of the ranking (a copy on either side of it).
        """
        from sparsefs._kernels.columns import tie_duplicate_scores

        tied = tie_duplicate_scores(X, scores)
        if support is not None:
            support = np.asarray(support, dtype=bool)
            if not is_top_set(rank_scores(tied), support):
                tied = np.asarray(scores, dtype=np.float64)
        self._set_selection(tied, support)

    def _set_selection(self, scores: np.ndarray, support: np.ndarray | None = None) -> None:
        """Store the scores and derive ``ranking_`` and ``support_``.

        Parameters
        ----------
        scores : ndarray of shape (n_features_in_,)
            Higher = more important; ``+inf``/``-inf`` allowed, NaN is a bug.
        support : ndarray of bool, optional
            The method's own selection (used when ``n_features_to_select=None``). It must be the
            top of the ranking; when omitted the top ``n_features_to_select_`` are kept.
        """
        scores = np.asarray(scores, dtype=np.float64)
        name = type(self).__name__
        if scores.shape != (self.n_features_in_,):
            raise RuntimeError(f"{name} produced {scores.shape} scores for {self.n_features_in_}.")
        if np.isnan(scores).any():
            bad = np.flatnonzero(np.isnan(scores))[:5].tolist()
            raise RuntimeError(f"{name} produced NaN scores (features {bad}); please report.")
        ranking = rank_scores(scores)
        if support is None:
            if self.n_features_to_select_ is None:
                raise RuntimeError(f"{name} must give a support when n_features_to_select=None.")
            support = ranking <= self.n_features_to_select_
        else:
            support = np.asarray(support, dtype=bool)
            if not is_top_set(ranking, support):
                raise RuntimeError(f"{name}'s support is not the top of its ranking (a bug).")
        if not support.any():
            warnings.warn(
                f"{name} selected no feature (n_features_to_select=None rule); transform will "
                "return an empty array.",
                NoFeatureSelectedWarning,
                stacklevel=3,
            )
        self.scores_ = scores
        self.ranking_ = ranking
        self.support_ = support
        self.n_features_to_select_ = int(support.sum())

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "support_")
        return self.support_

    def transform(self, X):
        """``X[:, support_]``; a dask array gives a lazy dask array (docs/dask.md).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)

        Returns
        -------
        {ndarray, sparse matrix, dask array} of shape (n_samples, n_selected_features)
        """
        return estimator_call(X, self, "transform")

    def _transform_in_memory(self, X):
        return super().transform(X)


def _zero_blas_flops(self, X) -> float:
    """``_blas_flops`` of the methods whose fit is a sequence of small dense factorisations,
    eigen-solves and thin products, fastest on one BLAS thread (and far faster on a loaded
    machine): 0."""
    return 0.0


def _routed(name: str, doc: str | None, owner: type):
    """The public ``name`` (``predict``, ``decision_function``) of ``owner``: the array-type
    dispatch (:func:`sparsefs._kernels.arrays.estimator_call`), documented by ``doc``."""

    def method(self, X):
        return estimator_call(X, self, name)

    method.__name__ = name
    method.__qualname__ = f"{owner.__qualname__}.{name}"
    method.__module__ = owner.__module__
    method.__doc__ = doc
    return method


def _implements(name: str):
    """``available_if`` test: the estimator has an in-memory ``name``."""
    return lambda self: hasattr(self, f"_{name}_in_memory")


class _SparseEstimatorBase(SupportMixin, BaseEstimator):
    """Validate once, resolve ``n_features_to_select``, then the private hook ``_fit``.

    Every public method that takes X (``fit``, ``transform``, and ``predict`` /
    ``decision_function`` of the classifiers and clusterers) goes through the array-type
    dispatch (:mod:`sparsefs._kernels.arrays`): in-memory X to ``_<method>_in_memory``, a
    dask array to the estimator's ``_<method>_dask`` hook (``_fit_dask`` after validation) or a
    ``TypeError``. A subclass implements ``_predict_in_memory`` / ``_decision_function_in_memory``
    (documented as the public method: that docstring becomes the public method's) and, for
    dask, ``_predict_dask`` / ``_decision_function_dask``.
    """

    #: the public prediction methods routed by the array type (set by the family bases)
    _routed_methods: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # a class that implements a routed method in memory gets the public method with that
        # implementation's docstring (the API docs show each estimator's own)
        for name in cls._routed_methods:
            impl = cls.__dict__.get(f"_{name}_in_memory")
            if impl is not None and name not in cls.__dict__:
                setattr(cls, name, _routed(name, impl.__doc__, cls))

    _parameter_constraints: ClassVar[dict] = {
        "n_features_to_select": N_FEATURES_TO_SELECT_CONSTRAINT,
    }
    #: whether ``fit`` needs class labels
    _supervised: ClassVar[bool] = True
    #: sparse formats accepted without densifying (``False``: dense only)
    _accept_sparse: ClassVar[bool | tuple[str, ...]] = False
    #: the smallest number of classes a supervised method can learn from
    _min_classes: ClassVar[int] = 2
    #: whether fit's validation scans X for NaN/inf (``False``: the method detects them itself)
    _fit_checks_finite: ClassVar[bool] = True
    #: why a dense-only method (``_accept_sparse = False``) needs dense X: the error on sparse
    #: input says it, names the estimator and suggests ``X.toarray()``
    _dense_reason: ClassVar[str] = "its solver works on dense arrays"
    #: the kinds of target a supervised method takes: "classification", "regression",
    #: "survival" (sparsefs.utils._targets; the error for another kind names these)
    _targets: ClassVar[tuple[str, ...]] = ("classification",)
    #: whether a regression method takes several targets at once (2-d y)
    _multi_target: ClassVar[bool] = False
    #: appended to the error for a kind of target the method does not take
    _target_hint: ClassVar[str] = ""
    #: the outputs beyond the selection that every fit sets (names in :data:`OUTPUTS`)
    _outputs: ClassVar[frozenset[str]] = frozenset()

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, **fit_params: Any):
        """Fit the estimator and select features.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            A dask array goes to the estimator's dask implementation (docs/dask.md), or to a
            ``TypeError`` for a method without one.
        y : array-like of shape (n_samples,), default=None
            Class labels (required by supervised methods, ignored by unsupervised ones).
        **fit_params : dict
            Passed to the method's ``_fit``.

        Returns
        -------
        self : object
        """
        return estimator_call(X, self, "fit", y, **fit_params)

    def _fit_in_memory(self, X, y=None, **fit_params: Any):
        """``fit`` on in-memory X: validate once, resolve the count, plan the threads, then
        the method's ``_fit``."""
        X, y_idx, _ = self._validate_fit_data(X, y)
        self.n_features_to_select_ = resolve_n_features_to_select(
            self.n_features_to_select, X.shape[1]
        )
        with _threads.applied(_threads.plan(self._blas_flops(X), pool=self._pool_limit())):
            self._fit(X, y_idx, **fit_params)
        return self

    def _fit(self, X, y_idx, **fit_params):  # pragma: no cover - abstract
        raise NotImplementedError

    def _blas_flops(self, X) -> float:
        """Flops of one typical BLAS operation of a fit on X: the input of the thread plan
        (:func:`sparsefs._kernels.threads.plan`; BLAS and OpenMP get every CPU only from
        1e9 flops). The default is a product of X with 16 vectors, ``32 n p``: most methods
        work by passes over X with a few vectors (class sums, projections). Methods with
        larger products (n x n or p x p factors) or only tiny ones override it."""
        n, p = X.shape
        return 32.0 * n * p

    def _pool_limit(self) -> int | None:
        """The ceiling of sparsefs's own thread pool for this fit (``n_jobs`` where the
        estimator has one; None: every available CPU)."""
        return None

    def _validate(self, X, y=None, *, reset: bool):
        """Numeric float X (or an accepted sparse format), finite, at least one feature.

        At fit (``reset=True``) the finiteness scan is skipped when the class sets
        ``_fit_checks_finite = False`` (it then detects NaN/inf itself). Sparse X for a
        dense-only method is a ``TypeError`` that names the estimator and its reason.
        """
        if sp.issparse(X) and not self._accept_sparse:
            raise TypeError(
                f"{type(self).__name__} does not accept sparse X ({type(X).__name__}): "
                f"{self._dense_reason}. Pass X.toarray() if it fits in memory."
            )
        kw = {
            "reset": reset,
            "accept_sparse": self._accept_sparse,
            "dtype": _FLOAT_DTYPES,
            "ensure_all_finite": bool(self._fit_checks_finite) or not reset,
        }
        try:
            return validate_data(self, X, **kw) if y is None else validate_data(self, X, y, **kw)
        except ValueError as exc:
            if "could not convert" in str(exc) or "invalid literal" in str(exc):
                raise ValueError(
                    f"{type(self).__name__} needs numeric X; X holds a value that is not a number "
                    f"({exc})."
                ) from exc
            raise

    def _validate_plain_arrays(self, X, y):
        """The fit validation of :meth:`_validate` for the common case, without its overhead.

        Applies only to a plain float64/float32 2-D ``numpy.ndarray`` X with at least one
        sample and one feature, and a 1-D integer ``numpy.ndarray`` y of the same length:
        then scikit-learn's ``validate_data`` returns X and y unchanged, and integer labels
        always pass ``check_classification_targets`` (binary or multiclass). The side effects
        of ``validate_data(reset=True)`` are reproduced (``n_features_in_``; no
        ``feature_names_in_``). Finiteness (unless ``_fit_checks_finite`` is False) is
        checked by scikit-learn's own O(1)-memory test, the sum of X. Anything else, or a
        non-finite sum, returns ``None`` and takes the full path (with its error messages).

        Kept because it matters for small fits (issue #23, measured 2026-12-01, median of 30):
        ``SparseCenterClassifier(5).fit`` on 50 x 100 takes 0.12 ms with it and 0.42 ms with
        the full validation, and ``FisherScore(5).fit`` 0.21 against 0.54 ms - the fits that
        stability selection, permutation p-values and CV repeat hundreds of times. At
        200 x 20000 the gain (0.05-0.3 ms) is within noise.
        """
        if not (
            type(X) is np.ndarray
            and type(y) is np.ndarray
            and X.ndim == 2
            and y.ndim == 1
            and X.dtype in _FLOAT_DTYPES
            and y.dtype.kind in "iu"
            and X.shape[0] >= 1
            and X.shape[1] >= 1
            and y.shape[0] == X.shape[0]
        ):
            return None
        if self._fit_checks_finite:
            with np.errstate(over="ignore", invalid="ignore"):
                if not np.isfinite(np.sum(X)):
                    return None
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.n_features_in_ = X.shape[1]
        return X, y

    def _validate_fit_data(self, X, y):
        """Validate X and y once; returns ``(X, y, classes)``.

        ``y`` is what ``_fit`` receives: class indices ``0..K-1`` for class labels (then
        ``classes`` holds the labels), float64 values for a continuous target, the structured
        survival array (``sparsefs.utils._targets.SURVIVAL_DTYPE``) for a survival target
        (``classes`` is ``None`` for both). The kind is stored as ``target_type_``; a kind
        the method does not take (``_targets``) is a ``ValueError`` naming what it takes.
        """
        if not self._supervised:
            return self._validate(X, reset=True), None, None
        if y is None:
            raise ValueError(
                f"{type(self).__name__} is supervised and requires y to be passed, but the "
                "target y is None."
            )
        target_type = self._resolved_target_type()
        plain_labels = (type(y) is np.ndarray and y.ndim == 1 and y.dtype.kind in "iu"
                        and target_type == "auto" and "classification" in self._targets)
        if not plain_labels:  # the kind of y, from scikit-learn's type_of_target
            try:
                target = resolve_target(y, self._targets, name=type(self).__name__,
                                        target_type=target_type, hint=self._target_hint)
            except ValueError:
                self._validate(X, reset=True)  # X's own errors first (complex, NaN, ...)
                raise
            if target.kind != "classification":
                self.target_type_ = target.kind
                return self._validate_outcome(X, target)
        self.target_type_ = "classification"
        # the fast path reproduces this class's _validate only: not for an overridden one
        plain = type(self)._validate is _SparseEstimatorBase._validate
        fast = self._validate_plain_arrays(X, y) if plain else None
        if fast is None:
            X, y = self._validate(X, y, reset=True)
            check_classification_targets(y)
        else:
            X, y = fast
        classes, y_idx = np.unique(y, return_inverse=True)
        n_labels = y.shape[0]
        if fast is not None and 2 < classes.shape[0] > round(0.5 * n_labels) and n_labels > 20:
            check_classification_targets(y)  # scikit-learn's "regression?" warning
        if classes.shape[0] < self._min_classes:
            raise ValueError(
                f"{type(self).__name__} needs at least {self._min_classes} classes in y; got "
                f"{classes.shape[0]} class ({classes.tolist()!r})."
            )
        return X, y_idx.astype(np.intp, copy=False), classes

    def _resolved_target_type(self) -> str:
        """How a non-structured y is read: the ``target_type`` parameter where the method has
        one (``"auto"``: scikit-learn's ``type_of_target``)."""
        return getattr(self, "target_type", "auto")

    def _validate_outcome(self, X, target):
        """X and a continuous or survival target: lengths, shape, a target that varies."""
        name = type(self).__name__
        X = self._validate(X, reset=True)
        y = target.y
        if y.shape[0] != X.shape[0]:
            raise ValueError(
                f"{name}: X has {X.shape[0]} samples but y has {y.shape[0]}; they must match."
            )
        if target.kind == "regression":
            if y.ndim == 2 and not self._multi_target:
                raise ValueError(
                    f"{name} takes one continuous target; got y of shape {y.shape}. "
                    "LsL21 fits several targets at once."
                )
            if y.ndim > 2:
                raise ValueError(f"{name}: y must be 1-d or 2-d; got shape {y.shape}.")
            if y.shape[0] < 2 or np.all(y == y[:1]):
                raise ValueError(
                    f"{name} needs a continuous target that varies; y is constant "
                    f"(n_samples={y.shape[0]})."
                )
            return X, y, None
        if not target.event.any():
            raise ValueError(
                f"{name} needs at least one observed event in the survival target; all "
                f"{target.event.shape[0]} times are censored."
            )
        return X, y, None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = bool(self._accept_sparse)
        tags.target_tags.required = self._supervised
        return tags


class BaseSelector(_SparseEstimatorBase):
    """Base class of the feature selectors (transformers)."""


class BaseSelectingClassifier(ClassifierMixin, _SparseEstimatorBase):
    """Base class of classifiers that select features while they learn.

    Adds ``classes_``; subclasses implement ``_fit``, ``_predict_in_memory`` and, where they
    score classes, ``_decision_function_in_memory``, computed on the selected features only
    (the public ``predict`` / ``decision_function`` dispatch on the array type).
    """

    _routed_methods = ("predict", "decision_function")

    @available_if(_implements("predict"))
    def predict(self, X):
        """The class of each sample, from the selected features.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return estimator_call(X, self, "predict")

    @available_if(_implements("decision_function"))
    def decision_function(self, X):
        """Class scores from the selected features (the method's own units).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        return estimator_call(X, self, "decision_function")

    def _validate_fit_data(self, X, y):
        X, y_idx, classes = super()._validate_fit_data(X, y)
        self.classes_ = classes
        return X, y_idx, classes

    def _labels_from_decision(self, scores: np.ndarray) -> np.ndarray:
        """``predict`` from ``decision_function``: ``classes_[1]`` exactly where a 1-d (binary)
        decision is > 0, else the argmax column (ties to the first class of ``classes_``)."""
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]


class BaseSelectingClusterer(ClusterMixin, _SparseEstimatorBase):
    """Base class of clusterers that keep only the features that separate the clusters.

    Subclasses set ``labels_`` in ``_fit`` and may implement ``_predict_in_memory`` (the
    public ``predict`` dispatches on the array type); ``fit_predict`` comes from scikit-learn.
    """

    _supervised = False
    _routed_methods = ("predict",)

    @available_if(_implements("predict"))
    def predict(self, X):
        """The cluster of each sample, from the selected features.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        return estimator_call(X, self, "predict")
