"""Class-specific feature selection: one feature subset per class.

Estimator only: the rank combination lives in :mod:`sparsefs._kernels.class_specific`.
"""

from numbers import Integral
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils import check_random_state

from sparsefs._kernels import class_specific as _kernel
from sparsefs._kernels.columns import duplicate_column_groups, power_of_two_exponent
from sparsefs._kernels.ranking import is_top_set, rank_scores
from sparsefs.base import BaseSelector
from sparsefs.utils._sklearn_compat import StrOptions

__all__ = ["ClassSpecificSelector"]

#: ``n_features_to_select=None``: this many features per class (the paper's tables stop at
#: 20), capped at the number of features.
DEFAULT_N_FEATURES_PER_CLASS = 20

SMOTE_HINT = (
    "balance='smote' needs imbalanced-learn (a sparsefs dependency), which is missing: "
    'pip install "sparsefs[smote]" (or pass balance="none")'
)


def smote_resample(
    X: np.ndarray, y: np.ndarray, k_neighbors: int | str, seed: int, *, lone: str = "repeat"
) -> tuple[np.ndarray, np.ndarray]:
    """Oversample every minority class up to the majority's size (SMOTE, Chawla et al. 2002).

    Uses imbalanced-learn's :class:`~imblearn.over_sampling.SMOTE`, with ``k_neighbors``
    capped at the smallest class size minus one. A class with a single row cannot be
    interpolated: with ``lone="repeat"`` it is repeated up to the majority's size instead
    (and left out of SMOTE); with ``lone="skip"`` nothing is resampled (the harness's rule, as
    its stored reproductions were run). Nothing is done when the classes are already balanced
    or ``k_neighbors < 1``. The one SMOTE of the package: the class-specific estimators and
    the harness's ``smote`` preprocessing both call it.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Sparse X stays sparse (imbalanced-learn's SMOTE interpolates sparse rows).
    y : ndarray of int, shape (n_samples,)
    k_neighbors : int or "smallest"
        ``"smallest"``: the smallest class size minus one (the SMBA-CSFS code's setting).
    seed : int
    lone : {"repeat", "skip"}, default="repeat"

    Returns
    -------
    X_res, y_res : ndarray
        The original rows first, then the synthetic ones (imbalanced-learn's order).

    Raises
    ------
    ImportError
        If imbalanced-learn is not installed.
    """
    labels, counts = np.unique(y, return_counts=True)
    top = int(counts.max())
    if k_neighbors == "smallest":
        k_neighbors = int(counts.min()) - 1
    if counts.min() == top or k_neighbors < 1:
        return X, y
    single = labels[(counts == 1) & (top > 1)]
    if single.size and lone == "skip":
        return X, y
    if single.size:  # repeat the lone rows, then SMOTE the others
        extra = np.repeat(np.flatnonzero(np.isin(y, single)), top - 1)
        X = sp.vstack([X, X[extra]], format="csr") if sp.issparse(X) else np.concatenate(
            [X, X[extra]])
        y = np.concatenate([y, y[extra]])
        labels, counts = np.unique(y, return_counts=True)
        if counts.min() == top:
            return X, y
    small = counts[counts < top]
    k = int(min(k_neighbors, small.min() - 1))
    try:
        from imblearn.over_sampling import SMOTE
    except ImportError as exc:
        raise ImportError(SMOTE_HINT) from exc
    # unit-free: the neighbour search squares distances, which overflow near 1e300 and
    # underflow near 1e-300; SMOTE runs on X times a power of two that brings its largest
    # magnitude near 1 (exact both ways: only the exponents change), and the synthetic rows
    # x + u (x_nn - x) are scaled back by the same power
    shift = power_of_two_exponent(X)  # X / 2**shift: max |X| in [1, 2)
    if shift == 0:
        return SMOTE(k_neighbors=k, random_state=seed).fit_resample(X, y)
    X_res, y_res = SMOTE(k_neighbors=k, random_state=seed).fit_resample(
        _times_power_of_two(X, -shift), y)
    return _times_power_of_two(X_res, shift), y_res


def _times_power_of_two(X, e: int):
    """``X * 2**e`` computed with :func:`numpy.ldexp` (exact unless it leaves float64's
    range); sparse X stays sparse."""
    if sp.issparse(X):
        X = X.copy()
        X.data = np.ldexp(X.data, e)
        return X
    return np.ldexp(np.asarray(X, dtype=np.float64), e)


