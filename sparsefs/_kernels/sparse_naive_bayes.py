r"""Sparse naive Bayes (Askari, d'Aspremont & El Ghaoui, *Naive Feature Selection: Sparsity in
Naive Bayes*, AISTATS 2020).

Naive Bayes whose class-conditional parameters differ between the classes on at most ``k``
features: outside the support :math:`S` every class shares one parameter, fitted on the pooled
data, so only the features of :math:`S` enter the decision. The maximum-likelihood support is

.. math::

    \max_{|S| \le k} \; \ell(S) - \ell(\emptyset),

with :math:`\ell(S)` the log-likelihood of the model whose parameters differ on :math:`S`.
All counts below are *smoothed*: Laplace / Lidstone smoothing with ``alpha`` adds ``alpha``
pseudo-counts to every cell, so with ``k = p`` the model is exactly scikit-learn's
``BernoulliNB`` / ``MultinomialNB`` with the same ``alpha``.

**Bernoulli** (binary features). With :math:`o_{cj}` the (smoothed) number of ones of feature
:math:`j` in class :math:`c`, :math:`z_{cj}` the zeros and :math:`m_c = o_{cj} + z_{cj}`, the
likelihood is separable over features and the gain of letting feature :math:`j` differ is

.. math::

    \Delta_j = \sum_c \big[o_{cj}\log\tfrac{o_{cj}}{m_c} + z_{cj}\log\tfrac{z_{cj}}{m_c}\big]
             - \big[o_j\log\tfrac{o_j}{m} + z_j\log\tfrac{z_j}{m}\big] \;\ge 0,

(:math:`o_j = \sum_c o_{cj}`, :math:`m = \sum_c m_c`), so the optimal support is the top-``k``
of :math:`\Delta` (the paper's exact sorting solution; any number of classes).

**Multinomial** (counts). With :math:`f_{cj}` the smoothed count sums, :math:`F_c(S) =
\sum_{j\in S} f_{cj}`, :math:`g_j = \sum_c f_{cj}` and :math:`G(S) = \sum_{j \in S} g_j`, the
class-specific parameters on the support are :math:`\theta_{cj} = (G(S)/N)\,f_{cj}/F_c(S)`,
the shared ones :math:`\theta_j = g_j / N`, and the gain is

.. math::

    \Delta(S) = \sum_{j \in S} a_j + G(S)\log G(S) - \sum_c F_c(S)\log F_c(S),
    \qquad a_j = \sum_c f_{cj}\log f_{cj} - g_j \log g_j,

:math:`G(S)` times the empirical mutual information between class and feature within
:math:`S`. It is not separable. Writing the concave, 1-homogeneous term as a minimum of linear
functions (:math:`G\log G - \sum_c F_c\log F_c = \min_{\pi\in\Delta_C} -\sum_c F_c\log\pi_c`)
gives the Lagrangian bound of the paper,

.. math::

    \Delta(S) \le \psi(k) = \min_{\pi \in \Delta_C} s_k\big(b(\pi)\big), \qquad
    b_j(\pi) = g_j\,\mathrm{KL}\big(f_{\cdot j}/g_j \,\|\, \pi\big) \ge 0,

(:math:`s_k` = sum of the ``k`` largest entries), a convex problem over the class simplex (a
one-dimensional one for two classes, as in the paper). By the minimax theorem it equals the
maximum of the concave relaxation :math:`D(w) = a^\top w + \varphi(f w)` over
:math:`\{0 \le w \le 1, \sum w \le k\}`, which :func:`multinomial_support` solves by
Frank–Wolfe with exact line search (the linear oracle is the top-``k`` of :math:`b(\pi(w))`,
:math:`\pi(w) \propto f w`). Every oracle's top-``k`` is a candidate support; the best one is
improved by 1-swap local search. The result carries the bound, so the duality gap
:math:`\psi - \Delta(S) \ge \mathrm{opt} - \Delta(S)` certifies how far it can be from optimal.
Our multiclass use of the same bound (classes share the parameters outside one support, as in
the multiclass sparse center classifiers) is an extension: the paper treats two classes.
"""

from dataclasses import dataclass

import numba
import numpy as np
import scipy.sparse as sp
from scipy.special import xlogy

