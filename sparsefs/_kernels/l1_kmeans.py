r"""The l1 w-step of Witten & Tibshirani's sparse k-means: a normalised soft threshold.

Given the per-feature between-cluster sums of squares :math:`a \ge 0`
(:func:`sparsefs._kernels.sparse_kmeans.between_cluster_ss`), the w-step of the l1 sparse
k-means (Witten & Tibshirani 2010, eq. 16) solves

.. math::

    \max_w\ w^\top a \quad\text{s.t.}\quad \|w\|_2 \le 1,\ \|w\|_1 \le s,\ w \ge 0

by :math:`w = S(a, \Delta)/\|S(a, \Delta)\|_2`, :math:`S(a, \Delta)_j = \max(a_j - \Delta, 0)`.
:func:`l1_delta_exact` finds :math:`\Delta` in closed form after a sort;
:func:`l1_delta_bisection` restates the bisection of the ``sparcl`` package from the sparsefs
spec (3.6), not from its GPL-2 code.

References
----------
.. [1] D. M. Witten and R. Tibshirani, "A framework for feature selection in clustering",
   JASA 105(490):713-726, 2010.
"""

import math

import numpy as np

__all__ = ["l1_delta_bisection", "l1_delta_exact", "l1_weights", "soft_threshold"]


def soft_threshold(a: np.ndarray, delta: float) -> np.ndarray:
    r"""The non-negative soft threshold :math:`S(a, \Delta)_j = \max(a_j - \Delta, 0)`."""
    return np.maximum(np.asarray(a, dtype=np.float64) - delta, 0.0)


def _l1_ratio(t: np.ndarray) -> float:
    """``||t||_1 / ||t||_2`` (0 for ``t = 0``), computed on ``t / max(t)`` so that neither norm
    overflows or underflows."""
    t_max = float(t.max()) if t.size else 0.0
    if t_max <= 0:
        return 0.0
    t = t / t_max
    return float(t.sum()) / math.sqrt(float(t @ t))


