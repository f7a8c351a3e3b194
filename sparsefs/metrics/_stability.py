r"""Stability of a family of selected feature sets (resamples, folds, seeds).

Three indices over :math:`M` supports of :math:`d` features, given as an :math:`M \times d`
boolean matrix (or a list of masks / index arrays):

* :func:`nogueira_index` - the estimator of Nogueira, Sechidis & Brown (JMLR 18(174), 2018),
  with its asymptotic confidence interval; the one to report (it is defined for supports of
  different sizes, corrected for chance, and has a known sampling distribution);
* :func:`jaccard_index` - the mean pairwise Jaccard similarity;
* :func:`kuncheva_index` - the mean pairwise Kuncheva index (Kuncheva, 2007), supports of one
  size only.
"""

from dataclasses import dataclass
from numbers import Real

import numpy as np
from scipy.stats import norm

from sparsefs._kernels import stability as _kernel

__all__ = ["StabilityEstimate", "jaccard_index", "kuncheva_index", "nogueira_index"]


@dataclass(frozen=True)
class StabilityEstimate:
    """The Nogueira stability of a family of supports with its confidence interval.

    Attributes
    ----------
    value : float
        :math:`\\hat\\Phi`; 1 for identical supports, about 0 for random ones (may be negative).
    variance : float
        The estimated asymptotic variance of :math:`\\hat\\Phi`.
    ci_low, ci_high : float
        The two-sided normal-approximation interval :math:`\\hat\\Phi \\pm z_{1-\\alpha/2}
        \\sqrt{\\widehat{\\mathrm{Var}}}` (not clipped).
    confidence : float
        :math:`1 - \\alpha`.
    n_supports : int
        :math:`M`.
    """

    value: float
    variance: float
    ci_low: float
    ci_high: float
    confidence: float
    n_supports: int

    @property
    def std_error(self) -> float:
        """The square root of :attr:`variance`."""
        return float(np.sqrt(self.variance))


def _as_matrix(supports, n_features: int | None, name: str = "supports") -> np.ndarray:
    """An (M, d) bool matrix from a 2-D array or a list of masks / index arrays."""
    if isinstance(supports, np.ndarray) and supports.ndim == 2:
        Z = supports
    else:
        rows = list(supports)
        if not rows:
            raise ValueError(f"{name} is empty; give at least 2 supports.")
        masks = [np.asarray(r) for r in rows]
        if all(m.dtype == bool for m in masks):
            lengths = {m.shape[0] for m in masks}
            if len(lengths) != 1:
                raise ValueError(f"{name}: boolean masks of different lengths {sorted(lengths)}.")
            Z = np.vstack(masks)
        else:
            if n_features is None:
                raise ValueError(f"{name} given as index arrays needs n_features.")
            Z = np.zeros((len(masks), n_features), dtype=bool)
            for i, idx in enumerate(masks):
                idx = idx.astype(np.int64).ravel()
                if idx.size and (idx.min() < 0 or idx.max() >= n_features):
                    raise ValueError(f"{name}[{i}] has indices outside [0, {n_features}).")
                Z[i, idx] = True
    Z = np.asarray(Z)
    if Z.ndim != 2:
        raise ValueError(f"{name} must be 2-D (supports x features); got shape {Z.shape}.")
    if Z.dtype != bool:
        if not np.isin(Z, (0, 1)).all():
            raise ValueError(f"{name} must be boolean or 0/1.")
        Z = Z.astype(bool)
    if n_features is not None and Z.shape[1] != n_features:
        raise ValueError(f"{name} has {Z.shape[1]} features; n_features={n_features}.")
    if Z.shape[0] < 2:
        raise ValueError(f"{name}: stability needs at least 2 supports; got {Z.shape[0]}.")
    if Z.shape[1] < 1:
        raise ValueError(f"{name} has 0 features.")
    return Z