__all__ = [
    "MultinomialSupport",
    "bernoulli_gains",
    "bernoulli_log_params",
    "binary_class_counts",
    "class_count_sums",
    "multinomial_gain",
    "multinomial_log_params",
    "multinomial_support",
    "multinomial_upper_bound",
]


# -- class sums (one pass over X, float64 accumulation, no copy of X) --------------------------


@numba.njit(cache=True, nogil=True)
def _dense_class_sums(X, y_idx, n_classes, threshold, binary):
    n, p = X.shape
    out = np.zeros((n_classes, p))
    for i in range(n):
        c = y_idx[i]
        for j in range(p):
            v = X[i, j]
            if binary:
                if v > threshold:
                    out[c, j] += 1.0
            else:
                out[c, j] += v
    return out


@numba.njit(cache=True, nogil=True)
def _sparse_class_sums(data, indices, indptr, y_idx, n_classes, n_features, threshold, binary,
                       by_column):
    """CSR (``by_column=False``: rows outer) or CSC (columns outer), read as stored."""
    out = np.zeros((n_classes, n_features))
    for a in range(indptr.shape[0] - 1):
        for t in range(indptr[a], indptr[a + 1]):
            if by_column:
                c, j = y_idx[indices[t]], a
            else:
                c, j = y_idx[a], indices[t]
            v = data[t]
            if binary:
                # stored entries above the threshold are ones; for a negative threshold the
                # implicit zeros are ones too, counted by the caller, and stored entries at or
                # below it are the "not one" ones (counted here, with a minus sign)
                if threshold >= 0.0:
                    if v > threshold:
                        out[c, j] += 1.0
                elif v <= threshold:
                    out[c, j] -= 1.0
            else:
                out[c, j] += v
    return out


def class_count_sums(X, y_idx: np.ndarray, n_classes: int) -> np.ndarray:
    """Per-class column sums of ``X`` (``n_classes x n_features``, float64), one pass over X.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Dense (any float dtype) or CSR/CSC; never densified or upcast.
    y_idx : ndarray of shape (n_samples,)
        Class index of each sample in ``0..n_classes-1``.
    n_classes : int
    """
    return _class_sums(X, y_idx, n_classes, 0.0, binary=False)


def binary_class_counts(X, y_idx: np.ndarray, n_classes: int, threshold: float) -> np.ndarray:
    """Per-class numbers of entries ``> threshold`` in each column (``n_classes x n_features``).

    Implicit zeros of a sparse X count as ones when ``threshold < 0``, without densifying.
    """
    return _class_sums(X, y_idx, n_classes, float(threshold), binary=True)


def _class_sums(X, y_idx, n_classes, threshold, *, binary):
    y_idx = np.ascontiguousarray(y_idx, dtype=np.intp)
    _n, p = X.shape
    if sp.issparse(X):
        if X.format not in ("csr", "csc"):
            X = sp.csr_array(X)
        out = _sparse_class_sums(
            X.data, X.indices, X.indptr, y_idx, n_classes, p, threshold, binary,
            X.format == "csc",
        )
        if binary and threshold < 0:
            out += np.bincount(y_idx, minlength=n_classes).astype(np.float64)[:, None]
        return out
    X = np.asarray(X)
    if not X.flags.c_contiguous:
        X = np.ascontiguousarray(X)
    return _dense_class_sums(X, y_idx, n_classes, threshold, binary)


# -- Bernoulli -----------------------------------------------------------------------------


