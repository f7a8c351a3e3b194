r"""Sample-aware (donor-level) statistics: the design, pseudobulk, donor-valid tests, relabelings.

Cells of one donor (sample, patient) share that donor's expression offsets, so the cells are not
independent observations and cell-level tests report p-values far too small (Squair et al., Nat.
Commun. 12:5692, 2021; Zimmerman, Espeland & Langefeld, Nat. Commun. 12:738, 2021). The donor is
the unit. Two designs need different procedures (``specs/donors.md``):

* **nested** (every donor belongs to one class: case vs control donors). Pseudobulk per donor
  (the mean of each gene over the donor's cells), then the one-way tests on donors; permutations
  move whole donors between the classes.
* **crossed** (donors have cells of several classes: cell types present in every donor).
  Blocking: pseudobulk per donor x class, then a two-way additive model with a donor effect
  (the randomised-block F test; per class, the t test of a contrast in that model, as limma
  with a donor factor; for two classes, the paired t test of the within-donor differences, as
  R scran's ``findMarkers(block=)`` combines within-block comparisons); permutations relabel
  the classes within each donor, moving all cells of a (donor, class) unit together.
* **neither** (one donor; or donors confounded with the classes, e.g. one donor per class): no
  donor-valid test exists.

Pure array functions (numpy / scipy); the estimators of :mod:`sparsefs.selection` and
:func:`sparsefs.tl.select` are the glue. References: Crowell et al., Nat. Commun. 11:6077, 2020
(pseudobulk); Lun, McCarthy & Marioni, F1000Research 5:2122, 2016 (scran, blocking); Fisher,
*The Design of Experiments*, 1935 (randomised blocks, permutation within blocks).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from scipy import special

from sparsefs._kernels.multiple_testing import column_tests
from sparsefs._kernels.stats import class_moments, sparse_class_sums

__all__ = [
    "DonorDesign",
    "Pseudobulk",
    "blocked_f_pvalues",
    "contrast_t_pvalues",
    "crossed_relabelings",
    "detect_design",
    "donor_halves",
    "group_vs_rest_pvalues",
    "nested_pvalues",
    "nested_relabelings",
    "paired_t_pvalues",
    "pseudobulk",
    "relabel_cells",
]


# --------------------------------------------------------------------------------------------
# the design
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DonorDesign:
    """Which donor-level analysis the labels allow, and why.

    Attributes
    ----------
    design : {"nested", "crossed", "neither"}
    reason : str
        One sentence: what was found (and, for ``"neither"``, why nothing is testable).
    table : ndarray of shape (n_donors, n_classes)
        Cells of every donor in every class.
    df : int
        Residual degrees of freedom of the donor-level F test (0 when ``"neither"``).
    n_relabelings : int
        Distinct donor-level relabelings of the classes (nested: assignments of the class sizes
        to donors; crossed: orderings of each donor's classes), capped at ``2**62``.
    notes : tuple of str
        Caveats (donors with a single class in a crossed design, classes with few donors).
    """

    design: str
    reason: str
    table: np.ndarray
    df: int
    n_relabelings: int
    notes: tuple[str, ...] = field(default=())

    @property
    def n_donors(self) -> int:
        """Donors with at least one cell."""
        return int(self.table.shape[0])

    @property
    def donors_per_class(self) -> np.ndarray:
        """How many donors have cells of each class."""
        return (self.table > 0).sum(axis=0)

    def describe(self) -> str:
        """``design: reason`` plus the notes, for logs and error messages."""
        text = f"{self.design}: {self.reason}"
        if self.notes:
            text += " " + " ".join(self.notes)
        return text


def design_table(y_idx: np.ndarray, g_idx: np.ndarray, n_classes: int,
                 n_groups: int) -> np.ndarray:
    """Cells per (donor, class): an ``n_groups x n_classes`` integer table."""
    flat = np.asarray(g_idx, dtype=np.intp) * n_classes + np.asarray(y_idx, dtype=np.intp)
    return np.bincount(flat, minlength=n_groups * n_classes).reshape(n_groups, n_classes)


_CAP = 1 << 62


def _capped_product(values) -> int:
    out = 1
    for v in values:
        out = min(_CAP, out * int(v))
    return out


def _connected(table: np.ndarray) -> bool:
    """Whether the classes are linked through shared donors (the bipartite donor-class graph
    of the donors with two or more classes has one component holding every class)."""
    present = table > 0
    multi = present[present.sum(axis=1) >= 2]
    n_classes = table.shape[1]
    if multi.shape[0] == 0:
        return False
    reached = np.zeros(n_classes, dtype=bool)
    reached[np.flatnonzero(multi[0])] = True
    changed = True
    while changed:
        rows = multi[(multi & reached[None, :]).any(axis=1)]
        new = rows.any(axis=0) | reached
        changed = bool((new != reached).any())
        reached = new
    return bool(reached.all())


def detect_design(table: np.ndarray) -> DonorDesign:
    r"""The design of a donor x class table of cell counts, and whether it is testable.

    * Every donor has cells of one class only: **nested**. Testable when every class has a donor
      and there are more donors than classes (the donor-level F test has
      :math:`D - K \ge 1` residual degrees of freedom).
    * Some donors have cells of two or more classes: **crossed** (blocking). Testable when the
      classes are linked through such donors (else class contrasts are confounded with donors)
      and the additive donor + class model on the (donor, class) pseudobulks has
      :math:`U - D - K + 1 \ge 1` residual degrees of freedom (:math:`U` the non-empty units).
      Donors with a single class carry no within-donor contrast; they are noted.
    * Otherwise **neither**: one donor, one donor per class, or classes never observed together
      in a donor.

    Parameters
    ----------
    table : ndarray of shape (n_donors, n_classes)
        Cells per donor and class (rows of empty donors are ignored).

    Returns
    -------
    DonorDesign
    """
    table = np.asarray(table)
    table = table[table.sum(axis=1) > 0]
    n_donors, n_classes = table.shape
    present = table > 0
    per_donor = present.sum(axis=1)
    per_class = present.sum(axis=0)
    missing = np.flatnonzero(per_class == 0)
    if missing.size:
        return DonorDesign("neither", f"class(es) {missing.tolist()} have no cell.", table, 0, 1)
    if n_donors < 2:
        return DonorDesign(
            "neither",
            "a single donor: there is no replication at the donor level, so no donor-valid "
            "test exists (cell-level p-values would treat the donor's cells as independent).",
            table, 0, 1)
    if (per_donor == 1).all():
        n_rel = _multinomial(per_class)
        df = n_donors - n_classes
        if df < 1:
            return DonorDesign(
                "neither",
                f"every donor belongs to one class (nested) but there are {n_donors} donors for "
                f"{n_classes} classes: donor and class are confounded (at least {n_classes + 1} "
                "donors are needed, two per class for a t test).",
                table, 0, n_rel)
        notes = ()
        if per_class.min() < 2:
            notes = (f"class(es) {np.flatnonzero(per_class < 2).tolist()} have a single donor: "
                     "their within-class variance comes from the other classes only.",)
        return DonorDesign(
            "nested",
            f"every donor belongs to one class ({n_donors} donors; "
            f"{', '.join(str(int(c)) for c in per_class)} per class): the donor is the unit.",
            table, df, n_rel, notes)
    n_units = int(present.sum())
    multi = per_donor >= 2
    if not _connected(table):
        return DonorDesign(
            "neither",
            "donors have cells of several classes, but some classes never share a donor with "
            "the others: their difference is confounded with the donors.",
            table, 0, 1)
    # additive model: one parameter per donor, K - 1 for the classes
    df = n_units - n_donors - n_classes + 1
    n_rel = _capped_product(math.factorial(int(c)) for c in per_donor)
    if df < 1:
        return DonorDesign(
            "neither",
            f"{int(multi.sum())} donor(s) with several classes leave no residual degree of "
            "freedom for the donor x class variation: add donors.",
            table, 0, n_rel)
    notes = []
    if not multi.all():
        notes.append(f"{int((~multi).sum())} donor(s) with cells of a single class carry no "
                     "within-donor contrast.")
    return DonorDesign(
        "crossed",
        f"{int(multi.sum())} of {n_donors} donors have cells of several classes "
        f"({n_units} donor x class units): donors are blocks, classes compared within them.",
        table, df, n_rel, tuple(notes))


def _multinomial(sizes) -> int:
    """:math:`(\\sum n_k)! / \\prod n_k!`, capped at ``2**62``."""
    out, total = 1, 0
    for n_k in sizes:
        for i in range(1, int(n_k) + 1):
            total += 1
            out = out * total // i
            if out >= _CAP:
                return _CAP
    return out


# --------------------------------------------------------------------------------------------
# pseudobulk
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pseudobulk:
    """Per (donor, class) unit: cells and the mean of every feature.

    Attributes
    ----------
    donor, klass : ndarray of int, shape (n_units,)
        The unit's donor and class indices.
    counts : ndarray of shape (n_units,)
        Cells in the unit.
    means : ndarray of shape (n_units, n_features)
        The mean of each feature over the unit's cells (float64).
    n_donors, n_classes : int
    total_ss : ndarray of shape (n_features,)
        Each feature's sum of squared deviations from its mean over all cells (float64; may
        under- or overflow for values beyond 1e+-150).
    constant : ndarray of bool, shape (n_features,)
        Features with a single value over the cells: no spread (to rounding) in the sums of
        squares *and* equal unit means (so values near 1e-200, whose squares underflow, are
        not mistaken for constants). Their p-values are 1 and they rank last.
    """

    donor: np.ndarray
    klass: np.ndarray
    counts: np.ndarray
    means: np.ndarray
    n_donors: int
    n_classes: int
    total_ss: np.ndarray
    constant: np.ndarray


def unit_index(y_idx: np.ndarray, g_idx: np.ndarray,
               n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The non-empty (donor, class) units and each cell's unit.

    Returns
    -------
    unit_of_cell : ndarray of intp, shape (n_cells,)
    donor, klass : ndarray of intp, shape (n_units,)
        Units ordered by donor, then class.
    """
    flat = np.asarray(g_idx, dtype=np.intp) * n_classes + np.asarray(y_idx, dtype=np.intp)
    units, unit_of_cell = np.unique(flat, return_inverse=True)
    return unit_of_cell.astype(np.intp), units // n_classes, units % n_classes


