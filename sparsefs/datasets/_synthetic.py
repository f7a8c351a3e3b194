"""Synthetic data sets with a known set of relevant features.

Every generator takes ``random_state`` (None, an int or a :class:`numpy.random.RandomState`,
resolved by :func:`sklearn.utils.check_random_state`; the global NumPy generator is never
seeded) and returns a :class:`~sparsefs.datasets.Dataset` whose ``support`` marks the truly
relevant features and whose feature names are ``x0, x1, ...``.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np
from scipy.signal import lfilter
from sklearn.utils import check_random_state

from ._loaders import Dataset, default_feature_names

__all__ = [
    "make_kos_rings",
    "make_kos_sine",
    "make_planted_classification",
    "make_planted_regression",
    "make_planted_survival",
    "make_sparse_clusters_exp1",
    "make_sparse_clusters_exp2",
    "make_sparse_clusters_exp3",
    "make_sparse_clusters_exp4",
]

_CHANG = (
    "Chang, Wang, Li & Xu, 'Sparse K-means with l_inf/l_0 penalty for high-dimensional data "
    "clustering', Statistica Sinica 28(3):1265-1284, 2018 (arXiv:1403.7890)"
)


# --------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------


def _check_int(name: str, value: Any, min_value: int, max_value: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__}).")
    value = int(value)
    if value < min_value or (max_value is not None and value > max_value):
        upper = "" if max_value is None else f" and <= {max_value}"
        raise ValueError(f"{name} must be >= {min_value}{upper}, got {value}.")
    return value


def _check_real(
    name: str,
    value: Any,
    *,
    low: float | None = None,
    high: float | None = None,
    closed: bool = True,
) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__}).")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}.")
    too_low = low is not None and (value < low if closed else value <= low)
    too_high = high is not None and (value > high if closed else value >= high)
    if too_low or too_high:
        lo = "" if low is None else f"{low} <{'=' if closed else ''} "
        hi = "" if high is None else f" <{'=' if closed else ''} {high}"
        raise ValueError(f"{name} must satisfy {lo}{name}{hi}, got {value}.")
    return value


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a bool, got {value!r}.")
    return bool(value)


# --------------------------------------------------------------------------------------------
# planted classification
# --------------------------------------------------------------------------------------------


def make_planted_classification(
    n_samples: int = 100,
    n_features: int = 2000,
    n_informative: int = 20,
    n_classes: int = 3,
    shift: float = 1.5,
    random_state: int | np.random.RandomState | None = None,
) -> Dataset:
    r"""Gaussian noise with class-mean shifts planted on features at random positions.

    The planted-signal design of the sparsefs peer comparison (spec ``peers.md`` section 4:
    100 x 2000, 3 classes, 20 informative features at random column indices, shift 1.5).
    In order:

    1. The informative features are ``n_informative`` distinct column indices drawn uniformly
       at random (redrawn in the unlikely case they are exactly ``0 .. n_informative - 1``
       while ``n_informative < n_features``): the signal is never simply "the first
       columns", which would hide index bugs in a selector.
    2. Labels ``0 .. n_classes - 1``: ``arange(n_samples) % n_classes``, randomly permuted,
       so class sizes differ by at most one.
    3. For each informative feature :math:`j` a pattern :math:`m_j \in \{-1, 0, +1\}^K` is
       drawn uniformly among the patterns that are not constant (so at least two classes
       differ on every informative feature).
    4. :math:`X_{ij} \sim N(0, 1)` independently, then
       :math:`X_{ij} \mathrel{+}= \text{shift} \cdot m_{j, y_i}` on informative features.

    Parameters
    ----------
    n_samples : int, default=100
        Number of samples, at least ``n_classes``.
    n_features : int, default=2000
        Number of features.
    n_informative : int, default=20
        Number of informative features, ``1 <= n_informative <= n_features``.
    n_classes : int, default=3
        Number of classes, at least 2.
    shift : float, default=1.5
        Size of a class-mean shift (in noise standard deviations).
    random_state : int, RandomState instance or None, default=None
        Seed or generator for reproducible output.

    Returns
    -------
    Dataset
        ``X`` float64 (n_samples, n_features), ``y`` int64 labels, ``support`` the informative
        features, ``name="planted_classification"``.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_classification
    >>> ds = make_planted_classification(random_state=0)
    >>> ds.X.shape, int(ds.support.sum())
    ((100, 2000), 20)
    """
    n_samples = _check_int("n_samples", n_samples, 1)
    n_features = _check_int("n_features", n_features, 1)
    n_informative = _check_int("n_informative", n_informative, 1, n_features)
    n_classes = _check_int("n_classes", n_classes, 2)
    if n_samples < n_classes:
        raise ValueError(
            f"n_samples={n_samples} must be >= n_classes={n_classes} so that every class has a "
            "sample."
        )
    shift = _check_real("shift", shift)
    rng = check_random_state(random_state)

    first = np.arange(n_informative)
    while True:
        informative = rng.choice(n_features, size=n_informative, replace=False)
        if n_informative == n_features or not np.array_equal(np.sort(informative), first):
            break
    y = rng.permutation(np.arange(n_samples) % n_classes).astype(np.int64)
    patterns = rng.randint(-1, 2, size=(n_informative, n_classes))
    constant = np.all(patterns == patterns[:, :1], axis=1)
    while constant.any():
        patterns[constant] = rng.randint(-1, 2, size=(int(constant.sum()), n_classes))
        constant = np.all(patterns == patterns[:, :1], axis=1)

    X = rng.standard_normal((n_samples, n_features))
    X[:, informative] += shift * patterns[:, y].T
    support = np.zeros(n_features, dtype=bool)
    support[informative] = True
    description = (
        f"Planted classification: N(0, 1) noise, {n_samples} samples x {n_features} features, "
        f"{n_classes} balanced classes (labels 0..{n_classes - 1}); {n_informative} informative "
        f"features at random column indices, each with class means shift * m, m in "
        f"{{-1, 0, +1}} per class and not constant across classes (shift={shift})."
    )
    return Dataset(
        X=X,
        y=y,
        feature_names=default_feature_names(n_features),
        support=support,
        name="planted_classification",
        description=description,
    )


def _planted_linear(rng, n_samples, n_features, n_informative, effect, correlation):
    """X (AR(1)-correlated Gaussian columns when ``correlation`` > 0), the informative
    columns at random positions and their coefficients ``effect * (+-1)``."""
    first = np.arange(n_informative)
    while True:
        informative = rng.choice(n_features, size=n_informative, replace=False)
        if n_informative == n_features or not np.array_equal(np.sort(informative), first):
            break
    X = rng.standard_normal((n_samples, n_features))
    if correlation:  # x_j = rho x_{j-1} + sqrt(1 - rho^2) e_j: unit variance, AR(1) along j
        scale = math.sqrt(1.0 - correlation**2)
        # the initial state makes x_0 = e_0 (stationary start: every column has variance 1)
        X, _ = lfilter([scale], [1.0, -correlation], X, axis=1, zi=(1.0 - scale) * X[:, :1])
    coef = np.zeros(n_features)
    coef[informative] = effect * rng.choice([-1.0, 1.0], size=n_informative)
    support = np.zeros(n_features, dtype=bool)
    support[informative] = True
    return X, coef, support


def make_planted_regression(
    n_samples: int = 100,
    n_features: int = 2000,
    n_informative: int = 10,
    effect: float = 1.0,
    noise: float = 1.0,
    correlation: float = 0.0,
    random_state: int | np.random.RandomState | None = None,
) -> Dataset:
    r"""A linear model with a known sparse support: :math:`y = X\beta + \sigma\varepsilon`.

    1. ``n_informative`` column indices drawn at random (never simply the first columns);
    2. :math:`X_{ij} \sim N(0, 1)`; with ``correlation`` :math:`\rho > 0` each row is an AR(1)
       sequence along the columns (:math:`\mathrm{corr}(x_j, x_k) = \rho^{|j-k|}`, unit
       variances);
    3. :math:`\beta_j = \pm` ``effect`` (random signs) on the informative columns, 0 elsewhere;
    4. :math:`y = X\beta + \sigma\varepsilon`, :math:`\varepsilon \sim N(0, 1)`,
       :math:`\sigma` = ``noise``.

    Parameters
    ----------
    n_samples : int, default=100
    n_features : int, default=2000
    n_informative : int, default=10
        ``1 <= n_informative <= n_features``.
    effect : float, default=1.0
        :math:`|\beta_j|` on the support.
    noise : float, default=1.0
        :math:`\sigma`.
    correlation : float in [0, 1), default=0.0
        :math:`\rho` of the AR(1) correlation between neighbouring columns.
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    Dataset
        ``X`` float64, ``y`` float64, ``support`` the informative columns,
        ``name="planted_regression"``.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_regression
    >>> ds = make_planted_regression(random_state=0)
    >>> ds.X.shape, ds.y.dtype.kind, int(ds.support.sum())
    ((100, 2000), 'f', 10)
    """
    n_samples = _check_int("n_samples", n_samples, 1)
    n_features = _check_int("n_features", n_features, 1)
    n_informative = _check_int("n_informative", n_informative, 1, n_features)
    effect = _check_real("effect", effect)
    noise = _check_real("noise", noise, low=0.0)
    correlation = _check_real("correlation", correlation, low=0.0)
    if correlation >= 1:
        raise ValueError(f"correlation={correlation!r} must lie in [0, 1).")
    rng = check_random_state(random_state)
    X, coef, support = _planted_linear(rng, n_samples, n_features, n_informative, effect,
                                       correlation)
    y = X @ coef + noise * rng.standard_normal(n_samples)
    description = (
        f"Planted regression: y = X beta + {noise} * N(0, 1), {n_samples} samples x "
        f"{n_features} features (N(0, 1), AR(1) correlation {correlation}); {n_informative} "
        f"informative features at random column indices with |beta| = {effect}."
    )
    return Dataset(X=X, y=y, feature_names=default_feature_names(n_features), support=support,
                   name="planted_regression", description=description)


def make_planted_survival(
    n_samples: int = 200,
    n_features: int = 2000,
    n_informative: int = 10,
    effect: float = 0.5,
    baseline: str = "exponential",
    shape: float = 1.5,
    censoring: float = 0.3,
    correlation: float = 0.0,
    random_state: int | np.random.RandomState | None = None,
) -> Dataset:
    r"""Censored survival times from a proportional-hazards model with a known support.

    The hazard of sample :math:`i` is :math:`h_0(t)\exp(x_i^\top\beta)` (Cox's model), with
    :math:`X` and :math:`\beta` drawn as in :func:`make_planted_regression` (``effect`` =
    :math:`|\beta_j|` on the support, per standard deviation of the feature). Event times by
    inversion (Bender, Augustin & Blettner, Stat. Med. 24, 2005): with :math:`U \sim U(0, 1)`,

    * ``baseline="exponential"`` (:math:`h_0 = 1`): :math:`T = -\log U / e^{x^\top\beta}`;
    * ``"weibull"`` (:math:`h_0(t) = k t^{k-1}`, :math:`k` = ``shape``):
      :math:`T = (-\log U / e^{x^\top\beta})^{1/k}`.

    Censoring times :math:`C \sim \mathrm{Exp}(c)` independent of everything else; the rate
    :math:`c` is set (by bisection) so that the expected censored fraction
    :math:`\frac1n\sum_i P(C < T_i \mid T_i)` is ``censoring``. The observed time is
    :math:`\min(T, C)`, the event :math:`T \le C`.

    Parameters
    ----------
    n_samples : int, default=200
    n_features : int, default=2000
    n_informative : int, default=10
    effect : float, default=0.5
        :math:`|\beta_j|` (log hazard ratio per standard deviation) on the support.
    baseline : {"exponential", "weibull"}, default="exponential"
    shape : float > 0, default=1.5
        Weibull shape :math:`k`.
    censoring : float in [0, 1), default=0.3
        Expected fraction of censored samples (0: no censoring).
    correlation : float in [0, 1), default=0.0
        AR(1) correlation of neighbouring columns.
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    Dataset
        ``y`` the structured survival array (``sparsefs.utils.survival_target``: fields
        ``event``, ``time``), ``support`` the informative columns, ``name="planted_survival"``.

    Examples
    --------
    >>> from sparsefs.datasets import make_planted_survival
    >>> ds = make_planted_survival(random_state=0)
    >>> ds.y.dtype.names, int(ds.support.sum())
    (('event', 'time'), 10)
    """
    from sparsefs.utils._targets import survival_target

    n_samples = _check_int("n_samples", n_samples, 1)
    n_features = _check_int("n_features", n_features, 1)
    n_informative = _check_int("n_informative", n_informative, 1, n_features)
    effect = _check_real("effect", effect)
    shape = _check_real("shape", shape, low=0.0, closed=False)
    censoring = _check_real("censoring", censoring, low=0.0)
    correlation = _check_real("correlation", correlation, low=0.0)
    if baseline not in ("exponential", "weibull"):
        raise ValueError(f"baseline={baseline!r} is not one of ('exponential', 'weibull').")
    if censoring >= 1 or correlation >= 1:
        raise ValueError(
            f"censoring={censoring!r} and correlation={correlation!r} must lie in [0, 1)."
        )
    rng = check_random_state(random_state)
    X, coef, support = _planted_linear(rng, n_samples, n_features, n_informative, effect,
                                       correlation)
    risk = np.exp(X @ coef)
    u = 1.0 - rng.random_sample(n_samples)  # in (0, 1]
    t = -np.log(u) / risk
    if baseline == "weibull":
        t = t ** (1.0 / shape)
    t = np.maximum(t, 1e-12)
    if censoring > 0:
        lo, hi = 0.0, 1.0
        while np.mean(-np.expm1(-hi * t)) < censoring:
            hi *= 2.0
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if np.mean(-np.expm1(-mid * t)) < censoring else (lo, mid)
        c = rng.exponential(1.0 / (0.5 * (lo + hi)), size=n_samples)
    else:
        c = np.full(n_samples, np.inf)
    event = t <= c
    y = survival_target(event, np.where(event, t, c))
    description = (
        f"Planted survival: proportional hazards, {baseline} baseline"
        + (f" (shape {shape})" if baseline == "weibull" else "")
        + f", {n_samples} samples x {n_features} features; {n_informative} informative features "
        f"with |log hazard ratio| = {effect}; independent exponential censoring, "
        f"{100 * (1 - event.mean()):.0f}% censored (target {100 * censoring:.0f}%)."
    )
    return Dataset(X=X, y=y, feature_names=default_feature_names(n_features), support=support,
                   name="planted_survival", description=description)


# --------------------------------------------------------------------------------------------
# sparse KOS simulations
# --------------------------------------------------------------------------------------------


def make_kos_rings(
    n_samples: int = 300,
    random_state: int | np.random.RandomState | None = None,
) -> Dataset:
    r"""Two concentric rings plus two noise features: sparse KOS simulation 1.

    From Lapanowski & Gaynanova (2019), Section 6, simulation 1 (sparsefs spec
    ``sparse-kos.md`` section 2.11):

    * draw ``n_samples`` points with :math:`x_1, x_2 \sim U[-1, 1]`;
    * keep those with radius :math:`r = \sqrt{x_1^2 + x_2^2} \ge 2/3` (**class 1**, the outer
      ring) or :math:`r \le 2/3 - 1/10` (**class 2**, the inner disc), dropping the gap
      between; the number kept is random, about ``0.90 * n_samples`` (about 270 of 300);
    * :math:`x_3, x_4 \sim N(0, 1/2)` noise (variance 1/2, standard deviation
      :math:`\sqrt{1/2}`), independent of the class.

    Labels are 1 and 2, as in the paper. Points are in the order drawn (not grouped by class).

    Parameters
    ----------
    n_samples : int, default=300
        Number of points drawn before the gap is removed.
    random_state : int, RandomState instance or None, default=None
        Seed or generator for reproducible output.

    Returns
    -------
    Dataset
        ``X`` float64 (n_kept, 4), ``y`` int64 in {1, 2}, ``support = [True, True, False,
        False]``, ``name="kos_rings"``.

    References
    ----------
    Lapanowski & Gaynanova, "Sparse feature selection in kernel discriminant analysis via
    optimal scoring", AISTATS 2019, PMLR 89:1704-1713.

    Examples
    --------
    >>> from sparsefs.datasets import make_kos_rings
    >>> ds = make_kos_rings(random_state=0)
    >>> ds.X.shape[1], sorted(set(ds.y.tolist()))
    (4, [1, 2])
    """
    n_samples = _check_int("n_samples", n_samples, 1)
    rng = check_random_state(random_state)
    ring = rng.uniform(-1.0, 1.0, size=(n_samples, 2))
    noise = rng.normal(0.0, math.sqrt(0.5), size=(n_samples, 2))
    radius = np.hypot(ring[:, 0], ring[:, 1])
    outer = radius >= 2.0 / 3.0
    inner = radius <= 2.0 / 3.0 - 0.1
    keep = outer | inner
    X = np.hstack([ring[keep], noise[keep]])
    y = np.where(outer[keep], 1, 2).astype(np.int64)
    return Dataset(
        X=X,
        y=y,
        feature_names=default_feature_names(4),
        support=np.array([True, True, False, False]),
        name="kos_rings",
        description=(
            "Sparse KOS simulation 1 (Lapanowski & Gaynanova 2019, Sec. 6): x1, x2 ~ U[-1, 1], "
            "class 1 if sqrt(x1^2 + x2^2) >= 2/3, class 2 if <= 2/3 - 1/10, points in between "
            f"dropped ({int(keep.sum())} of {n_samples} kept); x3, x4 ~ N(0, 1/2) noise."
        ),
    )


def make_kos_sine(
    n_samples: int = 400,
    n_features: int = 10,
    random_state: int | np.random.RandomState | None = None,
) -> Dataset:
    r"""A sine-shaped class boundary in 4 of ``n_features`` uniform features: KOS simulation 2.

    From Lapanowski & Gaynanova (2019), Section 6, simulation 2 (sparsefs spec
    ``sparse-kos.md`` section 2.11): all :math:`x_{ij} \sim U[-1, 1]`; with 1-based feature
    numbers, sample :math:`i` is **class 1** iff
    :math:`x_{i3} + \sin(x_{i4} + x_{i1}) < x_{i2}^2`, else **class 2**. Features 1-4 (columns
    ``x0 .. x3``) are relevant, the rest noise.

    Parameters
    ----------
    n_samples : int, default=400
        Number of samples.
    n_features : int, default=10
        Number of features, at least 4.
    random_state : int, RandomState instance or None, default=None
        Seed or generator for reproducible output.

    Returns
    -------
    Dataset
        ``X`` float64, ``y`` int64 in {1, 2}, ``support`` the first 4 features,
        ``name="kos_sine"``.

    References
    ----------
    Lapanowski & Gaynanova, "Sparse feature selection in kernel discriminant analysis via
    optimal scoring", AISTATS 2019, PMLR 89:1704-1713.

    Examples
    --------
    >>> from sparsefs.datasets import make_kos_sine
    >>> make_kos_sine(random_state=0).X.shape
    (400, 10)
    """
    n_samples = _check_int("n_samples", n_samples, 1)
    n_features = _check_int("n_features", n_features, 4)
    rng = check_random_state(random_state)
    X = rng.uniform(-1.0, 1.0, size=(n_samples, n_features))
    class1 = X[:, 2] + np.sin(X[:, 3] + X[:, 0]) < X[:, 1] ** 2
    y = np.where(class1, 1, 2).astype(np.int64)
    support = np.zeros(n_features, dtype=bool)
    support[:4] = True
    return Dataset(
        X=X,
        y=y,
        feature_names=default_feature_names(n_features),
        support=support,
        name="kos_sine",
        description=(
            "Sparse KOS simulation 2 (Lapanowski & Gaynanova 2019, Sec. 6): x_ij ~ U[-1, 1], "
            "class 1 iff x3 + sin(x4 + x1) < x2^2 (1-based features), else class 2; features "
            f"5..{n_features} are noise."
        ),
    )


# --------------------------------------------------------------------------------------------
# sparse k-means experiments
# --------------------------------------------------------------------------------------------


def _gaussian_clusters(
    *,
    centers: np.ndarray,
    n_per_cluster: int,
    n_features: int,
    n_relevant: int,
    rho: float,
    shuffle: bool,
    shuffle_features: bool,
    random_state: Any,
    name: str,
    description: str,
) -> Dataset:
    """Clusters k = 1..K with mean ``centers[k-1]`` on the first ``n_relevant`` features.

    Noise is N(0, 1) per entry when ``rho == 0``, else a stationary AR(1) series along the
    feature index: z_1 = e_1, z_a = rho z_{a-1} + sqrt(1 - rho^2) e_a, whose covariance is
    exactly Sigma_ab = rho^|a-b| (unit variances).
    """
    rng = check_random_state(random_state)
    n_clusters = centers.shape[0]
    n = n_clusters * n_per_cluster
    y = np.repeat(np.arange(1, n_clusters + 1, dtype=np.int64), n_per_cluster)
    X = rng.standard_normal((n, n_features))
    if rho != 0.0:
        scale = math.sqrt(1.0 - rho * rho)
        X = lfilter([scale], [1.0, -rho], X, axis=1, zi=(1.0 - scale) * X[:, :1])[0]
    X[:, :n_relevant] += centers[y - 1][:, None]
    support = np.zeros(n_features, dtype=bool)
    support[:n_relevant] = True
    if shuffle:
        order = rng.permutation(n)
        X, y = X[order], y[order]
    if shuffle_features:
        columns = rng.permutation(n_features)
        X, support = X[:, columns], support[columns]
    X = np.ascontiguousarray(X)
    order_note = "samples shuffled" if shuffle else "samples grouped by cluster"
    feature_note = (
        "relevant features at random column positions"
        if shuffle_features
        else f"relevant features are the first {n_relevant} columns"
    )
    return Dataset(
        X=X,
        y=y,
        feature_names=default_feature_names(n_features),
        support=support,
        name=name,
        description=f"{description} Labels 1..{n_clusters}; {order_note}; {feature_note}.",
    )


def make_sparse_clusters_exp1(
    n_per_cluster: int = 20,
    n_clusters: int = 6,
    n_features: int = 2000,
    n_relevant: int = 200,
    *,
    shuffle: bool = True,
    shuffle_features: bool = False,
    random_state: int | np.random.RandomState | None = None,
) -> Dataset:
    r"""Sparse k-means experiment 1: K clusters whose means grow by 0.5 on the relevant features.

    From Chang, Wang, Li & Xu (arXiv v1 of the Statistica Sinica 2018 paper), experiment 1
    (sparsefs spec ``sparse-kmeans.md`` section 3.8): cluster :math:`k = 1..K` has
    ``n_per_cluster`` samples; on a relevant feature its entries are :math:`N(0.5 k, 1)`, on a
    noise feature :math:`N(0, 1)`. Published design: K = 6 clusters of 20 (n = 120),
    p = 2000, the first 200 features relevant.

    Parameters
    ----------
    n_per_cluster : int, default=20
        Samples per cluster.
    n_clusters : int, default=6
        Number of clusters K.
    n_features : int, default=2000
        Number of features p.
    n_relevant : int, default=200
        Number of relevant features, ``<= n_features``.
    shuffle : bool, default=True
        Shuffle the samples; otherwise they are grouped by cluster (1, 1, ..., K).
    shuffle_features : bool, default=False
        Put the relevant features at random column positions. By default they are the first
        ``n_relevant`` columns, as in the published design.
    random_state : int, RandomState instance or None, default=None
        Seed or generator for reproducible output.

    Returns
    -------
    Dataset
        ``X`` float64 (n_clusters * n_per_cluster, n_features), ``y`` the cluster labels
        ``1..K`` (int64), ``support`` the relevant features, ``name="sparse_clusters_exp1"``.

    References
    ----------
    Chang, Wang, Li & Xu, "Sparse K-means with l_inf/l_0 penalty for high-dimensional data
    clustering", Statistica Sinica 28(3):1265-1284, 2018; arXiv:1403.7890.

    Examples
    --------
    >>> from sparsefs.datasets import make_sparse_clusters_exp1
    >>> ds = make_sparse_clusters_exp1(random_state=0)
    >>> ds.X.shape, int(ds.support.sum())
    ((120, 2000), 200)
    """
    n_per_cluster = _check_int("n_per_cluster", n_per_cluster, 1)
    n_clusters = _check_int("n_clusters", n_clusters, 1)
    n_features = _check_int("n_features", n_features, 1)
    n_relevant = _check_int("n_relevant", n_relevant, 0, n_features)
    return _gaussian_clusters(
        centers=0.5 * np.arange(1, n_clusters + 1),
        n_per_cluster=n_per_cluster,
        n_features=n_features,
        n_relevant=n_relevant,
        rho=0.0,
        shuffle=_check_bool("shuffle", shuffle),
        shuffle_features=_check_bool("shuffle_features", shuffle_features),
        random_state=random_state,
        name="sparse_clusters_exp1",
        description=(
            f"Sparse k-means experiment 1 ({_CHANG}): {n_clusters} clusters of {n_per_cluster}, "
            f"p = {n_features}; cluster k ~ N(0.5 k, 1) on {n_relevant} relevant features, "
            "N(0, 1) noise elsewhere."
        ),
    )


def _three_cluster_shift(
    n_per_cluster: int,
    n_features: int,
    n_relevant: int,
    mu: float,
    shuffle: bool,
    shuffle_features: bool,
    random_state: Any,
    name: str,
    label: str,
) -> Dataset:
    return _gaussian_clusters(
        centers=(np.arange(1, 4) - 2) * mu,
        n_per_cluster=n_per_cluster,
        n_features=n_features,
        n_relevant=n_relevant,
        rho=0.0,
        shuffle=shuffle,
        shuffle_features=shuffle_features,
        random_state=random_state,
        name=name,
        description=(
            f"Sparse k-means {label} ({_CHANG}): 3 clusters of {n_per_cluster}, p = "
            f"{n_features}; x_ij ~ N((k - 2) mu, 1) on {n_relevant} relevant features for "
            f"cluster k = 1, 2, 3 (mu = {mu}), N(0, 1) noise elsewhere."
        ),
    )


def make_sparse_clusters_exp2(
    n_per_cluster: int = 20,
    n_features: int = 500,
    n_relevant: int = 50,
    mu: float = 0.7,
    *,
    shuffle: bool = True,
    shuffle_features: bool = False,
    random_state: int | np.random.RandomState | None = None,
) -> Dataset:
    r"""Sparse k-means experiment 2: three clusters at :math:`-\mu, 0, +\mu` on relevant features.

    From Chang, Wang, Li & Xu (arXiv v1), experiment 2 (sparsefs spec ``sparse-kmeans.md``
    section 3.8), the Witten & Tibshirani (JASA 2010) design: 3 clusters of ``n_per_cluster``;
    :math:`x_{ij} \sim N(\mu_{ij}, 1)` with :math:`\mu_{ij} = (k - 2)\mu` for a sample of
    cluster :math:`k = 1, 2, 3` on the relevant features and 0 on the noise features. Published
    grid: clusters of 20, 50 relevant, :math:`\mu \in \{0.6, 0.7\}`,
    :math:`p \in \{200, 500, 1000\}`.

    Parameters
    ----------
    n_per_cluster : int, default=20
        Samples per cluster.
    n_features : int, default=500
        Number of features p.
    n_relevant : int, default=50
        Number of relevant features, ``<= n_features``.
    mu : float, default=0.7
        The mean shift :math:`\mu`.
    shuffle : bool, default=True
        Shuffle the samples; otherwise they are grouped by cluster.
    shuffle_features : bool, default=False
        Put the relevant features at random column positions (default: the first columns, as
        published).
    random_state : int, RandomState instance or None, default=None
        Seed or generator for reproducible output.

    Returns
    -------
    Dataset
        ``y`` the cluster labels 1, 2, 3 (int64), ``support`` the relevant features,
        ``name="sparse_clusters_exp2"``.

    References
    ----------
    Chang, Wang, Li & Xu, Statistica Sinica 28(3):1265-1284, 2018; arXiv:1403.7890.
    Witten & Tibshirani, "A framework for feature selection in clustering", JASA
    105(490):713-726, 2010.

    Examples
    --------
    >>> from sparsefs.datasets import make_sparse_clusters_exp2
    >>> make_sparse_clusters_exp2(random_state=0).X.shape
    (60, 500)
    """
    n_per_cluster = _check_int("n_per_cluster", n_per_cluster, 1)
    n_features = _check_int("n_features", n_features, 1)
    n_relevant = _check_int("n_relevant", n_relevant, 0, n_features)
    mu = _check_real("mu", mu)
    return _three_cluster_shift(
        n_per_cluster,
        n_features,
        n_relevant,
        mu,
        _check_bool("shuffle", shuffle),
        _check_bool("shuffle_features", shuffle_features),
        random_state,
        "sparse_clusters_exp2",
        "experiment 2",
    )


_EXP3_DESIGNS = {
    # design: (n_per_cluster, n_features, n_relevant, mu)
    "a": (10, 25, 5, 1.0),
    "b": (20, 500, 50, 0.7),
}


def make_sparse_clusters_exp3(
    design: str = "a",
    *,
    shuffle: bool = True,
    shuffle_features: bool = False,
    random_state: int | np.random.RandomState | None = None,
) -> Dataset:
    r"""Sparse k-means experiment 3: the two fixed designs (a) and (b).

    From Chang, Wang, Li & Xu (arXiv v1), experiment 3 (sparsefs spec ``sparse-kmeans.md``
    section 3.8), with the mean form of experiment 2 (:math:`(k - 2)\mu` on the relevant
    features of cluster :math:`k = 1, 2, 3`, N(0, 1) noise):

    * ``"a"``: 3 clusters of 10 (n = 30), p = 25, 5 relevant features, :math:`\mu = 1`;
    * ``"b"``: 3 clusters of 20 (n = 60), p = 500, 50 relevant features, :math:`\mu = 0.7`.

    Parameters
    ----------
    design : {"a", "b"}, default="a"
        Which design.
    shuffle : bool, default=True
        Shuffle the samples; otherwise they are grouped by cluster.
    shuffle_features : bool, default=False
        Put the relevant features at random column positions (default: the first columns, as
        published).
    random_state : int, RandomState instance or None, default=None
        Seed or generator for reproducible output.

    Returns
    -------
    Dataset
        ``y`` the cluster labels 1, 2, 3 (int64), ``support`` the relevant features,
        ``name="sparse_clusters_exp3a"`` or ``"sparse_clusters_exp3b"``.

    References
    ----------
    Chang, Wang, Li & Xu, Statistica Sinica 28(3):1265-1284, 2018; arXiv:1403.7890.

    Examples
    --------
    >>> from sparsefs.datasets import make_sparse_clusters_exp3
    >>> make_sparse_clusters_exp3("a", random_state=0).X.shape
    (30, 25)
    """
    if design not in _EXP3_DESIGNS:
        raise ValueError(f"design must be one of 'a', 'b', got {design!r}.")
    n_per_cluster, n_features, n_relevant, mu = _EXP3_DESIGNS[design]
    return _three_cluster_shift(
        n_per_cluster,
        n_features,
        n_relevant,
        mu,
        _check_bool("shuffle", shuffle),
        _check_bool("shuffle_features", shuffle_features),
        random_state,
        f"sparse_clusters_exp3{design}",
        f"experiment 3({design})",
    )


def make_sparse_clusters_exp4(
    n_per_cluster: int = 20,
    n_clusters: int = 6,
    n_features: int = 2000,
    n_relevant: int = 200,
    rho: float = 0.1,
    *,
    shuffle: bool = True,
    shuffle_features: bool = False,
    random_state: int | np.random.RandomState | None = None,
) -> Dataset:
    r"""Sparse k-means experiment 4: clusters with AR(1)-correlated features.

    From Chang, Wang, Li & Xu (arXiv v1), experiment 4 (sparsefs spec ``sparse-kmeans.md``
    section 3.8): a sample of cluster :math:`k = 1..K` is
    :math:`x \sim N(\mu_k, \Sigma)` with :math:`\Sigma_{ab} = \rho^{|a-b|}` and centroid
    :math:`\mu_k = k \cdot \mathbf{1}` on the relevant features, 0 on the noise features.
    Published design: K = 6 clusters of 20, p = 2000, 200 relevant; the paper does not give
    :math:`\rho`, the authors' later code uses 0.1.

    The correlated noise is generated along the feature index by the AR(1) recursion
    :math:`z_1 = e_1`, :math:`z_a = \rho z_{a-1} + \sqrt{1-\rho^2}\, e_a` with
    :math:`e \sim N(0, I)`, whose covariance is exactly :math:`\Sigma` (O(n p), no Cholesky
    factor of the p x p matrix). With ``shuffle_features=True`` the columns are permuted
    afterwards, so the correlation follows the original (unshuffled) feature order.

    Parameters
    ----------
    n_per_cluster : int, default=20
        Samples per cluster.
    n_clusters : int, default=6
        Number of clusters K.
    n_features : int, default=2000
        Number of features p.
    n_relevant : int, default=200
        Number of relevant features, ``<= n_features``.
    rho : float, default=0.1
        The AR(1) correlation, ``-1 < rho < 1``.
    shuffle : bool, default=True
        Shuffle the samples; otherwise they are grouped by cluster.
    shuffle_features : bool, default=False
        Put the relevant features at random column positions (default: the first columns, as
        published).
    random_state : int, RandomState instance or None, default=None
        Seed or generator for reproducible output.

    Returns
    -------
    Dataset
        ``y`` the cluster labels ``1..K`` (int64), ``support`` the relevant features,
        ``name="sparse_clusters_exp4"``.

    References
    ----------
    Chang, Wang, Li & Xu, Statistica Sinica 28(3):1265-1284, 2018; arXiv:1403.7890.

    Examples
    --------
    >>> from sparsefs.datasets import make_sparse_clusters_exp4
    >>> make_sparse_clusters_exp4(random_state=0).X.shape
    (120, 2000)
    """
    n_per_cluster = _check_int("n_per_cluster", n_per_cluster, 1)
    n_clusters = _check_int("n_clusters", n_clusters, 1)
    n_features = _check_int("n_features", n_features, 1)
    n_relevant = _check_int("n_relevant", n_relevant, 0, n_features)
    rho = _check_real("rho", rho, low=-1.0, high=1.0, closed=False)
    return _gaussian_clusters(
        centers=np.arange(1, n_clusters + 1, dtype=float),
        n_per_cluster=n_per_cluster,
        n_features=n_features,
        n_relevant=n_relevant,
        rho=rho,
        shuffle=_check_bool("shuffle", shuffle),
        shuffle_features=_check_bool("shuffle_features", shuffle_features),
        random_state=random_state,
        name="sparse_clusters_exp4",
        description=(
            f"Sparse k-means experiment 4 ({_CHANG}): {n_clusters} clusters of {n_per_cluster}, "
            f"p = {n_features}; x ~ N(mu_k, Sigma), Sigma_ab = rho^|a-b| with rho = {rho}, "
            f"mu_k = k on {n_relevant} relevant features and 0 elsewhere."
        ),
    )
