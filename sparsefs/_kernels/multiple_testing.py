r"""Multiple testing: p-values per feature and the procedures that turn them into a selection.

Written once for all of sparsefs (the F-test rule of ``FisherScore``, ``ErrorControlSelector``,
the CLI's ``--fdr`` / ``--fwer``):

* rejection rules: Benjamini-Hochberg (BH, step-up), Benjamini-Yekutieli (BY), Holm (step-down)
  and Bonferroni, and the matching adjusted p-values (``q``-values for BH/BY);
* analytic p-values of per-feature two-sided tests: one-way ANOVA F, Welch's t, the
  Wilcoxon-Mann-Whitney U (normal approximation) and Kruskal-Wallis H;
* the Monte-Carlo permutation p-value :math:`(1 + b_j)/(1 + B)` and the Westfall-Young
  max-T adjusted p-value from the same permutations.

With :math:`m` p-values sorted as :math:`p_{(1)} \le \dots \le p_{(m)}`:

* BH rejects the :math:`k` smallest, :math:`k = \max\{i : p_{(i)} \le i\alpha/m\}` (FDR
  :math:`\le \alpha m_0/m` under independence or positive regression dependence, PRDS);
* BY is BH at :math:`\alpha / \sum_{i=1}^m 1/i` (FDR :math:`\le \alpha` under any dependence);
* Holm rejects :math:`p_{(1)}, \dots, p_{(k)}` for the largest :math:`k` with
  :math:`p_{(i)} \le \alpha/(m - i + 1)` for every :math:`i \le k` (FWER :math:`\le \alpha` under
  any dependence);
* Bonferroni rejects :math:`p_j \le \alpha/m` (FWER :math:`\le \alpha` under any dependence).

References: Benjamini & Hochberg, JRSS-B 57, 1995; Benjamini & Yekutieli, Ann. Statist. 29,
2001; Holm, Scand. J. Statist. 6, 1979; Phipson & Smyth, Stat. Appl. Genet. Mol. Biol. 9, 2010
(permutation p-values are never 0).
"""

import numpy as np
import scipy.sparse as sp
from scipy import special, stats

__all__ = [
    "METHODS",
    "TIE_RTOL",
    "adjust_pvalues",
    "anova_f_pvalues",
    "benjamini_hochberg",
    "column_tests",
    "kruskal_pvalues",
    "mann_whitney_pvalues",
    "maxt_pvalues",
    "permutation_pvalues",
    "reject",
    "tie_threshold",
    "welch_t_pvalues",
]

#: the procedures, with the error rate each controls
METHODS = {"bh": "FDR", "by": "FDR", "holm": "FWER", "bonferroni": "FWER"}


def _check_pvalues(pvalues) -> np.ndarray:
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be 1-D; got shape {p.shape}.")
    if np.isnan(p).any():
        raise ValueError(
            f"pvalues contains NaN (positions {np.flatnonzero(np.isnan(p))[:5].tolist()}); "
            "map untestable features to 1 first."
        )
    if p.size and (p.min() < 0 or p.max() > 1):
        raise ValueError(f"pvalues must lie in [0, 1]; got range [{p.min()}, {p.max()}].")
    return p


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not one of {sorted(METHODS)}.")


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha <= 1:
        raise ValueError(f"alpha={alpha!r} must lie in (0, 1].")


def benjamini_hochberg(pvalues, alpha: float) -> np.ndarray:
    r"""The Benjamini-Hochberg step-up rejections at FDR level ``alpha``.

    Rejects every :math:`p_j \le p_{(k)}`, :math:`k = \max\{i : p_{(i)} \le i\alpha/m\}`; no
    rejection when no :math:`i` qualifies. Ties at :math:`p_{(k)}` are all rejected.

    Parameters
    ----------
    pvalues : array-like of shape (m,)
    alpha : float in (0, 1]

    Returns
    -------
    ndarray of bool, shape (m,)
    """
    return reject(pvalues, alpha, "bh")