def pseudobulk(X, y_idx: np.ndarray, g_idx: np.ndarray, n_classes: int,
               n_groups: int) -> Pseudobulk:
    """Per-(donor, class) means of every feature: one pass of class-moment sums over the cells.

    The units are the classes of :func:`sparsefs._kernels.stats.class_moments` (one compiled
    pass over the stored values of a CSR/CSC matrix, float64 accumulation, nothing densified;
    dense X by the shifted sums), with ``n_units x n_features`` accumulators per thread.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_cells, n_features)
    y_idx : ndarray of int, shape (n_cells,)
        Class of each cell in ``0..n_classes-1``.
    g_idx : ndarray of int, shape (n_cells,)
        Donor of each cell in ``0..n_groups-1``.
    n_classes, n_groups : int

    Returns
    -------
    Pseudobulk
    """
    unit_of_cell, donor, klass = unit_index(y_idx, g_idx, n_classes)
    n_units = donor.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):  # squares of values near 1e300
        return _pseudobulk(X, unit_of_cell, donor, klass, n_units, n_groups, n_classes)


def _pseudobulk(X, unit_of_cell, donor, klass, n_units, n_groups, n_classes) -> Pseudobulk:
    if sp.issparse(X):
        # the sums only (class_moments would add per-unit scatter we do not need)
        sums, sq_total = sparse_class_sums(X, unit_of_cell, n_units)
        counts = np.bincount(unit_of_cell, minlength=n_units).astype(np.float64)
        means = sums / counts[:, None]
        grand = sums.sum(axis=0) / counts.sum()
        total = sq_total - counts.sum() * grand**2
        scale = sq_total
    else:
        mom = class_moments(X, unit_of_cell, n_units)
        counts, means = mom.counts, mom.means
        total = mom.within_ss + mom.between_ss
        scale = (counts[:, None] * means**2).sum(axis=0)
    # at rounding level of the sums of squares (the moment identity): exactly constant; a
    # total that overflows (values near 1e300) is not constant
    total[np.isfinite(total) & (total <= 1e-12 * scale)] = 0.0
    total[np.isnan(total)] = np.inf
    spread = means.max(axis=0) - means.min(axis=0)
    constant = (total == 0.0) & (spread <= 1e-12 * np.abs(means).max(axis=0))
    return Pseudobulk(donor, klass, counts, means, int(n_groups), int(n_classes), total,
                      constant)


