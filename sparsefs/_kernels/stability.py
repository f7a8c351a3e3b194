r"""Stability selection: resampling schemes, selection frequencies, error bounds, stability indices.

Pure array functions (numpy and the standard library only). The estimator
:class:`sparsefs.selection.StabilitySelector` and the metrics in :mod:`sparsefs.metrics` are thin
glue around them.

References
----------
.. [MB2010] N. Meinshausen and P. Bühlmann, "Stability selection", J. R. Stat. Soc. B 72(4),
   417-473, 2010.
.. [SS2013] R. D. Shah and R. J. Samworth, "Variable selection with error control: another look
   at stability selection", J. R. Stat. Soc. B 75(1), 55-80, 2013.
.. [NSB2018] S. Nogueira, K. Sechidis and G. Brown, "On the stability of feature selection
   algorithms", J. Mach. Learn. Res. 18(174), 1-54, 2018.
.. [K2007] L. I. Kuncheva, "A stability index for feature selection", Proc. IASTED AIA, 2007.
"""

import math

import numpy as np

__all__ = [
    "complementary_pairs",
    "count_for_pfer",
    "count_path_grid",
    "cpss_unimodal_constant",
    "jaccard_mean",
    "kuncheva_mean",
    "nogueira_stability",
    "pfer_bound",
    "rank_path_frequencies",
    "subsamples",
    "threshold_for_pfer",
    "threshold_grid",
    "worst_case_pfer_bound",
]


# --------------------------------------------------------------------------------------------
# resampling schemes
# --------------------------------------------------------------------------------------------


def _strata(y_idx: np.ndarray | None, n: int) -> list[np.ndarray]:
    if y_idx is None:
        return [np.arange(n)]
    y_idx = np.asarray(y_idx)
    order = np.argsort(y_idx, kind="stable")
    bounds = np.flatnonzero(np.diff(y_idx[order])) + 1
    return np.split(order, bounds)


def complementary_pairs(
    n_samples: int, n_pairs: int, rng: np.random.Generator, y_idx: np.ndarray | None = None
) -> np.ndarray:
    r"""Draw ``n_pairs`` complementary pairs of disjoint half-samples (Shah & Samworth, 2013).

    Pair :math:`b` is :math:`(A_{2b-1}, A_{2b})` with :math:`A_{2b-1} \cap A_{2b} = \emptyset`
    and :math:`|A_{2b-1}| = |A_{2b}| = \lfloor n/2 \rfloor` ([SS2013]_, section 2.1). With class
    labels ``y_idx`` the split is stratified: each class of size :math:`n_c` puts
    :math:`\lfloor n_c/2 \rfloor` samples in each half, and the odd samples left over (one per
    odd class) are dealt alternately to the two halves in random order (one is left out when
    :math:`n` is odd).

    Parameters
    ----------
    n_samples : int
        :math:`n \ge 2`.
    n_pairs : int
        :math:`B \ge 1`.
    rng : numpy.random.Generator
    y_idx : ndarray of int, optional
        Class indices for a stratified split.

    Returns
    -------
    ndarray of shape (2 * n_pairs, n_samples // 2), dtype intp
        Row ``2b`` and row ``2b + 1`` are the two halves of pair ``b``; each row sorted.
    """
    half = n_samples // 2
    strata = _strata(y_idx, n_samples)
    out = np.empty((2 * n_pairs, half), dtype=np.intp)
    for b in range(n_pairs):
        first, second, odd = [], [], []
        for members in strata:
            perm = members[rng.permutation(members.shape[0])]
            h = perm.shape[0] // 2
            first.append(perm[:h])
            second.append(perm[h : 2 * h])
            if perm.shape[0] % 2:
                odd.append(perm[-1])
        odd = np.asarray(odd, dtype=np.intp)[rng.permutation(len(odd))]
        n_odd = odd.shape[0] // 2
        first.append(odd[:n_odd])
        second.append(odd[n_odd : 2 * n_odd])
        out[2 * b] = np.sort(np.concatenate(first))
        out[2 * b + 1] = np.sort(np.concatenate(second))
    return out