def nogueira_index(
    supports, *, n_features: int | None = None, confidence: float = 0.95
) -> StabilityEstimate:
    r"""Stability of feature selection by the estimator of Nogueira, Sechidis & Brown (2018).

    For :math:`M` supports over :math:`d` features as a binary matrix :math:`Z`,
    :math:`\hat p_f` the frequency of feature :math:`f`, :math:`s_f^2 = \frac{M}{M-1}\hat p_f
    (1-\hat p_f)` its unbiased variance and :math:`\bar k` the mean support size,

    .. math::

        \hat\Phi(Z) = 1 - \frac{\frac1d \sum_f s_f^2}{\frac{\bar k}{d}(1 - \frac{\bar k}{d})}.

    :math:`\hat\Phi = 1` iff all supports are equal; its expectation is 0 when every support is
    drawn uniformly at random among the sets of its size. :math:`\hat\Phi` is asymptotically
    normal (their Theorem 9); the interval is :math:`\hat\Phi \pm z_{1-\alpha/2}
    \sqrt{\widehat{\mathrm{Var}}(\hat\Phi)}` with the variance estimator of their section 5
    (see :func:`sparsefs._kernels.stability.nogueira_stability`).

    Parameters
    ----------
    supports : array-like of shape (M, d), or a sequence of boolean masks or index arrays
        :math:`M \ge 2` supports; their mean size must lie strictly between 0 and :math:`d`.
    n_features : int, optional
        :math:`d`; required when the supports are index arrays.
    confidence : float in (0, 1), default=0.95

    Returns
    -------
    StabilityEstimate

    Raises
    ------
    ValueError
        For fewer than 2 supports, or when every support is empty or holds every feature
        (the index is then undefined).

    References
    ----------
    S. Nogueira, K. Sechidis and G. Brown, "On the stability of feature selection algorithms",
    JMLR 18(174), 1-54, 2018.

    Examples
    --------
    >>> import numpy as np
    >>> from sparsefs.metrics import nogueira_index
    >>> Z = np.array([[1, 1, 0, 0], [1, 1, 0, 0], [1, 0, 1, 0]], dtype=bool)
    >>> round(nogueira_index(Z).value, 4)
    0.3333
    """
    if not isinstance(confidence, Real) or not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence={confidence!r} must be a number in (0, 1).")
    Z = _as_matrix(supports, n_features)
    kbar = Z.sum(axis=1).mean()
    if kbar <= 0 or kbar >= Z.shape[1]:
        raise ValueError(
            f"the Nogueira index is undefined when the mean support size is {kbar:g} of "
            f"{Z.shape[1]} features (it must lie strictly between 0 and d)."
        )
    value, variance = _kernel.nogueira_stability(Z)
    half = float(norm.ppf(0.5 + confidence / 2.0)) * float(np.sqrt(max(variance, 0.0)))
    return StabilityEstimate(value, variance, value - half, value + half, float(confidence),
                             int(Z.shape[0]))


def jaccard_index(supports, *, n_features: int | None = None) -> float:
    r"""Mean pairwise Jaccard similarity of a family of supports.

    :math:`\frac{2}{M(M-1)} \sum_{i<j} \frac{|S_i \cap S_j|}{|S_i \cup S_j|}`; two empty
    supports count as identical (1). 1 iff all supports are equal; not corrected for chance
    (random supports of size :math:`k` of :math:`d` score about :math:`k/(2d-k)`).

    Parameters
    ----------
    supports : array-like of shape (M, d), or a sequence of boolean masks or index arrays
    n_features : int, optional
        Required when the supports are index arrays.

    Returns
    -------
    float

    Examples
    --------
    >>> from sparsefs.metrics import jaccard_index
    >>> jaccard_index([[0, 1], [1, 2]], n_features=4)
    0.3333333333333333
    """
    return _kernel.jaccard_mean(_as_matrix(supports, n_features))


def kuncheva_index(supports, *, n_features: int | None = None) -> float:
    r"""Mean pairwise Kuncheva consistency index of supports of one size :math:`k`.

    For two supports of size :math:`k` among :math:`d` features sharing :math:`r` features,
    :math:`I_C = \frac{r d - k^2}{k (d - k)}`: 1 for identical supports, 0 in expectation for
    random ones (:math:`\mathbb{E}[r] = k^2/d`), at least :math:`-1`. Averaged over the
    :math:`M(M-1)/2` pairs (L. I. Kuncheva, "A stability index for feature selection", IASTED
    AIA 2007).

    Parameters
    ----------
    supports : array-like of shape (M, d), or a sequence of boolean masks or index arrays
    n_features : int, optional
        Required when the supports are index arrays.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        When the supports differ in size, or :math:`k` is 0 or :math:`d` (the index is
        defined for one size :math:`0 < k < d` only; use :func:`nogueira_index` otherwise).

    Examples
    --------
    >>> from sparsefs.metrics import kuncheva_index
    >>> kuncheva_index([[0, 1], [1, 2]], n_features=4)
    0.0
    """
    Z = _as_matrix(supports, n_features)
    sizes = np.unique(Z.sum(axis=1))
    if sizes.shape[0] != 1:
        raise ValueError(
            f"the Kuncheva index needs supports of one size; got sizes {sizes.tolist()} "
            "(use nogueira_index for supports of different sizes)."
        )
    if sizes[0] == 0 or sizes[0] == Z.shape[1]:
        raise ValueError(
            f"the Kuncheva index is undefined for supports of size {int(sizes[0])} of "
            f"{Z.shape[1]} features (it needs 0 < k < d)."
        )
    return _kernel.kuncheva_mean(Z)