# --------------------------------------------------------------------------------------------
# donor-level tests
# --------------------------------------------------------------------------------------------


def nested_pvalues(pb: Pseudobulk, test: str = "anova") -> np.ndarray:
    """p-values of a one-way test on the donors' pseudobulks (nested design).

    Each donor is one observation (its unit); ``test`` is ``"anova"`` (F, any number of
    classes) or ``"welch"`` (two classes), as :func:`~sparsefs._kernels.multiple_testing.
    column_tests` on the ``n_donors x n_features`` matrix of donor means.
    """
    if np.unique(pb.donor).shape[0] != pb.donor.shape[0]:
        raise ValueError("nested_pvalues needs one class per donor (a nested design).")
    pvals, _ = column_tests(test, pb.means, pb.klass, pb.n_classes)
    return pvals


def _donor_means(values: np.ndarray, d_idx: np.ndarray) -> np.ndarray:
    """Mean of the rows of ``values`` within each donor (rows sorted by donor, as the units of
    :func:`unit_index` are), one row per donor."""
    starts = np.flatnonzero(np.r_[True, np.diff(d_idx) != 0])
    sizes = np.diff(np.r_[starts, d_idx.shape[0]]).astype(np.float64)
    return np.add.reduceat(values, starts, axis=0) / sizes[:, None]