def subsamples(
    n_samples: int,
    n_subsamples: int,
    size: int,
    rng: np.random.Generator,
    y_idx: np.ndarray | None = None,
) -> np.ndarray:
    r"""Draw subsamples of ``size`` rows without replacement (Meinshausen & Bühlmann, 2010).

    With class labels the subsample is stratified: class :math:`c` contributes
    :math:`\lfloor \text{size} \cdot n_c / n \rfloor` rows, and the rows still missing go to the
    classes with the largest remainders (ties by class index), never more than :math:`n_c`.

    Returns
    -------
    ndarray of shape (n_subsamples, size), dtype intp
        Each row sorted.
    """
    strata = _strata(y_idx, n_samples)
    counts = np.array([s.shape[0] for s in strata])
    exact = size * counts / n_samples
    take = np.floor(exact).astype(np.int64)
    missing = size - int(take.sum())
    if missing > 0:
        order = np.argsort(-(exact - take), kind="stable")
        for c in order:
            if missing == 0:
                break
            if take[c] < counts[c]:
                take[c] += 1
                missing -= 1
    out = np.empty((n_subsamples, size), dtype=np.intp)
    for b in range(n_subsamples):
        parts = [m[rng.permutation(m.shape[0])[:t]] for m, t in zip(strata, take)]
        out[b] = np.sort(np.concatenate(parts))
    return out


# --------------------------------------------------------------------------------------------
# frequencies along a ranking path
# --------------------------------------------------------------------------------------------


def count_path_grid(kmax: int, n_values: int = 50) -> np.ndarray:
    """The counts of a count path: ``1..kmax`` when there are at most ``n_values`` of them,
    else ``n_values`` (or fewer, after rounding) geometrically spaced integers from 1 to kmax."""
    if kmax <= n_values:
        return np.arange(1, kmax + 1)
    return np.unique(np.round(np.geomspace(1, kmax, n_values)).astype(np.int64))


def rank_path_frequencies(rankings: np.ndarray, k_values: np.ndarray) -> np.ndarray:
    r"""Selection frequencies of the top-:math:`k` sets of each resample's ranking, for every k.

    :math:`\hat\Pi_j(k) = \frac{1}{M} \#\{m : r_{mj} \le k\}`, from one ranking per resample:
    for a ranker whose scores do not depend on :math:`k` this equals refitting at every
    :math:`k`. Memory: the (p, len(k_values)) result and one (M, p) mask at a time.

    Parameters
    ----------
    rankings : ndarray of shape (n_resamples, n_features)
        1 = best, each row a permutation of ``1..p``.
    k_values : ndarray of int

    Returns
    -------
    ndarray of shape (n_features, len(k_values))
    """
    rankings = np.asarray(rankings)
    m, p = rankings.shape
    k_values = np.asarray(k_values, dtype=np.int64)
    out = np.empty((p, k_values.shape[0]))
    for i, k in enumerate(k_values):
        out[:, i] = np.count_nonzero(rankings <= k, axis=0) / m
    return out


# --------------------------------------------------------------------------------------------
# error bounds
# --------------------------------------------------------------------------------------------


def threshold_grid(n_fits: int) -> np.ndarray:
    r"""The thresholds that give distinct selections: :math:`j / M` for :math:`M` fits."""
    return np.arange(n_fits + 1) / n_fits


def _effective(tau: float, n_fits: int) -> float:
    """The grid value j/M that selects the same set as ``Pi >= tau`` (``ceil(M tau) / M``)."""
    return math.ceil(n_fits * tau - 1e-9) / n_fits


def worst_case_pfer_bound(q: float, n_features: int, tau: float) -> float:
    r"""The bound :math:`\mathbb{E}[V] \le q^2 / ((2\tau - 1) p)`; ``inf`` for :math:`\tau \le 1/2`.

    Meinshausen & Bühlmann ([MB2010]_, Theorem 1) for subsampling, assuming exchangeable noise
    features and a base procedure not worse than random guessing; Shah & Samworth ([SS2013]_,
    Theorem 1) for complementary pairs, for the features of low selection probability
    :math:`p_j \le q/p` and without those assumptions.
    """
    if tau <= 0.5:
        return math.inf
    return q * q / ((2.0 * tau - 1.0) * n_features)