def l1_delta_exact(a: np.ndarray, s: float) -> float:
    r"""The exact soft-threshold level :math:`\Delta` of the l1 w-step, in closed form.

    The w-step of Witten & Tibshirani (2010, eq. 16) solves
    :math:`\max_w w^\top a` s.t. :math:`\|w\|_2 \le 1,\ \|w\|_1 \le s,\ w \ge 0` by
    :math:`w = S(a, \Delta)/\|S(a, \Delta)\|_2` with :math:`\Delta = 0` if that already has
    :math:`\|w\|_1 \le s`, and otherwise the :math:`\Delta > 0` with
    :math:`\|S(a, \Delta)\|_1 / \|S(a, \Delta)\|_2 = s`.

    That ratio is continuous and non-increasing in :math:`\Delta`. Sorting
    :math:`a_{(1)} \ge \dots \ge a_{(p)}` (and :math:`a_{(p+1)} = 0`), the ratio at the
    breakpoint :math:`\Delta = a_{(k+1)}` follows from cumulative sums; the solution lies in
    the first segment :math:`[a_{(m+1)}, a_{(m)}]` whose lower breakpoint has ratio
    :math:`\ge s`. On it the support is the top :math:`m` features and
    :math:`(\sum_{i \le m} (a_{(i)} - \Delta))^2 = s^2 \sum_{i \le m} (a_{(i)} - \Delta)^2`
    is a quadratic in :math:`\Delta` whose relevant root is

    .. math::

        \Delta = \bar a_m - s \sqrt{\frac{M_m}{m (m - s^2)}}, \qquad
        \bar a_m = \frac1m \sum_{i \le m} a_{(i)},\quad
        M_m = \sum_{i \le m} (a_{(i)} - \bar a_m)^2,

    evaluated with a two-pass :math:`M_m` (no cancellation). When :math:`m = s^2` the ratio is
    constant on the segment and its lower end is returned. O(p log p).

    Parameters
    ----------
    a : ndarray of shape (n_features,)
        Non-negative scores (the BCSS).
    s : float
        The l1 bound, ``>= 1``.

    Returns
    -------
    float
        :math:`\Delta \ge 0`.
    """
    a = np.asarray(a, dtype=np.float64)
    if not s >= 1:
        raise ValueError(f"s={s!r} must be >= 1.")
    top = float(a.max()) if a.size else 0.0
    if top <= 0:
        return 0.0
    a = a / top  # Delta is homogeneous in a: work at unit scale (no under/overflow)
    norm = math.sqrt(float(a @ a))
    if float(a.sum()) / norm <= s:
        return 0.0
    b = -np.sort(-a)
    p = b.shape[0]
    nxt = np.append(b[1:], 0.0)
    k = np.arange(1, p + 1, dtype=np.float64)
    s1 = np.cumsum(b)
    s2 = np.cumsum(b * b)
    num = s1 - k * nxt
    den2 = np.maximum(s2 - 2.0 * nxt * s1 + k * nxt * nxt, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(den2 > 0, num / np.sqrt(den2), 0.0)
    hit = np.flatnonzero(ratio >= s)
    m = int(hit[0]) + 1 if hit.size else p
    head = b[:m]
    mean = float(head.mean())
    m2 = float(((head - mean) ** 2).sum())
    slack = m - s * s  # 0 when the ratio is flat on the segment (a tied top block)
    delta = float(nxt[m - 1]) if slack <= 1e-12 * m else mean - s * math.sqrt(m2 / (m * slack))
    return top * float(min(max(delta, nxt[m - 1], 0.0), b[m - 1]))


def l1_delta_bisection(
    a: np.ndarray, s: float, *, max_halvings: int = 15, tol: float = 1e-4
) -> float:
    r"""The soft-threshold level by bisection, as the ``sparcl`` package computes it.

    Restated from the spec (3.6): :math:`\Delta = 0` if :math:`\|a\|_2 = 0` or
    :math:`\|a\|_1/\|a\|_2 \le s`; otherwise bisect on :math:`[0, \max_j a_j - 10^{-5}]`
    for at most ``max_halvings`` halvings or until the interval is shorter than ``tol``
    (absolute, so the result depends on the scale of :math:`a`): if the ratio
    :math:`\|S(a, \mathrm{mid})\|_1/\|S(a, \mathrm{mid})\|_2 < s` the upper end moves to mid,
    else the lower end. Returns the final midpoint, so :math:`\|w\|_1 \le s` holds only
    approximately; :func:`l1_delta_exact` is exact.

    Parameters
    ----------
    a : ndarray of shape (n_features,)
    s : float
    max_halvings : int, default=15
    tol : float, default=1e-4

    Returns
    -------
    float
    """
    a = np.asarray(a, dtype=np.float64)
    norm = math.sqrt(float(a @ a))
    if norm == 0 or float(a.sum()) / norm <= s:
        return 0.0
    lo, hi = 0.0, max(float(a.max()) - 1e-5, 0.0)
    for _ in range(max_halvings):
        if hi - lo <= tol:
            break
        mid = 0.5 * (lo + hi)
        if _l1_ratio(soft_threshold(a, mid)) < s:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def l1_weights(a: np.ndarray, s: float, *, exact: bool = True) -> np.ndarray:
    r"""The l1 w-step of Witten & Tibshirani (2010, eq. 16).

    .. math::

        w = \frac{S(a, \Delta)}{\|S(a, \Delta)\|_2}

    with :math:`\Delta` from :func:`l1_delta_exact` (``exact=True``) or
    :func:`l1_delta_bisection`. Then :math:`\|w\|_2 = 1` and :math:`\|w\|_1 \le s` (exactly
    :math:`= s` when :math:`\Delta > 0`, for the exact level).

    Degenerate cases: :math:`a = 0` gives :math:`w = 0`. When the top :math:`m` scores are
    tied with :math:`m > s^2`, no normalised soft threshold satisfies the bound (every one is
    uniform on the tied block, with l1 norm :math:`\sqrt m > s`); the exact step then returns
    the symmetric optimum :math:`w = s/m` on the block (objective :math:`s\,a_{(1)}`, feasible,
    :math:`\|w\|_2 = s/\sqrt m < 1`).

    Parameters
    ----------
    a : ndarray of shape (n_features,)
        Non-negative scores.
    s : float
        The bound, ``>= 1``.
    exact : bool, default=True

    Returns
    -------
    ndarray of shape (n_features,)
    """
    a = np.asarray(a, dtype=np.float64)
    delta = l1_delta_exact(a, s) if exact else l1_delta_bisection(a, s)
    t = soft_threshold(a, delta)
    t_max = float(t.max()) if t.size else 0.0
    if t_max > 0:
        t = t / t_max  # unit scale before the norm: no underflow of tiny weights
        norm = math.sqrt(float(t @ t))
        if not exact or t.sum() / norm <= s * (1 + 1e-9):
            return t / norm
    w = np.zeros_like(a)
    top = a.max() if a.size else 0.0
    if top > 0:
        block = a == top
        m = int(block.sum())
        w[block] = min(s / m, 1.0 / math.sqrt(m))
    return w