def _residualize_donors(pb: Pseudobulk) -> tuple[np.ndarray, np.ndarray]:
    """Unit means minus their donor's mean over its units (the donor-only model's residuals)."""
    if np.any(np.diff(pb.donor) < 0):
        raise ValueError("pseudobulk units must be sorted by donor (as unit_index gives them).")
    d_idx = np.unique(pb.donor, return_inverse=True)[1]
    return pb.means - _donor_means(pb.means, d_idx)[d_idx], d_idx


def blocked_f_pvalues(pb: Pseudobulk) -> tuple[np.ndarray, int]:
    r"""The randomised-block F test of the classes on (donor, class) pseudobulks (crossed).

    Two-way additive model :math:`M_{dc} = \mu + \alpha_d + \beta_c + \varepsilon_{dc}` on the
    non-empty units; :math:`H_0: \beta = 0`. With :math:`R_0` the residuals of the donor-only
    model and :math:`R_1` those of the additive model (least squares, missing units allowed),

    .. math::

        F = \frac{(\lVert R_0\rVert^2 - \lVert R_1\rVert^2)/(K - 1)}
                 {\lVert R_1\rVert^2 / (U - D - K + 1)},

    exact under Gaussian unit errors whatever the donor effects (they are blocked); the
    donor x class variation is the error term, so a class effect must exceed the donors'
    disagreement about it. Computed from :math:`R_0` projected on the class contrasts within
    donors (an orthonormal basis of at most :math:`K - 1` columns), the sum of squares of the
    class effect directly (no cancellation).

    Returns
    -------
    pvalues : ndarray of shape (n_features,)
    df : int
        Residual degrees of freedom.
    """
    resid, d_idx = _residualize_donors(pb)
    n_units = pb.means.shape[0]
    n_d = int(d_idx.max()) + 1
    C = np.zeros((n_units, pb.n_classes))
    C[np.arange(n_units), pb.klass] = 1.0
    # class dummies with the donor means removed, orthonormalised
    Cc = C - _donor_means(C, d_idx)[d_idx]
    U, s, _ = np.linalg.svd(Cc, full_matrices=False)
    rank = int(np.sum(s > 1e-10 * max(1.0, s.max(initial=0.0))))
    Q = U[:, :rank]
    df_between = rank
    df_within = n_units - n_d - rank
    if df_between < 1 or df_within < 1:
        raise ValueError(
            f"the block design leaves {df_between} class and {df_within} residual degrees of "
            "freedom; the blocked F test needs at least 1 of each.")
    ss_between, ss_within, total = _block_sums_of_squares(resid, Q)
    bad = ~(np.isfinite(ss_within) & np.isfinite(ss_between)) | (total < 1e-250)
    if bad.any():  # F is scale-invariant: columns scaled to max |x| = 1 (squares overflow)
        scale = np.abs(resid[:, bad]).max(axis=0)
        sub = resid[:, bad] / np.where(scale > 0, scale, 1.0)
        ss_between[bad], ss_within[bad], total[bad] = _block_sums_of_squares(sub, Q)
    ss_within[ss_within <= 1e-24 * np.maximum(total, 1e-300)] = 0.0
    ss_between[ss_between <= 1e-24 * np.maximum(total, 1e-300)] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        f = (ss_between / df_between) / (ss_within / df_within)
    p = special.fdtrc(df_between, df_within, f)
    p[(ss_within == 0) & (ss_between == 0)] = 1.0
    p[(ss_within == 0) & (ss_between > 0)] = 0.0
    return p, df_within