def cpss_unimodal_constant(tau: float, n_pairs: int, theta: float) -> float:
    r"""The constant :math:`C(\tau, B)` of Shah & Samworth ([SS2013]_, Theorem 2, unimodal case).

    If, for every feature :math:`k` of low selection probability (:math:`p_k \le \theta`), the
    distribution of its CPSS frequency :math:`\hat\Pi_B(k)` over :math:`B` complementary pairs
    is unimodal, then for :math:`\tau \in \{1/2 + 1/B, 1/2 + 3/(2B), \dots, 1\}` and
    :math:`\theta \le 1/\sqrt 3`,
    :math:`\mathbb{E}|\hat S^{CPSS}_\tau \cap L_\theta| \le C(\tau, B)\, \theta\,
    \mathbb{E}|\hat S_{\lfloor n/2 \rfloor} \cap L_\theta|` with

    .. math::

        C(\tau, B) = \begin{cases}
            \dfrac{1}{2\,(2\tau - 1 - 1/(2B))}
              & \tau \in \bigl(\min(\tfrac12 + \theta^2,\ \tfrac12 + \tfrac{1}{2B}
                + \tfrac34\theta^2),\ \tfrac34\bigr], \\[1ex]
            \dfrac{4\,(1 - \tau + 1/(2B))}{1 + 1/B} & \tau \in (\tfrac34, 1].
        \end{cases}

    Returns
    -------
    float
        :math:`C(\tau, B)`, or ``inf`` where the theorem does not apply (:math:`\theta >
        1/\sqrt 3`, :math:`\tau` off the grid or below the lower end of the first interval).
    """
    b = float(n_pairs)
    grid = 2.0 * n_pairs * tau
    if abs(grid - round(grid)) > 1e-9 or tau < 0.5 + 1.0 / b - 1e-12 or tau > 1.0 + 1e-12:
        return math.inf
    if theta > 1.0 / math.sqrt(3.0):
        return math.inf
    lower = min(0.5 + theta**2, 0.5 + 1.0 / (2.0 * b) + 0.75 * theta**2)
    if tau <= lower:
        return math.inf
    if tau <= 0.75 + 1e-12:
        return 1.0 / (2.0 * (2.0 * tau - 1.0 - 1.0 / (2.0 * b)))
    return 4.0 * (1.0 - tau + 1.0 / (2.0 * b)) / (1.0 + 1.0 / b)