def reject(pvalues, alpha: float, method: str = "bh") -> np.ndarray:
    r"""The hypotheses rejected by ``method`` at level ``alpha``.

    Parameters
    ----------
    pvalues : array-like of shape (m,)
        In [0, 1], no NaN.
    alpha : float in (0, 1]
        FDR level (``"bh"``, ``"by"``) or FWER level (``"holm"``, ``"bonferroni"``).
    method : {"bh", "by", "holm", "bonferroni"}

    Returns
    -------
    ndarray of bool, shape (m,)
        The comparisons are the textbook ones (``p_(i) <= i alpha / m`` and so on), not
        ``adjust_pvalues(p) <= alpha``, which can differ at the boundary by one rounding.
    """
    p = _check_pvalues(pvalues)
    _check_method(method)
    _check_alpha(alpha)
    m = p.shape[0]
    if m == 0:
        return np.zeros(0, dtype=bool)
    ordered = np.sort(p)
    ranks = np.arange(1, m + 1)
    if method == "bonferroni":
        return p <= alpha / m
    if method == "holm":
        passed = ordered <= alpha / (m - ranks + 1)
        if passed[0]:
            failed = np.flatnonzero(~passed)
            k = m if failed.size == 0 else int(failed[0])  # reject the k smallest
            return p <= ordered[k - 1]
        return np.zeros(m, dtype=bool)
    level = alpha if method == "bh" else alpha / _harmonic(m)
    passed = ordered <= level * ranks / m
    if not passed.any():
        return np.zeros(m, dtype=bool)
    return p <= ordered[np.flatnonzero(passed).max()]


def _harmonic(m: int) -> float:
    """:math:`\\sum_{i=1}^m 1/i`."""
    return float(np.sum(1.0 / np.arange(1, m + 1)))


def adjust_pvalues(pvalues, method: str = "bh") -> np.ndarray:
    r"""Adjusted p-values: the smallest level at which ``method`` rejects each hypothesis.

    * BH: :math:`q_{(i)} = \min_{k \ge i} \min(1, m p_{(k)}/k)` (equal to
      :func:`scipy.stats.false_discovery_control` with ``method="bh"``); BY multiplies by
      :math:`\sum_{i \le m} 1/i` before the running minimum (scipy's ``"by"``).
    * Holm: :math:`\tilde p_{(i)} = \max_{k \le i} \min(1, (m - k + 1) p_{(k)})`.
    * Bonferroni: :math:`\min(1, m p_j)`.

    Parameters
    ----------
    pvalues : array-like of shape (m,)
    method : {"bh", "by", "holm", "bonferroni"}

    Returns
    -------
    ndarray of shape (m,)
    """
    p = _check_pvalues(pvalues)
    _check_method(method)
    m = p.shape[0]
    if m == 0:
        return p.copy()
    if method == "bonferroni":
        return np.minimum(1.0, m * p)
    order = np.argsort(p, kind="stable")
    ordered = p[order]
    ranks = np.arange(1, m + 1)
    if method == "holm":
        adj = np.maximum.accumulate(np.minimum(1.0, (m - ranks + 1) * ordered))
    else:
        factor = 1.0 if method == "bh" else _harmonic(m)
        adj = np.minimum.accumulate((factor * m * ordered / ranks)[::-1])[::-1]
        adj = np.minimum(adj, 1.0)
    out = np.empty(m)
    out[order] = adj
    return out


# --------------------------------------------------------------------------------------------
# p-values
# --------------------------------------------------------------------------------------------


#: relative tolerance under which a permuted statistic counts as equal to the observed one
TIE_RTOL = 1e-9


def tie_threshold(observed, rtol: float = TIE_RTOL) -> np.ndarray:
    r""":math:`T_j (1 - \mathrm{rtol})` for finite :math:`T_j \ge 0` (:math:`T_j + \mathrm{rtol}
    |T_j|` below 0), :math:`T_j` itself if infinite: permuted values at or above it count as
    :math:`\ge T_j`.

    A permutation that leaves a statistic unchanged in exact arithmetic (frequent with
    discrete or sparse data: the same nonzero entries in the same class) recomputes it in
    another summation order, one rounding above or below; counting such ties as exceedances
    keeps the p-value valid (conservative) instead of one rounding too small.
    """
    t = np.asarray(observed, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(t), t - rtol * np.abs(t), t)