def _block_sums_of_squares(resid: np.ndarray, Q: np.ndarray):
    """Class and residual sums of squares of donor-centred unit means, and their total."""
    with np.errstate(over="ignore", invalid="ignore"):
        effect = Q.T @ resid
        ss_between = np.einsum("ij,ij->j", effect, effect)
        r1 = resid - Q @ effect
        ss_within = np.einsum("ij,ij->j", r1, r1)
        total = np.einsum("ij,ij->j", resid, resid)
    return ss_between, ss_within, total


def _within_donor_differences(pb: Pseudobulk, c: int) -> tuple[np.ndarray, np.ndarray]:
    """Per donor with class ``c`` and another class: the class-``c`` mean minus the mean of the
    donor's other cells (cell-weighted, scanpy's "rest" within the donor). Rows: those donors."""
    donors = np.unique(pb.donor)
    rows, diffs = [], []
    for d in donors:
        units = np.flatnonzero(pb.donor == d)
        own = units[pb.klass[units] == c]
        rest = units[pb.klass[units] != c]
        if own.size == 0 or rest.size == 0:
            continue
        w = pb.counts[rest]
        rest_mean = (w[:, None] * pb.means[rest]).sum(axis=0) / w.sum()
        diffs.append(pb.means[own[0]] - rest_mean)
        rows.append(d)
    if not diffs:
        return np.zeros(0, dtype=np.intp), np.zeros((0, pb.means.shape[1]))
    return np.asarray(rows), np.vstack(diffs)


def paired_t_pvalues(pb: Pseudobulk, c: int) -> tuple[np.ndarray, np.ndarray, int]:
    r"""Class ``c`` against the rest within each donor, combined over donors (crossed).

    :math:`\delta_d` = the class-:math:`c` pseudobulk minus the mean of donor :math:`d`'s other
    cells; :math:`t = \bar\delta / (s_\delta/\sqrt{D_c})` on the :math:`D_c` donors with both,
    two-sided, :math:`D_c - 1` degrees of freedom (the paired t test; exact under Gaussian
    :math:`\delta_d`, whatever the donor offsets).

    Returns
    -------
    pvalues : ndarray of shape (n_features,)
        NaN when fewer than 2 donors have class ``c`` and another class.
    t : ndarray of shape (n_features,)
        The statistic (positive: higher in class ``c``).
    n_donors : int
        :math:`D_c`.
    """
    _, diffs = _within_donor_differences(pb, c)
    k = diffs.shape[0]
    p = pb.means.shape[1]
    if k < 2:
        return np.full(p, np.nan), np.full(p, np.nan), k
    mean = diffs.mean(axis=0)
    sd = diffs.std(axis=0, ddof=1)
    se = sd / math.sqrt(k)
    scale = np.maximum(np.abs(diffs).max(axis=0), 1e-300)
    zero_sd = sd <= 1e-12 * scale
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(zero_sd, 0.0, mean / se)
    pvals = 2.0 * special.stdtr(k - 1, -np.abs(t))
    # no spread across donors: identical differences; p = 1 when they are 0, else 0
    zero_mean = np.abs(mean) <= 1e-12 * scale
    pvals[zero_sd] = np.where(zero_mean[zero_sd], 1.0, 0.0)
    t[zero_sd & ~zero_mean] = np.sign(mean[zero_sd & ~zero_mean]) * np.inf
    return np.minimum(pvals, 1.0), t, k