def pfer_bound(
    q: float, n_features: int, tau: float, n_fits: int, *, unimodal: bool = False
) -> float:
    r"""Bound on the expected number of false selections at threshold ``tau``.

    ``tau`` is first moved up to the grid value :math:`\lceil M\tau \rceil / M` (the same
    selection). Without ``unimodal``: :func:`worst_case_pfer_bound`. With ``unimodal``
    (complementary pairs, :math:`M = 2B`): the smaller of it and :math:`C(\tau, B)\, q^2 / p`
    (:func:`cpss_unimodal_constant` with :math:`\theta = q/p`), both valid under the unimodality
    assumption.
    """
    eff = _effective(tau, n_fits)
    bound = worst_case_pfer_bound(q, n_features, eff)
    if unimodal:
        theta = q / n_features
        c = cpss_unimodal_constant(eff, n_fits // 2, theta)
        bound = min(bound, c * q * theta)
    return bound


def threshold_for_pfer(
    q: float, n_features: int, pfer: float, n_fits: int, *, unimodal: bool = False
) -> tuple[float, float]:
    r"""The smallest grid threshold :math:`\tau = j/M > 1/2` whose :func:`pfer_bound` is at most
    ``pfer`` (the largest selection with that guarantee).

    Returns
    -------
    tau, bound : float, float
        When no threshold reaches ``pfer`` (``q`` too large), ``tau = 1`` and its bound, which
        then exceeds ``pfer``.
    """
    for j in range(n_fits // 2 + 1, n_fits + 1):
        tau = j / n_fits
        bound = pfer_bound(q, n_features, tau, n_fits, unimodal=unimodal)
        if bound <= pfer * (1.0 + 1e-12):  # rounding: q^2/((2 tau - 1) p) == pfer exactly
            return tau, bound
    return 1.0, pfer_bound(q, n_features, 1.0, n_fits, unimodal=unimodal)


def count_for_pfer(
    n_features: int, pfer: float, n_fits: int, tau: float, *, unimodal: bool = False
) -> int:
    r"""The largest per-resample count :math:`q \in [1, p]` whose :func:`pfer_bound` at the
    threshold ``tau`` is at most ``pfer`` (1 when even :math:`q = 1` exceeds it).

    This is how ``stabs`` (Hofner, Boccuto & Göker, 2015) and Meinshausen & Bühlmann
    ([MB2010]_, Section 2.4) fix the base procedure's size: the bound is monotone in
    :math:`q`, so the search is a bisection.
    """
    def ok(q: int) -> bool:
        return pfer_bound(q, n_features, tau, n_fits, unimodal=unimodal) <= pfer * (1.0 + 1e-12)

    lo, hi = 1, int(n_features)
    if not ok(lo):
        return 1
    while lo < hi:  # invariant: ok(lo)
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


# --------------------------------------------------------------------------------------------
# stability of a family of supports
# --------------------------------------------------------------------------------------------


def nogueira_stability(Z: np.ndarray) -> tuple[float, float]:
    r"""The stability estimator of Nogueira, Sechidis & Brown ([NSB2018]_) and its variance.

    For :math:`M` supports over :math:`d` features as a binary matrix :math:`Z`, with
    :math:`\hat p_f` the selection frequency of feature :math:`f`, :math:`k_i` the size of
    support :math:`i` and :math:`\bar k` the mean size,

    .. math::

        \hat\Phi(Z) = 1 - \frac{\frac1d \sum_f \frac{M}{M-1}\hat p_f (1 - \hat p_f)}
                               {\frac{\bar k}{d}\left(1 - \frac{\bar k}{d}\right)}.

    Its asymptotic variance (their Theorem 9, a delta-method/U-statistic argument) is estimated
    by :math:`\widehat{\mathrm{Var}} = \frac{4}{M^2} \sum_i (\hat\phi_i - \bar\phi)^2` with

    .. math::

        \hat\phi_i = \frac{1}{\frac{\bar k}{d}(1 - \frac{\bar k}{d})} \left[
            \frac1d \sum_f z_{if} \hat p_f - \frac{k_i \bar k}{d^2}
            + \frac{\hat\Phi}{2}\left(\frac{2 k_i \bar k}{d^2} - \frac{k_i}{d}
            - \frac{\bar k}{d} + 1\right) \right].

    Parameters
    ----------
    Z : ndarray of shape (M, d), bool or {0, 1}
        :math:`M \ge 2` and :math:`0 < \bar k < d`.

    Returns
    -------
    value, variance : float, float
    """
    Z = np.asarray(Z, dtype=np.float64)
    m, d = Z.shape
    p_hat = Z.mean(axis=0)
    k = Z.sum(axis=1)
    kbar = float(k.mean())
    denom = (kbar / d) * (1.0 - kbar / d)
    phi = 1.0 - (m / (m - 1.0)) * float(np.mean(p_hat * (1.0 - p_hat))) / denom
    terms = (
        (Z @ p_hat) / d
        - k * kbar / d**2
        + 0.5 * phi * (2.0 * k * kbar / d**2 - k / d - kbar / d + 1.0)
    ) / denom
    variance = 4.0 / m**2 * float(np.sum((terms - terms.mean()) ** 2))
    return phi, variance


def jaccard_mean(Z: np.ndarray) -> float:
    r"""Mean pairwise Jaccard similarity :math:`|S_i \cap S_j| / |S_i \cup S_j|` over the
    :math:`M(M-1)/2` pairs of supports (two empty supports count as identical, 1)."""
    Z = np.asarray(Z, dtype=np.float64)
    m = Z.shape[0]
    inter = Z @ Z.T
    k = np.diag(inter)
    union = k[:, None] + k[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        sim = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 1.0)
    iu = np.triu_indices(m, 1)
    return float(sim[iu].mean())


def kuncheva_mean(Z: np.ndarray) -> float:
    r"""Mean pairwise Kuncheva consistency index ([K2007]_) of supports of one size :math:`k`:
    :math:`(r d - k^2) / (k (d - k))` with :math:`r = |S_i \cap S_j|`, for :math:`0 < k < d`."""
    Z = np.asarray(Z, dtype=np.float64)
    m, d = Z.shape
    k = float(Z[0].sum())
    inter = Z @ Z.T
    iu = np.triu_indices(m, 1)
    return float(np.mean((inter[iu] * d - k * k) / (k * (d - k))))
