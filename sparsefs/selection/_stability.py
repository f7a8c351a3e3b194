r"""Stability selection over any selector: selection frequencies on resamples, error bounds."""

import math
import warnings
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state, get_tags
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.parallel import Parallel, delayed

from sparsefs._kernels import stability as _kernel
from sparsefs._kernels.threads import resolve_n_jobs
from sparsefs.base import (
    BaseSelector,
    SupportMixin,
    _SparseEstimatorBase,
    resolve_n_features_to_select,
)
from sparsefs.metrics._stability import StabilityEstimate, nogueira_index
from sparsefs.utils._progress import fit_progress
from sparsefs.utils._sklearn_compat import Interval, RealNotInt, StrOptions, _fit_context
from sparsefs.utils._targets import resolve_target

__all__ = ["StabilitySelector"]

#: the threshold used when neither ``threshold``, ``pfer`` nor ``n_features_to_select`` is given
DEFAULT_THRESHOLD = 0.6
#: the threshold at which ``q="auto"`` sizes the base procedure (``stabs``' usual cut-off;
#: Meinshausen & Bühlmann find results insensitive to it in [0.6, 0.9])
AUTO_Q_THRESHOLD = 0.75


def _default_estimator():
    from sparsefs.selection._lasso import LassoSelector

    return LassoSelector()


def _checked_support(est, n_features: int) -> np.ndarray:
    support = np.asarray(est.get_support(), dtype=bool)
    if support.shape != (n_features,):
        raise RuntimeError(
            f"{type(est).__name__} gave a support of shape {support.shape} for {n_features} "
            "features."
        )
    return support


def _ranking_of(est, n_features: int) -> np.ndarray | None:
    """``ranking_`` when it is a permutation of 1..p (sparsefs estimators), else None."""
    ranking = getattr(est, "ranking_", None)
    if ranking is None:
        return None
    ranking = np.asarray(ranking)
    if ranking.shape != (n_features,) or ranking.dtype.kind not in "iu":
        return None
    if ranking.min() != 1 or ranking.max() != n_features:
        return None
    if np.bincount(ranking, minlength=n_features + 1)[1:].max() != 1:
        return None
    return ranking.astype(np.int32)


def _fit_chunk(estimator, X, y, indices, seeds, seed_keys=(), path=None):
    """Refit ``estimator`` on each row subset (its ``seed_keys`` parameters set to that
    resample's seed); the supports, the rankings (or None) and, with ``path = (name,
    values)``, the supports of one more fit per path value, shape (resamples, values, p)."""
    p = X.shape[1]
    supports = np.empty((len(indices), p), dtype=bool)
    path_supports = None if path is None else np.empty((len(indices), len(path[1]), p), bool)
    rankings: list[np.ndarray | None] = []
    for r, idx in enumerate(indices):
        est = clone(estimator)
        if seeds is not None:
            est.set_params(**dict.fromkeys(seed_keys, int(seeds[r])))
        Xr, yr = X[idx], None if y is None else y[idx]
        est.fit(Xr, yr)
        supports[r] = _checked_support(est, p)
        rankings.append(_ranking_of(est, p))
        if path is not None:
            for i, value in enumerate(path[1]):
                step = clone(est).set_params(**{path[0]: value})
                path_supports[r, i] = _checked_support(step.fit(Xr, yr), p)
    ranks = None if any(r is None for r in rankings) else np.vstack(rankings)
    return supports, ranks, path_supports