def contrast_t_pvalues(pb: Pseudobulk, design: str) -> tuple[np.ndarray, np.ndarray, int]:
    r"""Every class against the average of the others, in the donor-level linear model.

    The model whose F test is the global test: nested, the one-way model on the donors'
    pseudobulks, :math:`M_d = \mu_{c(d)} + \varepsilon_d`; crossed, the additive model on the
    (donor, class) units, :math:`M_{dc} = \alpha_d + \beta_c + \varepsilon_{dc}`. Least squares
    for all features at once (the design is shared), the residual variance
    :math:`\hat\sigma^2 = \mathrm{RSS}/\nu` pooled over all classes (:math:`\nu = D - K` nested,
    :math:`U - D - K + 1` crossed), and for class :math:`t` the contrast
    :math:`\psi = \beta_t - \frac{1}{K-1}\sum_{s \ne t} \beta_s` (estimable: it sums to 0):
    :math:`T = \hat\psi / \sqrt{\hat\sigma^2 c^\top (Z^\top Z)^{+} c}`, two-sided,
    :math:`\nu` degrees of freedom. Exact under Gaussian, homoscedastic errors; as limma's
    contrasts on a design with a donor factor, the shared residual variance gives more
    degrees of freedom than a per-class test (for two classes with complete blocks this is the
    paired t test; nested, the pooled two-sample t test).

    Returns
    -------
    pvalues : ndarray of shape (n_classes, n_features)
    t : ndarray of shape (n_classes, n_features)
        Positive: higher in the class.
    df : int
    """
    if design not in ("nested", "crossed"):
        raise ValueError(f"design={design!r}: no donor-level test (nested or crossed only).")
    n_units, p = pb.means.shape
    K = pb.n_classes
    C = np.zeros((n_units, K))
    C[np.arange(n_units), pb.klass] = 1.0
    if design == "crossed":
        d_idx = np.unique(pb.donor, return_inverse=True)[1]
        D = np.zeros((n_units, int(d_idx.max()) + 1))
        D[np.arange(n_units), d_idx] = 1.0
        Z = np.hstack([D, C])
        offset = D.shape[1]
    else:
        if np.unique(pb.donor).shape[0] != n_units:
            raise ValueError("a nested design needs one unit per donor.")
        Z, offset = C, 0
    U_, sv, Vt = np.linalg.svd(Z, full_matrices=False)
    keep = sv > 1e-10 * sv.max()
    rank = int(keep.sum())
    df = n_units - rank
    if df < 1:
        raise ValueError(f"the donor-level model leaves {df} residual degrees of freedom.")
    pinv = (Vt[keep].T / sv[keep]) @ U_[:, keep].T  # (Z'Z)^+ Z'
    gram = (Vt[keep].T / sv[keep] ** 2) @ Vt[keep]  # (Z'Z)^+
    scale = np.abs(pb.means).max(axis=0)
    scale = np.where((scale > 0) & np.isfinite(scale), scale, 1.0)
    M = pb.means / scale  # t is scale-invariant per feature: no overflow of the squares
    coef = pinv @ M
    resid = M - Z @ coef
    s2 = np.einsum("ij,ij->j", resid, resid) / df
    tiny = 1e-24 * np.maximum(np.einsum("ij,ij->j", M, M), 1e-300)
    s2[s2 <= tiny / df] = 0.0
    pvals = np.empty((K, p))
    tstat = np.empty((K, p))
    for t in range(K):
        c = np.zeros(Z.shape[1])
        c[offset:] = -1.0 / (K - 1)
        c[offset + t] = 1.0
        est = c @ coef
        var = s2 * float(c @ gram @ c)
        with np.errstate(divide="ignore", invalid="ignore"):
            tt = np.where(var > 0, est / np.sqrt(var), 0.0)
        pv = 2.0 * special.stdtr(df, -np.abs(tt))
        flat = var <= 0  # no residual variation: p = 0 for a difference, 1 for none
        zero = np.abs(est) <= 1e-12
        pv[flat] = np.where(zero[flat], 1.0, 0.0)
        tt[flat & ~zero] = np.sign(est[flat & ~zero]) * np.inf
        pvals[t] = np.minimum(pv, 1.0)
        tstat[t] = tt
    return pvals, tstat, df


def group_vs_rest_pvalues(pb: Pseudobulk, design: str) -> np.ndarray:
    """Donor-level p-values of every class against the rest, ``n_classes x n_features``:
    :func:`contrast_t_pvalues` (the class against the average of the other classes in the
    donor-level model of the design)."""
    return contrast_t_pvalues(pb, design)[0]


# --------------------------------------------------------------------------------------------
# donor-level relabelings (permutations) and resampling
# --------------------------------------------------------------------------------------------