def _ranking_of(est: Any, n_features: int) -> np.ndarray:
    """A fitted selector's ranking (1 = best): ``ranking_``, else from ``scores_``."""
    if hasattr(est, "ranking_"):
        ranking = np.asarray(est.ranking_, dtype=np.int64)
    elif hasattr(est, "scores_"):
        scores = np.nan_to_num(np.asarray(est.scores_, dtype=np.float64), nan=-np.inf)
        order = np.argsort(-scores, kind="stable")
        ranking = np.empty(n_features, dtype=np.int64)
        ranking[order] = np.arange(1, n_features + 1)
    else:
        raise TypeError(
            f"the per-class selector {type(est).__name__} exposes neither ranking_ nor scores_."
        )
    if ranking.shape != (n_features,):
        raise RuntimeError(f"{type(est).__name__} ranked {ranking.shape} features, not "
                           f"{n_features}.")
    return ranking


def _tied_key(X, rankings: np.ndarray, support: np.ndarray) -> np.ndarray:
    """The global sort key (float), exact copies of a column tied (``_kernel.tie_copies``)
    when the union ``support`` stays a top set of the order (a copy on either side of it
    keeps the copies' own ranks: the union is what the per-class subsets hold)."""
    key = _kernel.combine_class_rankings(rankings).astype(np.float64)
    tied_ranks = _kernel.tie_copies(rankings, duplicate_column_groups(X))
    if tied_ranks is rankings:
        return key
    tied = _kernel.combine_class_rankings(tied_ranks).astype(np.float64)
    if is_top_set(rank_scores(-tied), support):
        return tied
    return key


def _accepts_sparse(est: Any) -> bool:
    try:
        return bool(est.__sklearn_tags__().input_tags.sparse)
    except AttributeError:  # pragma: no cover - not a scikit-learn estimator
        return False


def _requires_y(est: Any) -> bool:
    try:
        return bool(est.__sklearn_tags__().target_tags.required)
    except AttributeError:  # pragma: no cover - not a scikit-learn estimator
        return False


def _with_params(est: Any, **params: Any) -> Any:
    """Set those of ``params`` that ``est`` takes."""
    accepted = est.get_params(deep=False)
    chosen = {k: v for k, v in params.items() if k in accepted}
    return est.set_params(**chosen) if chosen else est


def default_selector() -> Any:
    """The default per-class selector: :class:`sparsefs.selection.SMBA` at ``alpha=10``, the
    authors' scripts' value (imported lazily). SMBA's own default became ``alpha=2`` by the
    leak-free global-ranking study of issue #16; the per-class use here keeps 10, decided by
    the defaults policy (docs/contract.md, "Changing a default"; issue #29): alpha=2 is not
    better on half A of the microarray benchmark (mean nested accuracy of the ensemble 0.845
    against 0.864)."""
    from sparsefs.selection._smba import SMBA  # lazy: SMBA lives in its own module

    return SMBA(alpha=10.0)


def resolve_selector(selector: Any) -> Any:
    """``None`` -> ``SMBA(alpha=10)``; a registry stem (``"fisher_score"``) -> that estimator
    with its defaults; an estimator -> itself (not cloned)."""
    from sparsefs.utils._factory import make_estimator

    return make_estimator(selector, clone=False, default=default_selector,
                          what=f"selector={selector!r}")