def _xlogx_over(x: np.ndarray, total) -> np.ndarray:
    """``x log(x / total)`` with ``0 log 0 = 0``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return xlogy(x, x) - xlogy(x, total)


def bernoulli_gains(ones: np.ndarray, class_totals: np.ndarray) -> np.ndarray:
    """The exact per-feature log-likelihood gains :math:`\\Delta_j` of the Bernoulli model.

    Parameters
    ----------
    ones : ndarray of shape (n_classes, n_features)
        Smoothed numbers of ones per class (counts + alpha).
    class_totals : ndarray of shape (n_classes,)
        Smoothed class sizes (counts + 2 alpha); zeros are ``class_totals - ones``.

    Returns
    -------
    ndarray of shape (n_features,)
        :math:`\\Delta_j \\ge 0` (clipped at 0 against rounding).
    """
    totals = class_totals[:, None]
    zeros = totals - ones
    split = (_xlogx_over(ones, totals) + _xlogx_over(zeros, totals)).sum(axis=0)
    o, z, m = ones.sum(axis=0), zeros.sum(axis=0), class_totals.sum()
    pooled = _xlogx_over(o, m) + _xlogx_over(z, m)
    return np.maximum(split - pooled, 0.0)


def bernoulli_log_params(
    ones: np.ndarray, class_totals: np.ndarray, support: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(log theta, log(1 - theta))`` per class and feature of the support-constrained model.

    On the support each class has its own rate ``ones / totals``; elsewhere all classes share
    the pooled rate ``sum_c ones / sum_c totals``.
    """
    theta = ones / class_totals[:, None]
    pooled = ones.sum(axis=0) / class_totals.sum()
    theta = np.where(support[None, :], theta, pooled[None, :])
    with np.errstate(divide="ignore"):
        return np.log(theta), np.log1p(-theta)


# -- multinomial ---------------------------------------------------------------------------


def _phi(F: np.ndarray) -> np.ndarray:
    """:math:`G\\log G - \\sum_c F_c \\log F_c` along the last axis (:math:`G = \\sum_c F_c`)."""
    G = F.sum(axis=-1)
    return xlogy(G, G) - xlogy(F, F).sum(axis=-1)


def _feature_terms(counts: np.ndarray) -> np.ndarray:
    """:math:`a_j = \\sum_c f_{cj}\\log f_{cj} - g_j\\log g_j` (``<= 0``)."""
    g = counts.sum(axis=0)
    return xlogy(counts, counts).sum(axis=0) - xlogy(g, g)


