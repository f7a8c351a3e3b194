"""ReliefF: features that separate each instance from its nearest misses but not its hits."""

from numbers import Integral, Real
from typing import ClassVar

import numpy as np

from sparsefs._kernels import relieff as _kernel
from sparsefs.base import BaseSelector, _zero_blas_flops
from sparsefs.utils._random import rng_from
from sparsefs.utils._sklearn_compat import Interval, RealNotInt, StrOptions

__all__ = ["ReliefF"]


class ReliefF(BaseSelector):
    r"""Rank features by their ReliefF weight (Kononenko 1994; Robnik-Šikonja & Kononenko 2003).

    For every instance :math:`R_i` with its :math:`k` nearest hits :math:`H_{il}` (same class)
    and, for each other class :math:`C`, its :math:`k` nearest misses :math:`M_{il}(C)`,

    .. math::

        W_A = \frac1m \sum_{i=1}^m \Big[ -\frac1k \sum_{l} \mathrm{diff}(A, R_i, H_{il})
              + \sum_{C \ne \mathrm{class}(R_i)} w_{C \mid R_i}\, \frac1k \sum_{l}
                \mathrm{diff}(A, R_i, M_{il}(C)) \Big],

    :math:`\mathrm{diff}(A, I_1, I_2) = |I_1[A] - I_2[A]| / (\max A - \min A)`, neighbours by
    the Manhattan distance over all features, and :math:`w_{C \mid R} = P(C)/(1 - P(\mathrm{class}
    (R)))` (Kononenko's multiclass ReliefF) or :math:`1/(K-1)`. A feature gains weight when it
    differs between an instance and its nearest misses and loses weight when it differs from the
    nearest hits, so interacting features are found too.

    Fully vectorised (blocks of Manhattan distances, one stable sort per class, one weighted sum
    over all instance-neighbour pairs); no Python loop over samples or features. Sparse X
    (CSR/CSC, e.g. word counts) is never densified: distances and diffs come from the stored
    values (a block of instance rows at a time is dense); the weights equal those of the dense
    copy up to rounding.

    **Continuous targets: RReliefF** (Robnik-Šikonja & Kononenko 1997; 2003). Hits and misses
    become a probability that the target differs: for each instance :math:`R_i` and its
    :math:`k` nearest neighbours :math:`I_j` (any target), with rank weights
    :math:`d(i, j) \propto e^{-(\mathrm{rank}/\sigma)^2}` (summing to 1 over the :math:`k`),

    .. math::

        W_A = \frac{N_{dC \wedge dA}}{N_{dC}} - \frac{N_{dA} - N_{dC \wedge dA}}{m - N_{dC}},

    :math:`N_{dC} = \sum d(i,j)\,\mathrm{diff}(\tau)`, :math:`N_{dA} = \sum d(i,j)\,
    \mathrm{diff}(A)`, :math:`N_{dC\wedge dA} = \sum d(i,j)\,\mathrm{diff}(\tau)\,
    \mathrm{diff}(A)` (:math:`\tau` the target, diffs over the ranges): a feature gains weight
    when its differences go with differences of the target
    (:func:`sparsefs._kernels.relieff.rrelieff_weights`). ``sigma`` sets the width of the
    rank weights (default :math:`k/3`: the :math:`k`-th neighbour weighs :math:`e^{-9}` of the
    first; the papers leave :math:`\sigma` to the user); ``class_weighting`` is unused.

    Choices: ties between equally distant neighbours go to the lower sample index; a class with
    fewer than ``n_neighbors`` other members contributes all of them (averaged over those found)
    and an instance alone in its class has no hits; features are treated as numeric (a 0/1
    feature gives the usual 0/1 diff). A constant feature has weight 0 and carries no
    information: its score is ``-inf``, ranked last (``weights_`` keeps the 0).

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
        An int count, a float fraction in (0, 1] (rounded down, at least 1), or ``None`` for this
        method's own rule: every feature whose weight exceeds ``threshold`` (Kira & Rendell's
        relevance threshold).
    n_neighbors : int, default=10
        :math:`k`, nearest hits and misses (per class) of each instance; Kononenko (1994)
        recommends 10.
    class_weighting : {"prior", "uniform"}, default="prior"
        Weight of the misses of class :math:`C`: the class prior
        :math:`P(C)/(1 - P(\mathrm{class}(R)))` (Kononenko's ReliefF) or :math:`1/(K-1)` (the
        convention of skrebate; equal to "prior" for balanced classes).
    n_instances : int, float or None, default=None
        :math:`m`, the number of instances :math:`R_i`: ``None`` uses every sample (deterministic),
        an int that many, a float that fraction, drawn without replacement with
        ``random_state``.
    threshold : float, default=0.0
        Relevance threshold of the ``n_features_to_select=None`` rule.
    random_state : int, RandomState instance or None, default=None
        Draws the instances when ``n_instances`` is not None; unused otherwise (``None``: fresh
        randomness; the global NumPy random state is neither read nor changed).
    sigma : float > 0 or None, default=None
        RReliefF (continuous targets): the width of the rank weights; ``None``:
        ``n_neighbors / 3``.
    target_type : {"auto", "classification", "regression"}, default="auto"
        How ``y`` is read: ``"auto"`` follows scikit-learn's ``type_of_target`` (float values:
        continuous, RReliefF; integers: classes, ReliefF); ``"regression"`` reads integer
        values as numbers.

    Attributes
    ----------
    scores_ : ndarray of shape (n_features_in_,)
        The ReliefF weights (higher = better), ``-inf`` for constant features.
    weights_ : ndarray of shape (n_features_in_,)
        The raw ReliefF (RReliefF) weights.
    target_type_ : str
        ``"classification"`` (ReliefF) or ``"regression"`` (RReliefF).
    ranking_ : ndarray of shape (n_features_in_,)
        1 = best; ties broken by the lower feature index.
    support_ : ndarray of shape (n_features_in_,), dtype bool
    n_features_to_select_ : int
    n_instances_ : int
        :math:`m`, the number of instances used.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Defined when X is a DataFrame with string column names.

    References
    ----------
    .. [1] K. Kira and L. A. Rendell, "A practical approach to feature selection", ICML 1992.
    .. [2] I. Kononenko, "Estimating attributes: analysis and extensions of RELIEF", ECML 1994.
    .. [3] M. Robnik-Šikonja and I. Kononenko, "Theoretical and empirical analysis of ReliefF
           and RReliefF", Machine Learning 53:23-69, 2003.
    .. [4] M. Robnik-Šikonja and I. Kononenko, "An adaptation of Relief for attribute
           estimation in regression", ICML 1997.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> from sparsefs.selection import ReliefF
    >>> data = make_planted_classification(n_samples=90, n_features=300, random_state=0)
    >>> selector = ReliefF(n_features_to_select=20).fit(data.X, data.y)
    >>> int((selector.support_ & data.support).sum()) >= 18
    True
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseSelector._parameter_constraints,
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "class_weighting": [StrOptions({"prior", "uniform"})],
        "n_instances": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            None,
        ],
        "threshold": [Interval(Real, None, None, closed="neither")],
        "random_state": ["random_state"],
        "sigma": [Interval(Real, 0, None, closed="neither"), None],
        "target_type": [StrOptions({"auto", "classification", "regression"})],
    }
    _accept_sparse = ("csr", "csc")
    _targets = ("classification", "regression")
    _outputs = frozenset({"weights_"})

    def __init__(
        self,
        n_features_to_select=None,
        *,
        n_neighbors=10,
        class_weighting="prior",
        n_instances=None,
        threshold=0.0,
        random_state=None,
        sigma=None,
        target_type="auto",
    ):
        self.n_features_to_select = n_features_to_select
        self.n_neighbors = n_neighbors
        self.class_weighting = class_weighting
        self.n_instances = n_instances
        self.threshold = threshold
        self.random_state = random_state
        self.sigma = sigma
        self.target_type = target_type

    _blas_flops = _zero_blas_flops

    def _fit(self, X, y_idx):
        n = X.shape[0]
        instances = None
        if self.n_instances is not None:
            m = (self.n_instances if isinstance(self.n_instances, Integral)
                 else max(1, int(self.n_instances * n)))
            if m > n:
                raise ValueError(
                    f"n_instances={self.n_instances!r} exceeds n_samples={n}; pass an int <= {n},"
                    " a fraction in (0, 1], or None."
                )
            rng = rng_from(self.random_state)
            instances = np.sort(rng.choice(n, size=m, replace=False))
        if self.target_type_ == "regression":
            weights = _kernel.rrelieff_weights(X, y_idx, self.n_neighbors, sigma=self.sigma,
                                               instances=instances)
        else:
            weights = _kernel.relieff_weights(
                X, y_idx, self.n_neighbors, class_weighting=self.class_weighting,
                instances=instances
            )
        constant = _kernel.column_span(X)[0] == 0
        self.weights_ = weights
        self.n_instances_ = n if instances is None else int(instances.size)
        scores = np.where(constant, -np.inf, weights)
        support = None
        if self.n_features_to_select_ is None:
            support = scores > self.threshold  # a prefix of the ranking
        self._set_selection(scores, support)