class ClassSpecificSelector(BaseSelector):
    r"""One feature subset per class: SMBA-CSFS or GF-CSFS style class-specific selection.

    For each class :math:`c_i` a clone of ``selector`` ranks the features
    (``class_rankings_[i]``, 1 = best) and the class keeps its top :math:`m`
    (``class_supports_[i]``), :math:`m` = ``n_features_to_select`` **per class**:

    * ``strategy="samples"`` (SMBA-CSFS, Nardone et al. 2019, Algorithm 1): the selector sees
      only the rows of class :math:`c_i`, without labels (it must be unsupervised, e.g.
      :class:`~sparsefs.selection.SMBA`, the default);
    * ``strategy="one_vs_rest"`` (GF-CSFS, Pineda-Bautista et al. 2011, as run by Nardone et al.
      for their Table 4): the labels are binarised (:math:`c_i` = 1, the rest = 0), the binary
      problem is balanced by SMOTE with :math:`k = \max(1, n_{\min} - 1)` neighbours
      (``balance="smote"``; :math:`n_{\min}` the minority count), and any supervised selector
      (Fisher, ReliefF, mRMR, ...) ranks the features on it.

    **One global ranking.** The selection contract asks for one ``scores_`` / ``ranking_`` /
    ``support_``. Feature :math:`j` is ordered by its best per-class rank
    :math:`b_j = \min_i \pi_i(j)`, ties by the sum of its ranks, then by the lower index
    (:func:`sparsefs._kernels.class_specific.combine_class_rankings`); ``scores_`` is minus that
    integer key. Hence ``support_`` = the **union** of the per-class top-:math:`m` sets = the top
    :math:`|\cup_i S_i|` features of ``ranking_``, and any top-:math:`k` of ``ranking_`` takes the
    features that are best for *some* class first. ``n_features_to_select_`` is the size of the
    union (between :math:`m` and :math:`c\,m`); :math:`m` is ``n_features_per_class_``.

    Sparse X (CSR/CSC) is accepted exactly when the per-class selector accepts it (e.g.
    ``"fisher_score"``, ``"relieff"``); it is passed on, never densified (SMOTE interpolates
    sparse rows). With a dense-only selector (SMBA, the default) sparse X is a ``TypeError``.

    Parameters
    ----------
    selector : estimator, str or None, default=None
        The per-class selector (cloned for each class; ``n_features_to_select`` = :math:`m` and
        ``random_state`` are set when it takes them). ``None``: :class:`~sparsefs.selection.SMBA`
        with its defaults; a string: a registry stem (``"fisher_score"``, see
        ``sparsefs methods``) with its defaults. It must expose ``ranking_`` or ``scores_``
        after ``fit``.
    strategy : {"samples", "one_vs_rest"}, default="samples"
        What the selector sees for class :math:`c_i` (see above).
    balance : {"smote", "none"}, default="smote"
        ``one_vs_rest`` only: balance each binarised problem with SMOTE (imbalanced-learn, a
        sparsefs dependency). Ignored by ``samples`` (the selector sees one
        class; to balance the classes first, use SMOTE before this selector, as
        :class:`~sparsefs.classification.ClassSpecificEnsembleClassifier` does in its ``fit``).
        A class with a single row is repeated instead of interpolated (and, with
        ``samples``, given to the selector twice).
    n_features_to_select : int, float or None, default=None
        Features kept **per class**, :math:`m`: an int count (``<= n_features``), a float
        fraction of the features in (0, 1], or ``None`` for
        ``min(20, n_features)`` (the paper's tables go up to 20 features).
    random_state : int, RandomState instance or None, default=None
        Seeds SMOTE and every per-class selector that takes a ``random_state``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_rankings_ : ndarray of shape (n_classes, n_features_in_)
        Row :math:`i`: the ranking of class :math:`c_i`'s selector (1 = best).
    class_supports_ : ndarray of bool, shape (n_classes, n_features_in_)
        Row :math:`i`: the top :math:`m` of row :math:`i` of ``class_rankings_``.
    estimators_ : list of fitted selectors
        One per class, in the order of ``classes_``.
    n_features_per_class_ : int
        :math:`m`.
    scores_ : ndarray of shape (n_features_in_,)
        Minus the combined key (higher = better; see above).
    ranking_ : ndarray of shape (n_features_in_,)
    support_ : ndarray of bool, shape (n_features_in_,)
        The union of ``class_supports_``.
    n_features_to_select_ : int
        ``support_.sum()``.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X is a DataFrame with string column names.

    See Also
    --------
    sparsefs.classification.ClassSpecificEnsembleClassifier : one classifier per class on these
        subsets, combined by the paper's decision rule.

    References
    ----------
    .. [1] D. Nardone, A. Ciaramella and A. Staiano, "A sparse-modeling based approach for class
       specific feature selection", PeerJ Computer Science 5:e237, 2019.
    .. [2] B. B. Pineda-Bautista, J. A. Carrasco-Ochoa and J. Fco. Martinez-Trinidad, "General
       framework for class-specific feature selection", Expert Systems with Applications
       38(8):10018-10024, 2011.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import ClassSpecificSelector, FisherScore
    >>> data = make_planted_classification(n_samples=60, n_features=50, n_classes=3,
    ...                                    random_state=0)
    >>> sel = ClassSpecificSelector(FisherScore(), strategy="one_vs_rest", balance="none",
    ...                             n_features_to_select=2).fit(data.X, data.y)
    >>> sel.class_supports_.sum(axis=1).tolist()
    [2, 2, 2]
    >>> bool(sel.support_.sum() >= 2)
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "selector": "no_validation",
        "strategy": [StrOptions({"samples", "one_vs_rest"})],
        "balance": [StrOptions({"smote", "none"})],
        "random_state": ["random_state"],
    }
    #: ``n_features_to_select`` counts features per class; ``support_`` is their union.
    _per_class_selection: ClassVar[bool] = True
    # sparse X is passed on to the per-class selector when it accepts it (checked in _fit)
    _accept_sparse = ("csr", "csc")
    _outputs = frozenset({"class_rankings_", "class_supports_"})

    def __init__(
        self,
        selector=None,
        *,
        strategy="samples",
        balance="smote",
        n_features_to_select=None,
        random_state=None,
    ):
        self.selector = selector
        self.strategy = strategy
        self.balance = balance
        self.n_features_to_select = n_features_to_select
        self.random_state = random_state

    def _validate_fit_data(self, X, y):
        X, y_idx, classes = super()._validate_fit_data(X, y)
        self.classes_ = classes
        return X, y_idx, classes

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = _accepts_sparse(resolve_selector(self.selector))
        return tags

    def _base_selector(self) -> Any:
        base = resolve_selector(self.selector)
        if not hasattr(base, "fit") or not hasattr(base, "get_params"):
            raise TypeError(
                f"selector={base!r} is not a scikit-learn estimator (no fit/get_params)."
            )
        return base

    def _fit(self, X, y_idx):
        n_classes = self.classes_.shape[0]
        p = X.shape[1]
        m = self.n_features_to_select_
        m = min(DEFAULT_N_FEATURES_PER_CLASS, p) if m is None else m
        rng = check_random_state(self.random_state)
        seeds = rng.randint(np.iinfo(np.int32).max, size=(n_classes, 2))
        base = self._base_selector()
        if self.strategy == "samples" and _requires_y(base):
            raise ValueError(
                f"strategy='samples' fits the selector on one class's rows without labels, but "
                f"{type(base).__name__} is supervised; use strategy='one_vs_rest' or an "
                "unsupervised selector (e.g. SMBA)."
            )
        if sp.issparse(X) and not _accepts_sparse(base):
            raise TypeError(
                f"ClassSpecificSelector passes X to its per-class selector "
                f"{type(base).__name__}, which does not accept sparse X; pass X.toarray() if "
                "it fits in memory, or a selector that takes sparse X (e.g. 'fisher_score')."
            )
        rankings = np.empty((n_classes, p), dtype=np.int64)
        estimators = []
        for i in range(n_classes):
            est = _with_params(clone(base), n_features_to_select=m,
                               random_state=int(seeds[i, 0]))
            if self.strategy == "samples":
                rows = X[y_idx == i]
                # a lone row is given twice (SMBA and most rankers need two rows)
                if rows.shape[0] == 1:
                    rows = sp.vstack([rows, rows]) if sp.issparse(rows) else np.repeat(
                        rows, 2, axis=0)
                est.fit(rows)
            else:
                yb = (y_idx == i).astype(np.intp)
                Xb = X
                if self.balance == "smote":
                    minority = int(min(yb.sum(), yb.shape[0] - yb.sum()))
                    Xb, yb = smote_resample(X, yb, max(1, minority - 1), int(seeds[i, 1]))
                est.fit(Xb, yb)
            rankings[i] = _ranking_of(est, p)
            estimators.append(est)
        self.estimators_ = estimators
        self.class_rankings_ = rankings
        self.class_supports_ = rankings <= m
        self.n_features_per_class_ = int(m)
        support = _kernel.union_support(rankings, m)
        self._set_selection(-_tied_key(X, rankings, support), support)

    def class_features(self, i: int) -> np.ndarray:
        """The top-:math:`m` feature indices of class ``classes_[i]``, best first.

        Parameters
        ----------
        i : int
            Position of the class in ``classes_``.

        Returns
        -------
        ndarray of int, shape (n_features_per_class_,)
        """
        if not isinstance(i, Integral):
            raise TypeError(f"i={i!r} must be a class position (an int).")
        order = np.argsort(self.class_rankings_[i], kind="stable")
        return order[: self.n_features_per_class_]