def permutation_pvalues(observed, null) -> np.ndarray:
    r"""Monte-Carlo permutation p-values :math:`p_j = (1 + \#\{b : T^{(b)}_j \ge T_j\})/(1 + B)`.

    Exact (valid, never 0) for any statistic whose null draws are exchangeable with the
    observed value (Phipson & Smyth, 2010). Higher statistics are more significant; ties up
    to one rounding count as exceedances (:func:`tie_threshold`).

    Parameters
    ----------
    observed : array-like of shape (m,)
        :math:`T_j`.
    null : array-like of shape (B, m)
        :math:`T^{(b)}_j`, one row per permutation.

    Returns
    -------
    ndarray of shape (m,)
        In :math:`[1/(B+1), 1]`.
    """
    t = np.asarray(observed, dtype=np.float64)
    null = np.asarray(null, dtype=np.float64)
    if null.ndim != 2 or null.shape[1] != t.shape[0]:
        raise ValueError(f"null must have shape (B, {t.shape[0]}); got {null.shape}.")
    exceed = np.count_nonzero(null >= tie_threshold(t)[None, :], axis=0)
    return (1.0 + exceed) / (1.0 + null.shape[0])


def maxt_pvalues(observed, null_max, exact: bool = False) -> np.ndarray:
    r"""Westfall-Young single-step max-T adjusted p-values
    :math:`\tilde p_j = (1 + \#\{b : \max_k T^{(b)}_k \ge T_j\})/(1 + B)`.

    FWER :math:`\le \alpha` for :math:`\{j : \tilde p_j \le \alpha\}` under any
    dependence between the features, given subset pivotality and statistics on a common
    scale (Westfall & Young, *Resampling-Based Multiple Testing*, 1993). The smallest value is
    :math:`1/(B+1)` whatever the number of features: max-T needs :math:`B + 1 \ge 1/\alpha`
    permutations, Bonferroni on permutation p-values :math:`B + 1 \ge m/\alpha`.

    Parameters
    ----------
    observed : array-like of shape (m,)
        :math:`T_j`.
    null_max : array-like of shape (B,)
        :math:`\max_k T^{(b)}_k`, one per permutation.
    exact : bool, default=False
        The permutations are *all* the relabelings, the observed one among them (a complete
        enumeration): :math:`\tilde p_j = \#\{b : \max_k T^{(b)}_k \ge T_j\}/B`.

    Returns
    -------
    ndarray of shape (m,)
    """
    t = np.asarray(observed, dtype=np.float64)
    ordered = np.sort(np.asarray(null_max, dtype=np.float64))
    exceed = ordered.shape[0] - np.searchsorted(ordered, tie_threshold(t), side="left")
    if exact:
        return np.maximum(exceed, 1) / ordered.shape[0]
    return (1.0 + exceed) / (1.0 + ordered.shape[0])