class StabilitySelector(BaseSelector):
    r"""Stability selection over any selector: keep the features chosen on most resamples.

    The base ``estimator`` is refitted on :math:`M` = ``n_resamples`` subsamples
    :math:`A_1, \dots, A_M` of the rows, and each feature gets its selection frequency

    .. math::

        \hat\Pi_j = \frac{1}{M} \sum_{m=1}^{M} \mathbb 1\{j \in \hat S(A_m)\}.

    The features with :math:`\hat\Pi_j \ge \tau` are kept. Two resampling schemes:

    * ``"complementary_pairs"`` (Shah & Samworth, 2013): :math:`B = M/2` pairs of disjoint
      halves of size :math:`\lfloor n/2 \rfloor`;
    * ``"subsample"`` (Meinshausen & Bühlmann, 2010): :math:`M` independent subsamples of
      :math:`\lfloor \text{sample\_fraction} \cdot n \rfloor` rows without replacement.

    For a supervised base estimator the subsamples are stratified by class (``stratify``);
    for a survival target by the event indicator (each half keeps the share of censored
    times), and a continuous target is not stratified. The target's kind (class labels, a
    continuous y, a survival array; ``docs/outcomes.md``) is the base estimator's: stability
    over :class:`~sparsefs.selection.LassoSelector` (the default) on a survival target is
    stability selection over the Cox lasso, as in ``stabs``' any-fit-function design.

    **Error control.** With :math:`q` the mean number of features selected per resample
    (``q_``), :math:`p` the number of features and :math:`V` the number of falsely selected
    features, the worst-case bound is

    .. math::

        \mathbb E[V] \le \frac{q^2}{(2\tau - 1)\, p}, \qquad \tau \in (1/2, 1],

    Meinshausen & Bühlmann's Theorem 1 (assuming the noise features are exchangeable and the
    base procedure is not worse than random guessing) and, for complementary pairs, Shah &
    Samworth's Theorem 1 (no such assumption; :math:`V` then counts the selected features whose
    selection probability on a half-sample is at most :math:`q/p`). For complementary pairs the
    default ``bound="unimodal"`` also uses Shah & Samworth's Theorem 2: if the distribution of
    each such feature's frequency is unimodal, :math:`\mathbb E[V] \le C(\tau, B)\, q^2/p` with
    the constant of
    :func:`sparsefs._kernels.stability.cpss_unimodal_constant` (about half the worst case);
    ``pfer_bound_`` is the smaller of the two. Their r-concave bound (Theorem 3), which needs a
    numerical maximisation over distributions, is not implemented. The bounds are proved for
    half-samples (``sample_fraction=0.5``).

    The cut-off follows from one of: ``n_features_to_select`` (the top features by frequency;
    ``threshold_`` is then the lowest kept frequency), ``pfer`` (the smallest threshold on the
    grid :math:`j/M` whose bound is at most ``pfer``), ``threshold``, or, when none is given,
    :math:`\tau = 0.6` (Meinshausen & Bühlmann find results insensitive to :math:`\tau \in
    [0.6, 0.9]`). ``pfer_bound_`` is the bound at the threshold used.

    **Stability path.** With ``path_param`` and ``path_values``, ``frequency_path_[j, i]`` is
    the frequency of feature :math:`j` when the base estimator is refitted on every resample
    with ``path_param = path_values[i]`` (a penalty path). Otherwise, when each resample's fit
    gives a full ranking (every sparsefs estimator), ``frequency_path_[j, i]`` is the frequency
    of feature :math:`j` in the top ``path_values_[i]`` features of the resamples' rankings,
    from the same fits, without refitting. For rankers
    whose scores do not depend on the count (the filters: Fisher score, Laplacian score,
    ReliefF, ...) this is exactly what refitting with ``n_features_to_select=k`` for every k
    would give; for penalised models it is the order of their fitted weights at the one
    penalty used.

    **Exact copies.** Identical columns are one feature: each gets the frequency with which
    any column of its group was selected (a top-:math:`k` base keeps only the first of two
    tied copies at its cut-off). ``supports_``, ``q_``, the stability index and
    ``frequency_path_`` count the columns as the base estimator selected them.

    **Stability index.** ``stability_index_`` is the estimator of Nogueira, Sechidis & Brown
    (2018) over the :math:`M` supports, with its 95% confidence interval
    (:func:`sparsefs.metrics.nogueira_index`).

    **Donors** (``fit(X, y, groups=donors)``). When samples come in groups that are not
    independent (the cells of one donor share its expression offsets), the resampling unit is
    the donor: complementary halves (or subsamples) of the *donor set*, each resample holding
    every cell of its donors. The design is detected and recorded (``design_``): *nested*
    (each donor belongs to one class: the halves are stratified by class, at least 2 donors per
    class), *crossed* (donors have cells of several classes: plain halves of the donors), or
    neither (one donor, donors confounded with the classes: an error). The error bounds above
    then hold with the donors as the exchangeable units: a feature that looks associated only
    because of the offsets of a few donors is selected only in the halves holding them, so its
    frequency stays low, where cell-level halves (every donor in every half) would select it
    every time.
    A continuous or survival target has no classes: the halves are plain halves of the donors
    (stratified by the donors' events for a survival target constant within every donor),
    whether the target is a donor attribute (``design_ = "nested"``) or varies within donors
    (``"crossed"``, e.g. pseudotime); the bounds need only exchangeable donors.

    Parameters
    ----------
    estimator : estimator, default=None
        Any registered sparsefs estimator, or any scikit-learn selector with ``get_support``;
        cloned for every resample. ``None``:
        :class:`~sparsefs.selection.LassoSelector` (the base procedure of Meinshausen &
        Bühlmann). Every ``random_state`` parameter of it left at ``None`` (nested ones
        included) gets, in each resample's clone, that resample's seed drawn from
        ``random_state``.
    n_resamples : int, default=50
        :math:`M`, the number of fits (even for complementary pairs: :math:`B = M/2` pairs).
    sample_fraction : float in (0, 1), default=0.5
        Subsample size over :math:`n` for ``scheme="subsample"``; complementary pairs always
        use halves (only 0.5 is accepted there).
    scheme : {"complementary_pairs", "subsample"}, default="complementary_pairs"
    threshold : float in (0, 1], default=None
        :math:`\tau`: keep the features with :math:`\hat\Pi_j \ge \tau`.
    pfer : float > 0, default=None
        Target bound on the expected number of false selections; the threshold follows. If no
        threshold reaches it (``q`` too large for ``p``), :math:`\tau = 1` is used with a
        warning.
    n_features_to_select : int, float in (0, 1] or None, default=None
        Keep this many features, the most frequently selected (ties by the lower index).
        At most one of ``threshold``, ``pfer`` and ``n_features_to_select`` may be given.
    q : int >= 1, "auto" or None, default="auto"
        The number of features the base estimator selects on every resample (set as its
        ``n_features_to_select``; see "The base procedure's size" above). ``"auto"``: chosen
        from ``pfer`` when ``pfer`` is given and the base estimator's count is ``None``,
        otherwise the base estimator as given; ``None``: always as given.
    bound : {"unimodal", "worst_case"} or None, default=None
        The error bound: ``None`` means ``"unimodal"`` for complementary pairs and
        ``"worst_case"`` for subsampling (the unimodal bound exists for complementary pairs
        only).
    stratify : bool, default=True
        Stratify the resamples by class (by the event indicator for a survival target) when
        the base estimator is supervised.
    n_jobs : int, default=None
        Resamples fitted in parallel with joblib (``None``: 1, unless inside
        ``joblib.parallel_config(n_jobs=k)``; ``-1``: all CPUs; docs/contract.md, "n_jobs").
        The result does not depend on it: every resample and seed is drawn before the fits.
    random_state : int, RandomState instance or None, default=None
        Draws the resamples (and the base estimator's seeds, see ``estimator``).
    verbose : bool, default=False
        A progress bar over the resamples (docs/contract.md, "Progress").
    path_param : str, default=None
        A parameter of the base estimator to refit along (the penalty ``"alpha"`` of the lasso,
        elastic net and l2,1 models, ``"wbound"`` of :class:`~sparsefs.clustering.SparseKMeans`,
        ``"n_features_to_select"`` for any estimator); with ``path_values``. Each resample is
        then also fitted once per value (``n_resamples * len(path_values)`` more fits).
        ``None``: the count path from the resamples' rankings (no extra fit).
    path_values : array-like, default=None
        The values of ``path_param``.

    Attributes
    ----------
    frequencies_ : ndarray of shape (n_features,)
        :math:`\hat\Pi_j`.
    scores_ : ndarray of shape (n_features,)
        ``frequencies_`` (higher = more stable).
    ranking_, support_, n_features_to_select_, n_features_in_, feature_names_in_ :
        The selection contract (``sparsefs.base``).
    supports_ : ndarray of shape (n_resamples, n_features), bool
        The support of every resample's fit.
    n_selected_ : ndarray of shape (n_resamples,)
        Their sizes.
    q_ : float
        Their mean, :math:`q`.
    q_target_ : int or None
        The count set on the base estimator (``q``), or ``None`` when it ran as given.
    threshold_ : float
        :math:`\tau` used.
    pfer_bound_ : float
        The bound on :math:`\mathbb E[V]` at ``threshold_`` (``inf`` when
        :math:`\tau \le 1/2`).
    bound_ : str
        The bound used, ``"unimodal"`` or ``"worst_case"``.
    stability_index_ : StabilityEstimate
        Nogueira's index over ``supports_`` with its 95% interval (NaN when every support is
        empty or full).
    frequency_path_ : ndarray of shape (n_features, n_path) or None
        Frequencies along the count path (see above); ``None`` when the base estimator gives
        no full ranking.
    path_values_ : ndarray of shape (n_path,) or None
        ``path_values``, or the counts of the count path: every :math:`k` from 1 to
        :math:`k_{max} = \min(p, \max(20, 2 \max_m |\hat S(A_m)|))` when
        :math:`k_{max} \le 50`, else 50 geometrically spaced counts (memory :math:`50 p`).
    path_param_ : str or None
        ``path_param``, ``"n_features_to_select"`` for the count path, or ``None``.
    estimator_ : estimator
        The (unfitted) clone of ``estimator`` that was refitted on every resample.
    target_type_ : str or None
        The kind of target (``"classification"``, ``"regression"``, ``"survival"``; ``None``
        for an unsupervised base estimator).
    design_ : {"nested", "crossed", "unlabelled"} or None
        With ``groups``: the design found (``"unlabelled"`` for an unsupervised base
        estimator; for a continuous or survival target, ``"nested"`` when it is constant
        within every donor, else ``"crossed"``); ``None`` without ``groups``.
    design_info_ : DonorDesign or None
        The donor x class table of cell counts, the reason and notes
        (:class:`sparsefs._kernels.donors.DonorDesign`; ``None`` for a continuous or survival
        target, which has no classes).

    See Also
    --------
    sparsefs.metrics.nogueira_index : the stability of any family of supports.
    sparsefs.plotting.plot_stability_path : the frequencies along the path.

    References
    ----------
    N. Meinshausen and P. Bühlmann, "Stability selection", JRSS-B 72(4), 417-473, 2010.
    R. D. Shah and R. J. Samworth, "Variable selection with error control: another look at
    stability selection", JRSS-B 75(1), 55-80, 2013.
    S. Nogueira, K. Sechidis and G. Brown, "On the stability of feature selection algorithms",
    JMLR 18(174), 1-54, 2018.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import FisherScore, StabilitySelector
    >>> data = make_planted_classification(100, 500, 10, 2, shift=2.0, random_state=0)
    >>> sel = StabilitySelector(FisherScore(n_features_to_select=20), n_resamples=50,
    ...                         pfer=1, random_state=0).fit(data.X, data.y)
    >>> int((sel.support_ & data.support).sum()), int((sel.support_ & ~data.support).sum())
    (10, 0)
    """

    _outputs = frozenset({"frequencies_"})
    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "estimator": "no_validation",
        "n_resamples": [Interval(Integral, 2, None, closed="left")],
        "sample_fraction": [Interval(RealNotInt, 0, 1, closed="neither")],
        "scheme": [StrOptions({"complementary_pairs", "subsample"})],
        "threshold": [Interval(Real, 0, 1, closed="right"), None],
        "pfer": [Interval(Real, 0, None, closed="neither"), None],
        "q": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
        "bound": [StrOptions({"unimodal", "worst_case"}), None],
        "stratify": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "path_param": [str, None],
        "path_values": ["array-like", None],
    }

    def __init__(
        self,
        estimator=None,
        *,
        n_resamples=50,
        sample_fraction=0.5,
        scheme="complementary_pairs",
        threshold=None,
        pfer=None,
        n_features_to_select=None,
        q="auto",
        bound=None,
        stratify=True,
        n_jobs=None,
        random_state=None,
        verbose=False,
        path_param=None,
        path_values=None,
    ):
        self.estimator = estimator
        self.n_resamples = n_resamples
        self.sample_fraction = sample_fraction
        self.scheme = scheme
        self.threshold = threshold
        self.pfer = pfer
        self.n_features_to_select = n_features_to_select
        self.q = q
        self.bound = bound
        self.stratify = stratify
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.path_param = path_param
        self.path_values = path_values

    # -- the base estimator decides supervision and sparse input --------------------------------

    def _base(self):
        return _default_estimator() if self.estimator is None else self.estimator

    @property
    def _supervised(self) -> bool:  # type: ignore[override]
        return bool(get_tags(self._base()).target_tags.required)

    @property
    def _accept_sparse(self):  # type: ignore[override]
        return "csr" if get_tags(self._base()).input_tags.sparse else False

    @property
    def _targets(self):  # type: ignore[override]
        """The kinds of target of the base estimator (docs/outcomes.md); a scikit-learn
        selector that is not a sparsefs estimator may take class labels or a continuous y."""
        base = self._base()
        if isinstance(base, SupportMixin):
            return tuple(base._targets)
        return ("classification", "regression")

    def _validate_fit_data(self, X, y):
        """Validate X (and y when the base estimator uses it) once for all resamples.

        A scikit-learn selector may use y without declaring it in its tags (``SelectKBest``):
        for a base estimator that is not a sparsefs estimator, a ``y`` given to ``fit`` is
        passed on (and class labels are used for stratification). The kind of target (class
        labels, continuous, survival; docs/outcomes.md) is the base estimator's reading of
        ``y`` (its ``target_type`` parameter included): class labels are passed on as class
        indices, a continuous or survival target as given.
        """
        base = self._base()
        uses_y = self._supervised or (y is not None and not isinstance(base, SupportMixin))
        if not uses_y:
            self.target_type_ = None
            return self._validate(X, reset=True), None, None
        if y is None:
            raise ValueError(
                f"{type(self).__name__} is supervised and requires y to be passed, but the "
                "target y is None."
            )
        target_type = base.get_params(deep=False).get("target_type", "auto")
        target = resolve_target(y, self._targets, name=f"{type(self).__name__} with "
                                f"{type(base).__name__}", target_type=target_type)
        self.target_type_ = target.kind
        if target.kind != "classification":
            return _SparseEstimatorBase._validate_outcome(self, X, target)
        X, y = self._validate(X, y, reset=True)
        check_classification_targets(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.shape[0] < self._min_classes:
            raise ValueError(
                f"{type(self).__name__} needs at least {self._min_classes} classes in y; got "
                f"{classes.shape[0]} class ({classes.tolist()!r})."
            )
        return X, y_idx.astype(np.intp, copy=False), classes

    @_fit_context(prefer_skip_nested_validation=False)  # the base estimator's own validation runs
    def fit(self, X, y=None, groups=None, **fit_params: Any):
        """Refit the base estimator on every resample and select the stable features.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Sparse input is accepted when the base estimator accepts it.
        y : array-like of shape (n_samples,), default=None
            Class labels, a continuous target or a structured survival array, as the base
            estimator takes (required when it is supervised).
        groups : array-like of shape (n_samples,), default=None
            Donor / sample labels (scikit-learn's ``groups``): the resamples are then halves
            (or subsamples) of the *donors*, each with all of its samples; see "Donors" above.
        **fit_params : dict
            Not supported (an error if given).

        Returns
        -------
        self : object
        """
        if fit_params:
            raise TypeError(
                f"StabilitySelector.fit takes no fit parameters; got {sorted(fit_params)}."
            )
        base = self._base()
        if not (hasattr(base, "fit") and hasattr(base, "get_support")):
            raise TypeError(
                f"estimator={base!r} must be a selector: an estimator with fit and get_support "
                "(any sparsefs estimator or scikit-learn selector)."
            )
        X, y_idx, _ = self._validate_fit_data(X, y)
        self.n_features_to_select_ = resolve_n_features_to_select(
            self.n_features_to_select, X.shape[1]
        )
        self._fit(X, y_idx, base, groups)
        return self

    def _donor_units(self, y_idx, groups, n):
        """``(cells of each donor, class of each donor or None)`` for donor-level resampling,
        with the design recorded in ``design_`` / ``design_info_``."""
        from sparsefs.selection._donors import check_groups, donor_design, logger

        g_idx, names = check_groups(groups, n)
        n_groups = names.shape[0]
        if n_groups < 2:
            raise ValueError(
                "StabilitySelector: groups= holds a single donor; donor-level resamples need "
                "at least 2 donors (halves of the donor set)."
            )
        order = np.argsort(g_idx, kind="stable")
        cells = np.split(order, np.flatnonzero(np.diff(g_idx[order])) + 1)
        strata = None
        if y_idx is None:
            self.design_, self.design_info_ = "unlabelled", None
            logger.info("StabilitySelector: resampling halves of %d donors (unsupervised "
                        "base estimator).", n_groups)
        elif self.target_type_ != "classification":
            strata = self._outcome_donor_strata(y_idx, g_idx, n_groups)
        else:
            design = donor_design(y_idx, g_idx, int(y_idx.max()) + 1, n_groups,
                                  type(self).__name__)
            self.design_, self.design_info_ = design.design, design
            if design.design == "nested":
                few = np.flatnonzero(design.donors_per_class < 2)
                if few.size:
                    raise ValueError(
                        "StabilitySelector: groups= gives a nested design (one class per "
                        f"donor) with a single donor in class(es) {few.tolist()}: a half of the "
                        "donors would lack that class. Donor-level resampling needs at least 2 "
                        "donors per class."
                    )
                if self.stratify:
                    strata = np.asarray([y_idx[c[0]] for c in cells])
        return cells, strata

    def _outcome_donor_strata(self, y, g_idx, n_groups):
        """The design of a continuous or survival target with donors (``design_``), and the
        strata of the donors: a survival target constant within every donor stratifies the
        halves by the donors' events; otherwise the halves are plain halves of the donors."""
        from sparsefs.selection._donors import donor_outcome, logger

        per_donor = donor_outcome(y, g_idx, n_groups)
        self.design_ = "crossed" if per_donor is None else "nested"
        self.design_info_ = None
        what = {"regression": "continuous", "survival": "survival"}[self.target_type_]
        logger.info("StabilitySelector: resampling halves of %d donors (a %s target %s).",
                    n_groups, what, "varying within donors" if per_donor is None
                    else "constant within every donor")
        if per_donor is None or self.target_type_ != "survival" or not self.stratify:
            return None
        events = per_donor["event"].astype(np.intp)
        if events.sum() < 2:
            raise ValueError(
                "StabilitySelector: groups= with a survival target constant within every donor "
                f"has {int(events.sum())} donor(s) with an observed event: a half of the donors "
                "would have no event. Donor-level resampling needs at least 2 donors with an "
                "event."
            )
        return events

    def _fit(self, X, y_idx, base, groups=None):
        n, p = X.shape
        given = [name for name in ("threshold", "pfer", "n_features_to_select")
                 if getattr(self, name) is not None]
        if len(given) > 1:
            got = ", ".join(f"{g}={getattr(self, g)!r}" for g in given)
            raise ValueError(
                "StabilitySelector: give at most one of threshold, pfer and "
                f"n_features_to_select; got {got}."
            )
        path = None
        if (self.path_param is None) != (self.path_values is None):
            raise ValueError(
                f"path_param={self.path_param!r} and path_values={self.path_values!r}: give both "
                "or neither."
            )
        if self.path_param is not None:
            if self.path_param not in base.get_params(deep=False):
                raise ValueError(
                    f"path_param={self.path_param!r} is not a parameter of "
                    f"{type(base).__name__} (it has {', '.join(base.get_params(deep=False))})."
                )
            values = list(np.asarray(self.path_values, dtype=object).ravel())
            if not values:
                raise ValueError("path_values is empty; give at least one value.")
            values = [v.item() if isinstance(v, np.generic) else v for v in values]
            path = (self.path_param, values)
        m = int(self.n_resamples)
        pairs = self.scheme == "complementary_pairs"
        if pairs:
            if m % 2:
                raise ValueError(
                    f"n_resamples={m} must be even for scheme='complementary_pairs' (n_resamples/2 "
                    "pairs of disjoint halves)."
                )
            if self.sample_fraction != 0.5:
                raise ValueError(
                    f"sample_fraction={self.sample_fraction!r}: scheme='complementary_pairs' uses "
                    "disjoint halves; use sample_fraction=0.5 or scheme='subsample'."
                )
        bound = self.bound if self.bound is not None else (
            "unimodal" if pairs else "worst_case")
        if bound == "unimodal" and not pairs:
            raise ValueError(
                "bound='unimodal' (Shah & Samworth's Theorem 2) holds for "
                "scheme='complementary_pairs' only; use bound='worst_case'."
            )
        self.design_, self.design_info_ = None, None
        donor_cells, units, strata = None, n, None
        if groups is not None:
            donor_cells, strata = self._donor_units(y_idx, groups, n)
            units = len(donor_cells)
        elif y_idx is not None and self.stratify and self.target_type_ == "classification":
            strata = y_idx
        elif y_idx is not None and self.stratify and self.target_type_ == "survival":
            strata = y_idx["event"].astype(np.intp)  # each half keeps the censoring rate
        size = units // 2 if pairs else math.floor(self.sample_fraction * units)
        if size < 1:
            got = (f"{units} donors" if groups is not None else f"n_samples = {n}")
            raise ValueError(
                f"StabilitySelector needs subsamples of at least 1 "
                f"{'donor' if groups is not None else 'row'}; got {got} (subsample size "
                f"{size})."
            )

        rng = check_random_state(self.random_state)
        if pairs:
            indices = _kernel.complementary_pairs(units, m // 2, rng, strata)
        else:
            indices = _kernel.subsamples(units, m, size, rng, strata)
        if donor_cells is not None:  # the rows of the chosen donors, all of their cells
            indices = [np.sort(np.concatenate([donor_cells[d] for d in half]))
                       for half in indices]
        # every random_state left at None, nested ones included (SelectFromModel(forest))
        seed_keys = [key for key, value in base.get_params(deep=True).items()
                     if value is None and (key == "random_state"
                                           or key.endswith("__random_state"))]
        seeds = rng.randint(np.iinfo(np.int32).max, size=m) if seed_keys else None

        self.estimator_ = clone(base)
        self.q_target_ = self._per_resample_count(base, p, m, bound == "unimodal")
        if self.q_target_ is not None:
            self.estimator_.set_params(n_features_to_select=self.q_target_)
        supports, rankings, path_supports = self._run(X, y_idx, indices, seeds,
                                                      tuple(seed_keys), path)

        counts = _group_counts(X, supports)
        freq = counts / m
        n_selected = supports.sum(axis=1)
        q = float(n_selected.mean())
        unimodal = bound == "unimodal"
        support = None
        if self.n_features_to_select_ is not None:
            top = np.argsort(-freq, kind="stable")[: self.n_features_to_select_]
            tau = float(freq[top].min())
        elif self.pfer is not None:
            tau, achieved = _kernel.threshold_for_pfer(q, p, float(self.pfer), m,
                                                       unimodal=unimodal)
            if achieved > self.pfer * (1.0 + 1e-12):  # the kernel's rounding slack
                warnings.warn(
                    f"StabilitySelector: no threshold bounds the expected false selections by "
                    f"pfer={self.pfer!r} with q={q:.3g} of p={p} features per resample; the "
                    f"threshold 1 is used (bound {achieved:.3g}). Select fewer features per "
                    "resample.",
                    UserWarning,
                    stacklevel=3,
                )
        else:
            tau = float(self.threshold) if self.threshold is not None else DEFAULT_THRESHOLD
        if self.n_features_to_select_ is None:
            support = counts >= math.ceil(m * tau - 1e-9)

        self.supports_ = supports
        self.n_selected_ = n_selected
        self.q_ = q
        self.n_resamples_ = m
        self.frequencies_ = freq
        self.threshold_ = tau
        self.bound_ = bound
        self.pfer_bound_ = _kernel.pfer_bound(q, p, tau, m, unimodal=unimodal)
        kbar = q
        if 0 < kbar < p:
            self.stability_index_ = nogueira_index(supports)
        else:
            nan = float("nan")
            self.stability_index_ = StabilityEstimate(nan, nan, nan, nan, 0.95, m)
        if path is not None:
            self.path_param_ = path[0]
            self.path_values_ = np.asarray(path[1])
            self.frequency_path_ = path_supports.mean(axis=0).T
        elif rankings is not None:
            kmax = min(p, max(20, 2 * int(n_selected.max())))
            self.path_param_ = "n_features_to_select"
            self.path_values_ = _kernel.count_path_grid(kmax)
            self.frequency_path_ = _kernel.rank_path_frequencies(rankings, self.path_values_)
        else:
            self.path_param_ = None
            self.path_values_ = None
            self.frequency_path_ = None
        self._set_selection(freq, support)

    def _per_resample_count(self, base, p: int, m: int, unimodal: bool) -> int | None:
        """The ``n_features_to_select`` of every resample's clone (``q``), or None."""
        params = base.get_params(deep=False)
        if self.q is None:
            return None
        if self.q == "auto":
            if self.pfer is None or params.get("n_features_to_select", 0) is not None:
                return None
            return _kernel.count_for_pfer(p, float(self.pfer), m, AUTO_Q_THRESHOLD,
                                          unimodal=unimodal)
        if "n_features_to_select" not in params:
            raise ValueError(
                f"q={self.q!r} sets n_features_to_select on the base estimator, which "
                f"{type(base).__name__} does not have; use q=None or q='auto'."
            )
        if self.q > p:
            raise ValueError(f"q={self.q} exceeds the number of features ({p}).")
        return int(self.q)

    def _run(self, X, y_idx, indices, seeds, seed_keys, path):
        m = len(indices)
        n_jobs = resolve_n_jobs(self.n_jobs)
        sequential = n_jobs == 1
        n_chunks = m if sequential else min(m, 4 * n_jobs)
        bounds = np.linspace(0, m, n_chunks + 1).astype(int)
        chunks = [(bounds[i], bounds[i + 1]) for i in range(n_chunks) if bounds[i] < bounds[i + 1]]
        jobs = (
            delayed(_fit_chunk)(self.estimator_, X, y_idx, indices[a:b],
                                None if seeds is None else seeds[a:b], seed_keys, path)
            for a, b in chunks
        )
        supports, rankings, paths = [], [], []
        bar = fit_progress(m, f"{type(self).__name__}: resamples", self.verbose)
        try:
            if sequential:
                results = (_fit_chunk(self.estimator_, X, y_idx, indices[a:b],
                                      None if seeds is None else seeds[a:b], seed_keys, path)
                           for a, b in chunks)
            else:
                results = Parallel(n_jobs=n_jobs, return_as="generator")(jobs)
            for (a, b), (sup, rank, path_sup) in zip(chunks, results):
                supports.append(sup)
                rankings.append(rank)
                paths.append(path_sup)
                bar.update(b - a)
        finally:
            bar.close()
        ranks = None if any(r is None for r in rankings) else np.vstack(rankings)
        path_supports = None if path is None else np.concatenate(paths, axis=0)
        return np.vstack(supports), ranks, path_supports

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        base_tags = get_tags(self._base())
        tags.input_tags.allow_nan = False
        tags.non_deterministic = bool(base_tags.non_deterministic)
        return tags


def _group_counts(X, supports: np.ndarray) -> np.ndarray:
    """How many resamples selected each column - or, for exact copies of a column, any member
    of its group (copies are one feature to every method; a top-k base keeps only the first
    of two tied copies at its cut-off, which would leave the other at frequency 0)."""
    from sparsefs._kernels.columns import duplicate_column_groups

    counts = supports.sum(axis=0)
    first = duplicate_column_groups(X)
    if np.array_equal(first, np.arange(first.shape[0])):
        return counts
    hit = np.zeros(supports.shape, dtype=bool)
    rows = np.nonzero(supports)
    hit[rows[0], first[rows[1]]] = True
    return hit[:, first].sum(axis=0)