def _b(counts: np.ndarray, a: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """:math:`b_j(\\pi) = a_j - \\sum_c f_{cj}\\log\\pi_c = g_j\\,KL(f_{\\cdot j}/g_j\\|\\pi)`.

    ``pi`` must be positive (it is whenever the smoothed counts are).
    """
    return a - np.log(pi) @ counts


def _top_k(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest values, ties to the lower index (sorted); O(p)."""
    p = values.shape[0]
    if k >= p:
        return np.arange(p)
    threshold = values[np.argpartition(-values, k - 1)[:k]].min()
    above = np.flatnonzero(values > threshold)
    ties = np.flatnonzero(values == threshold)[: k - above.size]
    return np.sort(np.concatenate([above, ties]))


def multinomial_gain(counts: np.ndarray, support: np.ndarray) -> float:
    """:math:`\\Delta(S)` of a support (indices or a boolean mask), exactly.

    Parameters
    ----------
    counts : ndarray of shape (n_classes, n_features)
        Smoothed per-class count sums.
    support : ndarray of int or bool
    """
    fS = counts[:, support]
    a = _feature_terms(fS)
    return float(a.sum() + _phi(fS.sum(axis=1)))


def multinomial_upper_bound(counts: np.ndarray, k: int, pi: np.ndarray) -> float:
    """The weak-duality bound :math:`s_k(b(\\pi)) \\ge \\max_{|S| \\le k} \\Delta(S)`, any
    :math:`\\pi` in the class simplex."""
    b = _b(counts, _feature_terms(counts), np.asarray(pi, dtype=np.float64))
    return float(np.sort(b)[::-1][:k].sum())


@dataclass(frozen=True)
class MultinomialSupport:
    """Result of :func:`multinomial_support`.

    Attributes
    ----------
    support : ndarray of int
        The selected features (sorted).
    gain : float
        :math:`\\Delta(S)` of that support (log-likelihood over the all-shared model).
    upper_bound : float
        :math:`\\psi(k)` as far as it was minimised: no support of size ``k`` has a larger gain.
    duality_gap : float
        ``upper_bound - gain`` (``>= 0``): a bound on the gain lost to the optimum.
    feature_gains : ndarray of shape (n_features,)
        :math:`b_j(\\pi_S)`, each feature's term at the support's class distribution
        :math:`\\pi_S = F(S)/G(S)`; :math:`\\Delta(S) = \\sum_{j\\in S} b_j(\\pi_S)`.
    n_iter : int
        Frank–Wolfe iterations run.
    n_swaps : int
        Improving swaps made by the local search.
    """

    support: np.ndarray
    gain: float
    upper_bound: float
    duality_gap: float
    feature_gains: np.ndarray
    n_iter: int
    n_swaps: int


def _line_search(aw, as_, Fw, Fs, n_steps: int = 60) -> float:
    """argmax over [0, 1] of the concave :math:`D((1-\\gamma) w + \\gamma s)` (golden section).

    ``D`` on the segment needs only the C-vectors ``F(w)``, ``F(s)`` and the scalars
    ``a.w``, ``a.s``: O(C) per evaluation.
    """

    def value(gam):
        return (1 - gam) * aw + gam * as_ + _phi((1 - gam) * Fw + gam * Fs)

    lo, hi = 0.0, 1.0
    r = (np.sqrt(5.0) - 1.0) / 2.0
    x1, x2 = hi - r * (hi - lo), lo + r * (hi - lo)
    f1, f2 = value(x1), value(x2)
    for _ in range(n_steps):
        if f1 < f2:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + r * (hi - lo)
            f2 = value(x2)
        else:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - r * (hi - lo)
            f1 = value(x1)
    best = max((value(0.0), 0.0), (value(1.0), 1.0), (f1, x1), (f2, x2))
    return best[1]


def _swap_search(counts, a, support, k, max_passes, n_candidates):
    """Best-improvement 1-swap local search on :math:`\\Delta`; candidates to bring in are the
    ``n_candidates`` best outside features by :math:`b(\\pi_S)`. Returns (mask, n_swaps)."""
    p = counts.shape[1]
    inS = np.zeros(p, dtype=bool)
    inS[support] = True
    n_swaps = 0
    for _ in range(max_passes):
        F = counts[:, inS].sum(axis=1)
        a_S = a[inS].sum()
        current = a_S + _phi(F)
        pi = F / F.sum()
        out = np.flatnonzero(~inS)
        if out.size == 0:
            break
        b_out = _b(counts[:, out], a[out], pi)
        if out.size > n_candidates:
            out = out[_top_k(b_out, n_candidates)]
        f_out = counts[:, out].T  # (m, C)
        best_gain, best = 1e-12 * max(1.0, abs(current)), None
        for j in np.flatnonzero(inS):
            values = (a_S - a[j]) + a[out] + _phi((F - counts[:, j])[None, :] + f_out)
            i = int(np.argmax(values))
            if values[i] - current > best_gain:
                best_gain, best = values[i] - current, (j, out[i])
        if best is None:
            break
        inS[best[0]], inS[best[1]] = False, True
        n_swaps += 1
    return inS, n_swaps


def multinomial_support(
    counts: np.ndarray,
    k: int,
    *,
    max_iter: int = 200,
    tol: float = 1e-6,
    max_swap_passes: int = 50,
) -> MultinomialSupport:
    """Support of size ``k`` maximising the multinomial gain :math:`\\Delta(S)`, with its bound.

    Frank–Wolfe on the concave relaxation (exact line search), every oracle's top-``k`` a
    candidate; the best candidate is then improved by 1-swap local search (candidates to bring
    in: the best ``max(4k, 200)`` outside features at the current class distribution). For two
    classes the bound is first minimised exactly over the one-dimensional simplex (golden
    section). Stops when the relative duality gap ``(upper_bound - gain) / upper_bound <= tol``,
    when the relaxation is solved to that tolerance, or after ``max_iter`` iterations.

    Parameters
    ----------
    counts : ndarray of shape (n_classes, n_features)
        Smoothed per-class count sums (all ``> 0`` once ``alpha > 0``).
    k : int
        Support size, ``1 <= k <= n_features``.
    max_iter, tol, max_swap_passes : see above.

    Returns
    -------
    MultinomialSupport
    """
    counts = np.asarray(counts, dtype=np.float64)
    n_classes, p = counts.shape
    a = _feature_terms(counts)
    if k >= p:
        support = np.arange(p)
        gain = float(a.sum() + _phi(counts.sum(axis=1)))
        F = counts.sum(axis=1)
        return MultinomialSupport(
            support, gain, gain, 0.0, _b(counts, a, F / F.sum()), 0, 0
        )
    best_gain, best_support, upper = -np.inf, None, np.inf
    if n_classes == 2:
        # the paper's one-dimensional dual: min over pi = (t, 1 - t) of the convex s_k(b(pi)),
        # by golden section; every evaluated point's top-k is a candidate support
        def dual(t):
            b = _b(counts, a, np.array([t, 1.0 - t]))
            S = _top_k(b, k)
            return float(b[S].sum()), S

        lo, hi, r = 1e-12, 1.0 - 1e-12, (np.sqrt(5.0) - 1.0) / 2.0
        x1, x2 = hi - r * (hi - lo), lo + r * (hi - lo)
        (f1, S1), (f2, S2) = dual(x1), dual(x2)
        for _ in range(80):
            for S in (S1, S2):
                gain = float(a[S].sum() + _phi(counts[:, S].sum(axis=1)))
                if gain > best_gain:
                    best_gain, best_support = gain, S
            upper = min(upper, f1, f2)
            if f1 > f2:
                lo, x1, f1, S1 = x1, x2, f2, S2
                x2 = lo + r * (hi - lo)
                f2, S2 = dual(x2)
            else:
                hi, x2, f2, S2 = x2, x1, f1, S1
                x1 = hi - r * (hi - lo)
                f1, S1 = dual(x1)
            if hi - lo < 1e-13:
                break
        upper = min(upper, f1, f2)
    # Frank-Wolfe from w = (k/p) 1, the centre of the relaxed polytope
    w = np.full(p, k / p)
    Fw, aw = counts @ w, float(a @ w)
    n_iter = 0
    for _ in range(max_iter):
        n_iter += 1
        pi = Fw / Fw.sum()
        b = _b(counts, a, pi)
        S = _top_k(b, k)
        upper = min(upper, float(b[S].sum()))  # s_k(b(pi)): weak duality
        gain = float(a[S].sum() + _phi(counts[:, S].sum(axis=1)))
        if gain > best_gain:
            best_gain, best_support = gain, S
        scale = tol * max(abs(upper), 1e-300)
        # stop when the support is certified, or when the relaxation is solved (D(w) reaches
        # the bound: what is left is the integrality gap, which more iterations cannot close)
        if upper - best_gain <= scale or upper - (aw + _phi(Fw)) <= scale:
            break
        Fs, as_ = counts[:, S].sum(axis=1), float(a[S].sum())
        gam = _line_search(aw, as_, Fw, Fs)
        if gam <= 0.0:
            break  # w is already optimal for the relaxation
        w *= 1.0 - gam
        w[S] += gam
        Fw, aw = (1.0 - gam) * Fw + gam * Fs, (1.0 - gam) * aw + gam * as_
    mask, n_swaps = _swap_search(
        counts, a, best_support, k, max_swap_passes, max(4 * k, 200)
    )
    support = np.flatnonzero(mask)
    F = counts[:, support].sum(axis=1)
    gain = float(a[support].sum() + _phi(F))
    upper = max(upper, gain)  # the bound is valid; rounding must not make the gap negative
    return MultinomialSupport(
        support, gain, upper, upper - gain, _b(counts, a, F / F.sum()), n_iter, n_swaps
    )


def multinomial_log_params(counts: np.ndarray, support: np.ndarray) -> np.ndarray:
    """``log theta`` (``n_classes x n_features``) of the support-constrained multinomial model.

    On the support :math:`\\theta_{cj} = (G(S)/N) f_{cj}/F_c(S)`; elsewhere every class has the
    pooled :math:`\\theta_j = g_j/N`. Each row sums to one.
    """
    counts = np.asarray(counts, dtype=np.float64)
    mask = np.zeros(counts.shape[1], dtype=bool)
    mask[support] = True
    g = counts.sum(axis=0)
    N = g.sum()
    theta = np.broadcast_to(g / N, counts.shape).copy()
    if mask.any():
        F = counts[:, mask].sum(axis=1, keepdims=True)
        theta[:, mask] = (g[mask].sum() / N) * counts[:, mask] / F
    with np.errstate(divide="ignore"):
        return np.log(theta)