def column_tests(test, X, y_idx: np.ndarray, n_classes: int,
                 block_elements: int = 1 << 20) -> tuple[np.ndarray, np.ndarray]:
    """p-values of a per-column ``test`` over blocks of columns, and the constant columns.

    Every test here treats the columns independently, so running it on dense blocks of about
    ``block_elements`` entries gives the same values as on the whole matrix while a sparse X
    (CSR/CSC) is never densified beyond one block (8 MB by default). The F test of a sparse X
    needs no block at all: one pass of class sums over the stored values.

    Parameters
    ----------
    test : {"anova", "welch", "mannwhitney", "kruskal"}
    X : ndarray or scipy.sparse matrix of shape (n, m)
    y_idx : ndarray of shape (n,)
    n_classes : int
    block_elements : int, default=2**20

    Returns
    -------
    pvalues : ndarray of shape (m,)
    constant : ndarray of bool, shape (m,)
        Columns with a single value.
    """
    fns = {
        "anova": lambda B: anova_f_pvalues(B, y_idx, n_classes),
        "welch": lambda B: welch_t_pvalues(B, y_idx),
        "mannwhitney": lambda B: mann_whitney_pvalues(B, y_idx),
        "kruskal": lambda B: kruskal_pvalues(B, y_idx, n_classes),
    }
    if test not in fns:
        raise ValueError(f"test={test!r} is not one of {sorted(fns)}.")
    n, m = X.shape
    sparse = sp.issparse(X)
    if sparse and test == "anova":
        return _sparse_anova(X, y_idx, n_classes)
    if sparse:
        X = sp.csc_array(X)
    step = max(1, block_elements // max(1, n))
    pvalues = np.empty(m)
    constant = np.empty(m, dtype=bool)
    for j0 in range(0, m, step):
        block = X[:, j0:j0 + step]
        block = block.toarray() if sparse else np.asarray(block)
        pvalues[j0:j0 + step] = fns[test](block)
        constant[j0:j0 + step] = np.ptp(block, axis=0) == 0
    return pvalues, constant


def _sparse_anova(X, y_idx: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """The F test of a CSR/CSC matrix from one pass of class sums (the Fisher score's kernel:
    no dense block, no format conversion), and the constant columns (no scatter at all)."""
    from sparsefs._kernels.fisher_score import fisher_ratios

    counts = _class_counts(y_idx, n_classes)
    n = int(counts.sum())
    if n <= n_classes:
        raise ValueError(f"the F test needs more samples ({n}) than classes ({n_classes}).")
    scores, between, within = fisher_ratios(X, y_idx, n_classes)
    with np.errstate(over="ignore", invalid="ignore"):
        f = scores * ((n - n_classes) / (n_classes - 1))
    p = special.fdtrc(n_classes - 1, n - n_classes, f)
    constant = (between == 0) & (within == 0)
    p[constant] = 1.0
    return p, constant


def _class_counts(y_idx: np.ndarray, n_classes: int) -> np.ndarray:
    counts = np.bincount(y_idx, minlength=n_classes)
    if counts.shape[0] != n_classes or (counts == 0).any():
        raise ValueError(f"every class 0..{n_classes - 1} needs a sample; counts {counts}.")
    return counts


def anova_f_pvalues(X: np.ndarray, y_idx: np.ndarray, n_classes: int) -> np.ndarray:
    r"""One-way ANOVA F-test p-values of every column.

    :math:`F_j = \frac{\mathrm{BSS}_j/(K-1)}{\mathrm{WSS}_j/(n-K)}`, p-value
    :math:`P(F_{K-1, n-K} \ge F_j)`. A column constant within every class and between classes
    (``0/0``) gets 1; constant within classes but not between them (``c/0``) gets 0.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    y_idx : ndarray of shape (n,)
        Class indices ``0..n_classes-1``.
    n_classes : int

    Returns
    -------
    ndarray of shape (m,)
    """
    X = np.asarray(X, dtype=np.float64)
    counts = _class_counts(y_idx, n_classes)
    n = X.shape[0]
    if n <= n_classes:
        raise ValueError(f"the F test needs more samples ({n}) than classes ({n_classes}).")
    # F is scale-invariant: columns scaled to max |x| = 1 (no overflow at 1e300)
    scale = np.abs(X).max(axis=0)
    X = X / np.where(scale > 0, scale, 1.0)
    onehot = np.zeros((n, n_classes))
    onehot[np.arange(n), y_idx] = 1.0
    means = onehot.T @ X / counts[:, None]
    resid = X - means[y_idx]
    within = np.einsum("ij,ij->j", resid, resid)
    between = counts @ (means - X.mean(axis=0)) ** 2
    within[within <= 1e-26 * n] = 0.0
    between[between <= 1e-26 * n] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        f = (between / (n_classes - 1)) / (within / (n - n_classes))
    p = stats.f.sf(f, n_classes - 1, n - n_classes)
    p[(within == 0) & (between == 0)] = 1.0
    p[(within == 0) & (between > 0)] = 0.0
    return p


def welch_t_pvalues(X: np.ndarray, y_idx: np.ndarray) -> np.ndarray:
    r"""Two-sided Welch t-test p-values of every column (two classes ``0`` and ``1``).

    :math:`t = (\bar x_1 - \bar x_0)/\sqrt{s_0^2/n_0 + s_1^2/n_1}` with
    Welch-Satterthwaite degrees of freedom
    :math:`\nu = (s_0^2/n_0 + s_1^2/n_1)^2 / \sum_c (s_c^2/n_c)^2/(n_c - 1)`
    (Welch, Biometrika 34, 1947). A column with no variance in either class gets 1 when the
    means agree and 0 otherwise.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    y_idx : ndarray of shape (n,)
        ``0`` or ``1``; each class needs at least two samples.

    Returns
    -------
    ndarray of shape (m,)
    """
    X = np.asarray(X, dtype=np.float64)
    counts = _class_counts(y_idx, 2)
    if counts.min() < 2:
        raise ValueError(f"Welch's t test needs >= 2 samples per class; got counts {counts}.")
    a, b = X[y_idx == 0], X[y_idx == 1]
    va = a.var(axis=0, ddof=1) / counts[0]
    vb = b.var(axis=0, ddof=1) / counts[1]
    diff = b.mean(axis=0) - a.mean(axis=0)
    se2 = va + vb
    with np.errstate(divide="ignore", invalid="ignore"):
        t = diff / np.sqrt(se2)
        df = se2**2 / (va**2 / (counts[0] - 1) + vb**2 / (counts[1] - 1))
    p = np.empty(X.shape[1])
    ok = se2 > 0
    p[ok] = 2.0 * stats.t.sf(np.abs(t[ok]), df[ok])
    p[~ok] = np.where(diff[~ok] == 0, 1.0, 0.0)
    return np.minimum(p, 1.0)


def _ranks_and_ties(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Average ranks of every column and the tie term :math:`\sum_g (t_g^3 - t_g)`.

    The tie term follows from :math:`\sum_i r_i^2 = n(n+1)(2n+1)/6 - \sum_g (t_g^3 - t_g)/12`
    for average ranks, so no per-column loop is needed.
    """
    n = X.shape[0]
    ranks = stats.rankdata(X, axis=0)
    ties = 12.0 * (n * (n + 1) * (2 * n + 1) / 6.0 - np.einsum("ij,ij->j", ranks, ranks))
    return ranks, np.maximum(np.rint(ties), 0.0)


def mann_whitney_pvalues(X: np.ndarray, y_idx: np.ndarray) -> np.ndarray:
    r"""Two-sided Wilcoxon-Mann-Whitney p-values of every column (normal approximation).

    :math:`U = R_1 - n_1(n_1+1)/2` (:math:`R_1` the rank sum of class 1, average ranks for
    ties), :math:`z = (|U - n_0 n_1/2| - 1/2)/\sigma_U` with the tie-corrected
    :math:`\sigma_U^2 = \frac{n_0 n_1}{12}\left(n + 1 - \frac{\sum_g (t_g^3 - t_g)}{n(n-1)}\right)`,
    :math:`p = 2\,\bar\Phi(z)` capped at 1 (Mann & Whitney, Ann. Math. Statist. 18, 1947). The
    approximation is what large omics tables need; for fewer than ~10 samples per class the
    exact distribution (or permutation p-values) is more accurate. A column with all values
    tied gets 1.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    y_idx : ndarray of shape (n,)
        ``0`` or ``1``.

    Returns
    -------
    ndarray of shape (m,)
    """
    X = np.asarray(X, dtype=np.float64)
    counts = _class_counts(y_idx, 2)
    n0, n1 = (float(c) for c in counts)
    n = n0 + n1
    ranks, ties = _ranks_and_ties(X)
    u = ranks[y_idx == 1].sum(axis=0) - n1 * (n1 + 1) / 2.0
    var = n0 * n1 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    p = np.ones(X.shape[1])
    ok = var > 0
    z = (np.abs(u[ok] - n0 * n1 / 2.0) - 0.5) / np.sqrt(var[ok])
    p[ok] = np.minimum(1.0, 2.0 * special.ndtr(-z))
    return p


def kruskal_pvalues(X: np.ndarray, y_idx: np.ndarray, n_classes: int) -> np.ndarray:
    r"""Kruskal-Wallis p-values of every column (chi-squared approximation, tie-corrected).

    :math:`H = \frac{12}{n(n+1)} \sum_c R_c^2/n_c - 3(n+1)`, divided by
    :math:`1 - \sum_g (t_g^3 - t_g)/(n^3 - n)`; :math:`p = P(\chi^2_{K-1} \ge H)` (Kruskal &
    Wallis, JASA 47, 1952). A column with all values tied gets 1.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    y_idx : ndarray of shape (n,)
    n_classes : int

    Returns
    -------
    ndarray of shape (m,)
    """
    X = np.asarray(X, dtype=np.float64)
    counts = _class_counts(y_idx, n_classes)
    n = float(X.shape[0])
    ranks, ties = _ranks_and_ties(X)
    onehot = np.zeros((X.shape[0], n_classes))
    onehot[np.arange(X.shape[0]), y_idx] = 1.0
    rank_sums = onehot.T @ ranks
    h = 12.0 / (n * (n + 1)) * np.sum(rank_sums**2 / counts[:, None], axis=0) - 3.0 * (n + 1)
    correction = 1.0 - ties / (n**3 - n)
    p = np.ones(X.shape[1])
    ok = correction > 1e-12
    p[ok] = stats.chi2.sf(np.maximum(h[ok], 0.0) / correction[ok], n_classes - 1)
    return p
