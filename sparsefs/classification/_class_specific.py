"""The class-specific ensemble classifier (SMBA-CSFS / GF-CSFS, Nardone et al. 2019).

Estimator only: the decision rule lives in :mod:`sparsefs._kernels.class_specific`.
"""

import copy
import zlib
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from sparsefs._kernels import class_specific as _kernel
from sparsefs._kernels.class_specific import union_support
from sparsefs._kernels.columns import SAFE_RANGE
from sparsefs.base import BaseSelectingClassifier, resolve_n_features_to_select
from sparsefs.selection._class_specific import (
    ClassSpecificSelector,
    _tied_key,
    _with_params,
    smote_resample,
)
from sparsefs.utils._sklearn_compat import StrOptions

__all__ = ["ClassSpecificEnsembleClassifier"]

_FLOAT_DTYPES = [np.float64, np.float32]


def _int32_indexed(X):
    """Sparse X with 32-bit indices where they fit (libsvm and most scikit-learn models
    refuse 64-bit ones); anything else unchanged."""
    if not sp.issparse(X):
        return X
    X = sp.csr_array(X)
    if X.indices.dtype == np.int32 or X.nnz >= np.iinfo(np.int32).max:
        return X
    return sp.csr_array((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                        shape=X.shape)


def _default_estimator() -> Any:
    from sklearn.svm import SVC

    return SVC(kernel="linear", C=1.0)


class ClassSpecificEnsembleClassifier(BaseSelectingClassifier):
    r"""One classifier per class on that class's own features, combined by a vote.

    The classification stage of SMBA-CSFS (Nardone, Ciaramella & Staiano 2019, Algorithm 1) and
    of the general class-specific framework GF-CSFS (Pineda-Bautista et al. 2011). ``fit``:

    1. ``balance="smote"``: every minority class of the **training rows** is oversampled to the
       majority's size by SMOTE with :math:`k = n_{\min} - 1` neighbours (the authors' setting;
       :math:`n_{\min}` the smallest class). Because this happens inside ``fit``, a
       cross-validation never lets a test row (or a synthetic neighbour of one) into training;
       the paper's protocol balances all rows before splitting, a leak (see
       ``docs/methods/class_specific.md``).
    2. ``selector`` (a :class:`~sparsefs.selection.ClassSpecificSelector`; default: SMBA on
       each class's rows, i.e. SMBA-CSFS) ranks the features for each class :math:`c_i`;
       :math:`S_i` = its top :math:`m` = ``n_features_to_select``.
    3. Classifier :math:`e_i` (a clone of ``estimator``, default a linear SVM with :math:`C=1`)
       is trained on **all** (balanced) training rows of **all** classes, restricted to
       :math:`S_i`.

    ``predict``: the :math:`c` predictions :math:`\hat y_1..\hat y_c` of a row are combined by
    the decision rule (:func:`sparsefs._kernels.class_specific.ensemble_decision`): with
    exactly one classifier claiming its own class (:math:`H = \{i : \hat y_i = c_i\}`,
    :math:`|H| = 1`) that class; otherwise the majority of the :math:`c` votes
    (``tie_rule="code"``, the authors' code) or, when several classes claim, the majority among
    the claimed classes (``tie_rule="restricted"``, the paper's wording); remaining ties are
    broken uniformly at random.

    The random last resort is reproducible: its draw for a row comes from a generator seeded by
    a number fixed at ``fit`` (from ``random_state``) and a hash of the row's values, so a
    row's prediction does not depend on the other rows of the batch, and a fitted model always
    predicts the same.

    Sparse X (CSR/CSC) is accepted when the selector accepts it (``"fisher_score"``,
    ``"relieff"``, ...; not SMBA, the default): SMOTE, the selector and the members (SVMs
    handle sparse rows) see it sparse; at predict time only a member's own ``m`` columns are
    made dense when it was fitted on dense X.

    Parameters
    ----------
    selector : ClassSpecificSelector, str or None, default=None
        Cloned; its ``n_features_to_select`` is set to :math:`m` and its ``random_state`` to a
        derived seed. ``None``: ``ClassSpecificSelector()`` (SMBA on each class's rows:
        SMBA-CSFS). A registry stem: ``ClassSpecificSelector(stem, strategy=...)`` with
        ``"one_vs_rest"`` for a supervised method (GF-CSFS, e.g. ``"fisher_score"``) and
        ``"samples"`` for an unsupervised one (e.g. ``"smba"``). Any estimator exposing
        ``class_rankings_`` (one ranking per class, in the order of the sorted labels) after
        ``fit(X, y)`` works.
    estimator : classifier or None, default=None
        The per-class classifier (cloned); ``None``: ``SVC(kernel="linear", C=1)``.
    n_features_to_select : int, float or None, default=None
        :math:`m`, the features **per class**: an int count (``<= n_features``), a fraction of
        the features in (0, 1], or ``None`` (the default) for ``min(20, n_features)``, the
        paper's largest count clipped to the data. ``support_`` is the union of the :math:`c`
        subsets.
    balance : {"smote", "none"}, default="smote"
        Oversample the training rows with SMOTE inside ``fit`` (imbalanced-learn, a sparsefs
        dependency). A class with a single training row cannot be
        interpolated: it is repeated up to the majority's size.
    tie_rule : {"code", "restricted"}, default="code"
        See above; the two differ only when several classes claim and the overall majority
        class is not one of them.
    rescale : {"extreme", "max_abs"}, default="extreme"
        How X is scaled before SMOTE, the selector and the classifiers. A linear SVM with a
        fixed ``C`` depends on the units of X (fitting on ``X / s`` is fitting on ``X`` with
        ``C / s**2``), so no choice is both the paper's model and unit-free:

        * ``"extreme"`` (the paper's model on ordinary data): X is divided by its largest
          absolute entry only when that lies outside [1e-100, 1e100], where the SVM's dual
          overflows (1e300) or stalls; otherwise X is used as given. Predictions at such
          extreme scales are finite but may differ from those at scale 1;
        * ``"max_abs"``: X is always divided by its largest absolute entry: fits on ``X`` and
          ``X * s`` predict the same for any ``s > 0`` (the contract's scale test), at the
          price of a different effective ``C`` than the paper's at scale 1 (e.g. leak-free
          SMBA-CSFS on ALLAML: 79.2% with ``"extreme"``, 69.4% with ``"max_abs"``).
    random_state : int, RandomState instance or None, default=None
        Seeds SMOTE, the selector, the classifiers that take a seed and the random tie-break.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    selector_ : fitted selector
    class_rankings_ : ndarray of shape (n_classes, n_features_in_)
        The selector's per-class rankings (1 = best).
    class_features_ : list of ndarray of int
        :math:`S_i`, best first, one per class.
    estimators_ : list of fitted classifiers
        :math:`e_i`, trained on the columns ``class_features_[i]``.
    n_features_per_class_ : int
        :math:`m`.
    scale_ : float
        What every X is divided by (see ``rescale``): 1, or the largest absolute entry of the
        training X.
    scores_, ranking_ : ndarray of shape (n_features_in_,)
        The selector's combined order (best per-class rank, then the sum of ranks, then the
        index; see :class:`~sparsefs.selection.ClassSpecificSelector`).
    support_ : ndarray of bool, shape (n_features_in_,)
        The union of the :math:`S_i` (the features the ensemble uses).
    n_features_to_select_ : int
        ``support_.sum()``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X is a DataFrame with string column names.

    Notes
    -----
    There is no ``decision_function`` or ``predict_proba``: the rule is not the argmax of any
    per-class score (a single claimant wins against a majority), so a vote-share score would
    disagree with ``predict``. :meth:`predict_votes` gives the vote counts :math:`v(k)` and
    :meth:`predict_members` the :math:`c` individual predictions.

    :meth:`fit_path` fits one model per :math:`m` of a grid with a single selector fit (what
    ``sparsefs reproduce smba_csfs`` uses for the best accuracy over :math:`m = 1..20`).

    References
    ----------
    .. [1] D. Nardone, A. Ciaramella and A. Staiano, "A sparse-modeling based approach for class
       specific feature selection", PeerJ Computer Science 5:e237, 2019.
    .. [2] B. B. Pineda-Bautista, J. A. Carrasco-Ochoa and J. Fco. Martinez-Trinidad, "General
       framework for class-specific feature selection", Expert Systems with Applications
       38(8):10018-10024, 2011.
    .. [3] N. V. Chawla, K. W. Bowyer, L. O. Hall and W. P. Kegelmeyer, "SMOTE: synthetic
       minority over-sampling technique", JAIR 16:321-357, 2002.

    Examples
    --------
    >>> from sparsefs.classification import ClassSpecificEnsembleClassifier
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import ClassSpecificSelector, FisherScore
    >>> data = make_planted_classification(n_samples=60, n_features=50, n_classes=3,
    ...                                    random_state=0)
    >>> gf = ClassSpecificSelector(FisherScore(), strategy="one_vs_rest")
    >>> clf = ClassSpecificEnsembleClassifier(gf, n_features_to_select=3, random_state=0)
    >>> clf.fit(data.X, data.y).score(data.X, data.y) > 0.9
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelectingClassifier._parameter_constraints,
        "selector": "no_validation",
        "estimator": "no_validation",
        "balance": [StrOptions({"smote", "none"})],
        "tie_rule": [StrOptions(set(_kernel.TIE_RULES))],
        "rescale": [StrOptions({"extreme", "max_abs"})],
        "random_state": ["random_state"],
    }
    #: ``n_features_to_select`` counts features per class; ``support_`` is their union.
    _per_class_selection: ClassVar[bool] = True
    # sparse X goes to the selector when it accepts it (ClassSpecificSelector checks)
    _accept_sparse = ("csr", "csc")
    _outputs = frozenset({"class_rankings_"})

    def __init__(
        self,
        selector=None,
        estimator=None,
        *,
        n_features_to_select=None,
        balance="smote",
        tie_rule="code",
        rescale="extreme",
        random_state=None,
    ):
        self.selector = selector
        self.estimator = estimator
        self.n_features_to_select = n_features_to_select
        self.balance = balance
        self.tie_rule = tie_rule
        self.rescale = rescale
        self.random_state = random_state

    # -- fitting -------------------------------------------------------------------------

    def _fit(self, X, y_idx):
        m = self.n_features_to_select_
        if m is None:  # None is accepted by the base constraint: the default count
            m = min(20, X.shape[1])
        X = self._rescaled(X, reset=True)
        self._sparse_fit = sp.issparse(X)
        state = self._fit_selector(X, y_idx, m)
        self._fit_members(state, m)

    def _rescaled(self, X: np.ndarray, *, reset: bool) -> np.ndarray:
        """``X / scale_``: ``scale_`` is the largest absolute entry of the training X (1 if X
        is all zero) when ``rescale="max_abs"``, or when ``rescale="extreme"`` and that entry
        lies outside [1e-100, 1e100]; else 1 (X as given). A common positive factor changes no
        ranking of a scale-free selector; see ``rescale`` for the classifiers."""
        if reset:
            if sp.issparse(X):
                big = float(abs(X).max()) if X.nnz else 0.0
            else:
                big = float(np.max(np.abs(X))) if X.size else 0.0
            extreme = big > 0.0 and not SAFE_RANGE[0] <= big <= SAFE_RANGE[1]
            use = big > 0.0 and (self.rescale == "max_abs" or extreme)
            self.scale_ = big if use else 1.0
        return X if self.scale_ == 1.0 else X / self.scale_

    def _fit_selector(self, X, y_idx, m: int) -> dict[str, Any]:
        """Steps 1-2: balance the rows and rank the features per class (seeds drawn in a fixed
        order, so that :meth:`fit_path` reproduces separate fits)."""
        n_classes = self.classes_.shape[0]
        rng = check_random_state(self.random_state)
        smote_seed, selector_seed, tie_seed = (int(s) for s in rng.randint(
            np.iinfo(np.int32).max, size=3))
        member_seeds = rng.randint(np.iinfo(np.int32).max, size=n_classes)
        Xb, yb = X, y_idx
        if self.balance == "smote":
            counts = np.bincount(y_idx, minlength=n_classes)
            small = counts[(counts > 1) & (counts < counts.max())]
            k = int(small.min()) - 1 if small.size else 1  # the authors' n_min - 1
            Xb, yb = smote_resample(X, y_idx, k, smote_seed)
        selector = self._class_selector()
        selector = _with_params(selector, n_features_to_select=m, random_state=selector_seed)
        selector.fit(Xb, yb)
        rankings = getattr(selector, "class_rankings_", None)
        if rankings is None:
            raise TypeError(
                f"selector {type(selector).__name__} has no class_rankings_ after fit; pass a "
                "ClassSpecificSelector."
            )
        rankings = np.asarray(rankings, dtype=np.int64)
        if rankings.shape != (n_classes, X.shape[1]):
            raise RuntimeError(
                f"selector gave rankings of shape {rankings.shape}; expected "
                f"{(n_classes, X.shape[1])}."
            )
        self.selector_ = selector
        self.class_rankings_ = rankings
        self._tie_seed = tie_seed
        return {"X": Xb, "y": yb, "member_seeds": member_seeds}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._class_selector().__sklearn_tags__().input_tags.sparse
        return tags

    def _class_selector(self) -> Any:
        """A fresh ClassSpecificSelector from the ``selector`` parameter."""
        if self.selector is None:
            return ClassSpecificSelector()
        if isinstance(self.selector, str):
            from sparsefs.utils import get_method

            info = get_method(self.selector)
            strategy = "one_vs_rest" if info.supervision == "supervised" else "samples"
            return ClassSpecificSelector(info.stem, strategy=strategy)
        return clone(self.selector)

    def _fit_members(self, state: dict[str, Any], m: int) -> None:
        """Step 3: one classifier per class on that class's top ``m`` features."""
        rankings = self.class_rankings_
        base = _default_estimator() if self.estimator is None else self.estimator
        features, members = [], []
        for i in range(rankings.shape[0]):
            cols = np.argsort(rankings[i], kind="stable")[:m]
            est = _with_params(clone(base), random_state=int(state["member_seeds"][i]))
            est.fit(_int32_indexed(state["X"][:, cols]), state["y"])
            features.append(cols)
            members.append(est)
        self.class_features_ = features
        self.estimators_ = members
        self.n_features_per_class_ = int(m)
        support = union_support(rankings, m)
        self._set_selection(-_tied_key(state["X"], rankings, support), support)

    def fit_path(
        self, X, y, n_features_grid: Sequence[int]
    ) -> list["ClassSpecificEnsembleClassifier"]:
        """Fit one ensemble per :math:`m` of a grid, sharing one balancing and selector fit.

        Each returned model equals ``clone(self).set_params(n_features_to_select=m).fit(X, y)``
        whenever the per-class rankings do not depend on the selector's
        ``n_features_to_select`` (true of ranking methods such as SMBA, Fisher or ReliefF);
        otherwise the rankings are those of ``max(n_features_grid)`` (the harness's ``rank``
        convention). The selector runs once instead of ``len(n_features_grid)`` times.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        n_features_grid : sequence of int
            Values of :math:`m` (each ``<= n_features``).

        Returns
        -------
        list of ClassSpecificEnsembleClassifier
            Fitted, in the order of ``n_features_grid``; this estimator is not modified.
        """
        grid = [int(v) for v in n_features_grid]
        if not grid:
            raise ValueError("n_features_grid is empty.")
        base = clone(self)
        base._validate_params()
        X, y_idx, _ = base._validate_fit_data(X, y)
        for v in grid:
            if v < 1:
                raise ValueError(f"n_features_grid holds {v}; every m must be >= 1.")
            resolve_n_features_to_select(v, X.shape[1])
        X = base._rescaled(X, reset=True)
        base._sparse_fit = sp.issparse(X)
        state = base._fit_selector(X, y_idx, max(grid))
        models = []
        for v in grid:
            model = copy.copy(base)  # shares the fitted selector (read-only)
            model.n_features_to_select = v
            model._fit_members(state, v)
            models.append(model)
        return models

    # -- prediction ----------------------------------------------------------------------

    def _check_X(self, X) -> np.ndarray:
        check_is_fitted(self, "estimators_")
        X = validate_data(self, X, reset=False, dtype=_FLOAT_DTYPES,
                          accept_sparse=self._accept_sparse)
        return self._rescaled(X, reset=False)

    def _member_predictions(self, X) -> np.ndarray:
        def columns(cols):  # a member fitted on dense X gets the dense n x m columns
            Xc = X[:, cols]
            if sp.issparse(Xc):
                return _int32_indexed(Xc) if self._sparse_fit else Xc.toarray()
            return Xc

        return np.column_stack([
            np.asarray(est.predict(columns(cols)), dtype=np.intp)
            for est, cols in zip(self.estimators_, self.class_features_, strict=True)
        ])

    def predict_members(self, X) -> np.ndarray:
        """The :math:`c` classifiers' predictions (labels), one column per class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Column :math:`i`: the prediction of the classifier built on class
            ``classes_[i]``'s features.
        """
        return self.classes_[self._member_predictions(self._check_X(X))]

    def predict_votes(self, X) -> np.ndarray:
        """Vote counts :math:`v(k)`: how many of the :math:`c` classifiers predict each class.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of int, shape (n_samples, n_classes)
            Columns in the order of ``classes_``; each row sums to ``n_classes``.
        """
        P = self._member_predictions(self._check_X(X))
        return _kernel.vote_counts(P, self.classes_.shape[0])

    def _tie_draws(self, X: np.ndarray) -> np.ndarray:
        """One uniform draw per row, from (the fit's tie seed, a CRC32 of the rescaled row
        rounded to float32: the same draw whatever the units of X, up to rounding)."""
        def crc(r):
            return zlib.crc32(np.ascontiguousarray(r, dtype=np.float32).tobytes())

        if sp.issparse(X):  # one dense row at a time
            Xr = sp.csr_array(X)
            keys = [crc(Xr[[i]].toarray().ravel()) for i in range(Xr.shape[0])]
        else:
            keys = [crc(r) for r in X]
        return np.array([np.random.default_rng([self._tie_seed, k]).random() for k in keys])

    def _predict_in_memory(self, X) -> np.ndarray:
        """Class labels by the ensemble's decision rule.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        X = self._check_X(X)
        P = self._member_predictions(X)
        labels = _kernel.ensemble_decision(P, self._tie_draws(X), self.tie_rule)
        return self.classes_[labels]