def _multiset_permutations(labels: np.ndarray):
    """Every distinct ordering of a multiset of labels (lexicographic)."""
    values, counts = np.unique(labels, return_counts=True)
    n = int(counts.sum())

    def rec(pos_free, k):
        if k == values.shape[0]:
            yield []
            return
        for chosen in itertools.combinations(pos_free, int(counts[k])):
            rest = [q for q in pos_free if q not in chosen]
            for tail in rec(rest, k + 1):
                yield [(chosen, values[k]), *tail]

    for assignment in rec(list(range(n)), 0):
        out = np.empty(n, dtype=labels.dtype)
        for positions, value in assignment:
            out[list(positions)] = value
        yield out


def nested_relabelings(class_of_donor: np.ndarray, n_permutations: int,
                       rng: np.random.RandomState) -> tuple[np.ndarray, bool]:
    """Class labels of the donors under relabelings that move whole donors (nested design).

    When the distinct assignments of the class sizes to the donors number at most
    ``n_permutations`` (e.g. 70 for 4 + 4 donors), all of them, the observed one included
    (``exact=True``): the permutation p-value ``#{T_b >= T} / N`` is then exact, its smallest
    value ``1/N``. Otherwise ``n_permutations`` uniform random permutations of the donors'
    labels (``exact=False``; the p-value is ``(1 + #{T_b >= T}) / (1 + B)``).

    Returns
    -------
    labels : ndarray of shape (n_relabelings, n_donors)
    exact : bool
    """
    class_of_donor = np.asarray(class_of_donor)
    _, sizes = np.unique(class_of_donor, return_counts=True)
    if _multinomial(sizes) <= n_permutations:
        return np.vstack(list(_multiset_permutations(class_of_donor))), True
    out = np.empty((n_permutations, class_of_donor.shape[0]), dtype=class_of_donor.dtype)
    for b in range(n_permutations):
        out[b] = class_of_donor[rng.permutation(class_of_donor.shape[0])]
    return out, False


def crossed_relabelings(pb_donor: np.ndarray, pb_class: np.ndarray, n_permutations: int,
                        rng: np.random.RandomState) -> tuple[np.ndarray, bool]:
    """New class labels of the (donor, class) units, permuted within each donor (crossed).

    Each donor's units swap their class labels (all cells of a unit move together). When the
    product of the donors' :math:`|C_d|!` is at most ``n_permutations``, all relabelings
    (``exact=True``, the identity included); else ``n_permutations`` random ones.

    Returns
    -------
    labels : ndarray of shape (n_relabelings, n_units)
        The class each unit gets.
    exact : bool
    """
    donors = [np.flatnonzero(pb_donor == d) for d in np.unique(pb_donor)]
    total = _capped_product(math.factorial(u.shape[0]) for u in donors)
    if total <= n_permutations:
        rows = []
        for combo in itertools.product(*[itertools.permutations(u.tolist()) for u in donors]):
            new = np.empty(pb_class.shape[0], dtype=pb_class.dtype)
            for units, order in zip(donors, combo):
                new[units] = pb_class[list(order)]
            rows.append(new)
        return np.vstack(rows), True
    out = np.empty((n_permutations, pb_class.shape[0]), dtype=pb_class.dtype)
    for b in range(n_permutations):
        for units in donors:
            out[b, units] = pb_class[units[rng.permutation(units.shape[0])]]
    return out, False


def relabel_cells(unit_of_cell: np.ndarray, unit_labels: np.ndarray) -> np.ndarray:
    """Cell labels from unit labels: ``unit_labels[:, unit_of_cell]`` (one row per relabeling)."""
    return np.asarray(unit_labels)[..., unit_of_cell]


def donor_halves(class_of_donor: np.ndarray | None, n_donors: int, n_pairs: int,
                 rng: np.random.RandomState) -> np.ndarray:
    """Complementary pairs of halves of the donor set (Shah & Samworth's pairs, donors as the
    units), stratified by ``class_of_donor`` when given (nested design).

    Returns
    -------
    ndarray of shape (2 * n_pairs, n_donors // 2)
        Donor indices; rows ``2b`` and ``2b + 1`` disjoint.
    """
    from sparsefs._kernels.stability import complementary_pairs

    return complementary_pairs(n_donors, n_pairs, rng, class_of_donor)
