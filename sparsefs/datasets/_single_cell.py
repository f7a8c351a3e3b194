r"""Multi-donor single-cell counts with planted marker genes: :func:`make_multi_donor_counts`.

Written from the published descriptions of multi-sample single-cell simulations (Squair et al.,
Nat. Commun. 12:5692, 2021; Zimmerman, Espeland & Langefeld, Nat. Commun. 12:738, 2021; Crowell
et al., Nat. Commun. 11:6077, 2020) and the notes in ``specs/donors.md``; no code from splatter
or muscat (GPL) was read or used.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numba
import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_random_state

from sparsefs._kernels.threads import resolve_n_jobs, run_tasks

from ._loaders import Dataset
from ._synthetic import _check_int, _check_real

__all__ = ["MultiDonorCounts", "make_multi_donor_counts"]

@dataclass(frozen=True, slots=True, eq=False)
class MultiDonorCounts(Dataset):
    """The result of :func:`make_multi_donor_counts`: a :class:`Dataset` with donors and counts.

    The attributes below come beside :class:`Dataset`'s ``X``, ``y``, ``feature_names``,
    ``support``, ``name`` and ``description``.

    Attributes
    ----------
    counts : scipy.sparse.csr_matrix of shape (n_cells, n_genes), float32
        The raw counts (integers stored as float32, as scanpy keeps them).
    donors : ndarray of str, shape (n_cells,)
        The donor (sample) of every cell, ``"donor0"``, ``"donor1"``, ... (also
        ``Dataset.groups``: the harness keeps a donor out of training and test at once).
    markers : dict of str -> ndarray of bool, shape (n_genes,)
        For each group, the planted markers (higher in that group); disjoint masks.
    design : {"crossed", "nested"}
    gene_means : ndarray of shape (n_genes,)
        :math:`m_g`, the mean count of gene :math:`g` before donor offsets, marker shifts and
        library sizes (a cell of size factor 1 in a donor with offset 0 has NB mean
        :math:`m_g`).
    dispersions : ndarray of shape (n_genes,)
        :math:`\\phi_g`: the count's variance is :math:`\\mu + \\phi_g \\mu^2`.
    donor_groups : dict of str -> list of str
        The groups each donor has cells of (all of them when crossed, one when nested).
    """

    counts: Any = None
    donors: np.ndarray | None = None
    markers: dict[str, np.ndarray] | None = None
    design: str = ""
    gene_means: np.ndarray | None = None
    dispersions: np.ndarray | None = None
    donor_groups: dict[str, list[str]] | None = None

    def __post_init__(self) -> None:
        Dataset.__post_init__(self)
        n = self.n_samples
        donors = np.asarray(self.donors)
        if donors.shape != (n,):
            raise ValueError(f"donors must have shape ({n},); got {donors.shape}.")
        object.__setattr__(self, "donors", donors)
        if self.counts is None or self.counts.shape != self.X.shape:
            raise ValueError("counts must have the shape of X.")

    def to_anndata(self):
        """An :class:`anndata.AnnData` as a scanpy user would hold these cells.

        ``X`` and ``raw`` the log1p-normalised values (``raw`` with the gene names, as
        ``adata.raw = adata`` after ``sc.pp.log1p``), ``layers["counts"]`` the counts,
        ``obs["group"]`` and ``obs["donor"]`` categorical, ``var["marker_of"]`` the group a
        planted marker belongs to (``"none"`` otherwise), ``uns["log1p"] = {"base": None}``
        (what ``sc.pp.log1p`` records).

        Returns
        -------
        anndata.AnnData
        """
        import anndata as ad
        import pandas as pd

        groups = list(self.markers)
        donors = sorted(set(self.donors.tolist()), key=_natural_key)
        obs = pd.DataFrame(
            {
                "group": pd.Categorical(self.y, categories=groups),
                "donor": pd.Categorical(self.donors, categories=donors),
            },
            index=pd.Index([f"cell{i}" for i in range(self.n_samples)]),
        )
        marker_of = np.full(self.n_features, "none", dtype=object)
        for g, mask in self.markers.items():
            marker_of[mask] = g
        var = pd.DataFrame(
            {"marker_of": pd.Categorical(marker_of, categories=[*groups, "none"])},
            index=pd.Index(self.feature_names.astype(object)),
        )
        adata = ad.AnnData(X=self.X.copy(), obs=obs, var=var)
        adata.layers["counts"] = self.counts.copy()
        adata.uns["log1p"] = {"base": None}
        adata.raw = adata
        return adata

    def __repr__(self) -> str:
        return (
            f"MultiDonorCounts(name={self.name!r}, X={type(self.X).__name__}{self.X.shape} "
            f"{self.X.dtype}, design={self.design!r}, donors={len(set(self.donors.tolist()))}, "
            f"groups={list(self.markers)}, markers={int(self.support.sum())})"
        )


def _natural_key(name: str) -> tuple[str, int]:
    stem = name.rstrip("0123456789")
    return stem, int(name[len(stem):] or -1)


def _check_range(name: str, value: Any, low: float, integer: bool) -> tuple[float, float]:
    """A scalar or a ``(low, high)`` pair, each ``>= low``, as ``(lo, hi)``."""
    kind = Integral if integer else Real
    if isinstance(value, kind) and not isinstance(value, bool):
        pair = (value, value)
    else:
        try:
            pair = tuple(value)
        except TypeError:
            raise TypeError(
                f"{name} must be a number or a (low, high) pair; got {value!r}.") from None
        if len(pair) != 2:
            raise ValueError(f"{name} must be a number or a (low, high) pair; got {value!r}.")
    out = []
    for v in pair:
        if isinstance(v, bool) or not isinstance(v, kind):
            what = "an int" if integer else "a real number"
            raise TypeError(f"{name} must hold {what}; got {v!r}.")
        if not math.isfinite(float(v)) or v < low:
            raise ValueError(f"{name} must be >= {low} (and finite); got {value!r}.")
        out.append(v)
    if out[0] > out[1]:
        raise ValueError(f"{name}=(low, high) needs low <= high; got {value!r}.")
    return out[0], out[1]


def make_multi_donor_counts(
    n_genes: int = 2000,
    n_groups: int = 4,
    design: str = "crossed",
    n_donors: int = 8,
    cells_per_donor: int | tuple[int, int] = (50, 500),
    n_markers: int = 20,
    log_fc: float = 1.0,
    donor_sd: float = 0.5,
    dispersion: float | tuple[float, float] = (0.1, 1.0),
    random_state: int | np.random.RandomState | None = None,
    *,
    donor_correlation: float = 0.5,
    mean_log: float = -0.5,
    sd_log: float = 1.2,
    library_sd: float = 0.3,
    target_sum: float = 1e4,
    n_jobs: int | None = None,
) -> MultiDonorCounts:
    r"""Single-cell counts from several donors: negative binomial, donor random effects, markers.

    The simulation of ``specs/donors.md`` (after Squair et al. 2021, Zimmerman et al. 2021 and
    Crowell et al. 2020), for testing marker selection and its error control when cells of one
    donor are not independent. In order:

    1. **Genes.** Mean counts :math:`m_g = \exp(\ell_g)`, :math:`\ell_g \sim N(\text{mean\_log},
       \text{sd\_log}^2)` (log-normal), and NB dispersions :math:`\phi_g \sim
       U(\text{dispersion})`.
    2. **Markers.** For every group, ``n_markers`` genes (disjoint between groups) drawn among the
       genes with :math:`m_g` at or above the median (markers are genes a cell type expresses);
       in the cells of their group their mean is multiplied by :math:`2^{\text{log\_fc}}`
       (``log_fc`` is a log2 fold change, the scale of scanpy's ``logfoldchanges``).
    3. **Donors and cells.** Donor :math:`d` has :math:`n_d \sim U\{\text{cells\_per\_donor}\}`
       cells. ``design="crossed"`` (groups are cell types): every donor has cells of every
       group, one of each and the rest drawn uniformly among the groups. ``design="nested"``
       (groups are conditions): donor :math:`d` belongs to group :math:`d \bmod K` (donors split
       evenly over the groups) and all its cells carry that label.
    4. **Donor effects.** Each donor shifts each gene's log-mean by a random offset. In the
       nested design, :math:`o_{dg} \sim N(0, \sigma_d^2)` for all of the donor's cells. In
       the crossed design the offset of donor :math:`d`'s cells of group :math:`t` is
       :math:`o_{dtg} = \sigma_d(\sqrt\rho\, a_{dg} + \sqrt{1-\rho}\, b_{dtg})`, :math:`a, b`
       independent standard normals: again :math:`N(0, \sigma_d^2)`, shared between a donor's
       cell types with correlation :math:`\rho` = ``donor_correlation`` (donor effects differ
       between cell types, which is what makes cell-level marker tests anti-conservative in a
       crossed design).
    5. **Counts.** Cell :math:`i` of donor :math:`d` and group :math:`t` has a size factor
       :math:`s_i = \exp(N(-\sigma_L^2/2, \sigma_L^2))` (:math:`E s_i = 1`,
       :math:`\sigma_L` = ``library_sd``) and
       :math:`c_{ig} \sim NB(\mu_{ig}, \phi_g)`, :math:`\mu_{ig} = s_i\, m_g\, e^{o_{d(t)g}}
       2^{\text{log\_fc}\,[g \text{ marker of } t]}` (mean :math:`\mu`, variance
       :math:`\mu + \phi_g\mu^2`: the gamma-Poisson mixture :math:`c \sim
       \mathrm{Poisson}(\lambda)`, :math:`\lambda \sim \Gamma(1/\phi_g, \phi_g\mu_{ig})`),
       drawn by inverting its CDF with one uniform per entry (a compiled loop that writes the
       nonzero counts straight into CSR storage; never a dense cells x genes array).
    6. **Normalisation**, as scanpy users do (``sc.pp.normalize_total(target_sum=1e4)`` then
       ``sc.pp.log1p``): :math:`x_{ig} = \log(1 + 10^4 c_{ig} / \sum_h c_{ih})`.

    Under the null genes (no marker), cell-level tests see the donor offsets as a group effect
    whenever groups and donors are not balanced (always in the nested design; through the
    donor-by-type offsets in the crossed one): their false discoveries grow with
    :math:`\sigma_d` while donor-level procedures hold their level.

    Parameters
    ----------
    n_genes : int, default=2000
    n_groups : int, default=4
        :math:`K \ge 2`: cell types (crossed) or conditions (nested).
    design : {"crossed", "nested"}, default="crossed"
    n_donors : int, default=8
        At least 2 (crossed) or ``n_groups`` (nested; at least one donor per group).
    cells_per_donor : int or (int, int), default=(50, 500)
        Cells of each donor, uniform between the two bounds (inclusive). Crossed: at least
        ``n_groups`` (one cell of every type).
    n_markers : int, default=20
        Planted markers *per group* (``n_markers * n_groups`` genes in ``support``); 0 gives a
        pure null.
    log_fc : float, default=1.0
        log2 fold change of a marker in its group; 0 gives a pure null (``markers`` then still
        marks the chosen genes, which are not differentially expressed, and ``support`` is
        empty).
    donor_sd : float, default=0.5
        :math:`\sigma_d`, the sd of a donor's offset on a gene's natural-log mean.
    dispersion : float or (float, float), default=(0.1, 1.0)
        :math:`\phi_g`, fixed or uniform between the bounds (0: Poisson).
    random_state : int, RandomState instance or None, default=None
    donor_correlation : float in [0, 1], default=0.5
        :math:`\rho` (crossed design): the correlation of a donor's offsets between its cell
        types (1: one offset per donor and gene).
    mean_log, sd_log : float, default=-0.5, 1.2
        Location and scale of :math:`\log m_g` (the defaults give about 2 500 counts per cell
        over 2 000 genes; lower ``mean_log`` for sparser data at 20 000 genes).
    library_sd : float, default=0.3
        :math:`\sigma_L`, the sd of the log size factors.
    target_sum : float, default=1e4
        The normalised library size.
    n_jobs : int or None, default=None
        Threads drawing the donors' cells (``None``: 1, unless inside
        ``joblib.parallel_config(n_jobs=k)``; ``-1``: all CPUs; docs/contract.md, "n_jobs").
        The data do not depend on it (each donor has its own random stream).

    Returns
    -------
    MultiDonorCounts
        A :class:`~sparsefs.datasets.Dataset` with ``X`` (CSR float32, log1p-normalised),
        ``y`` (group labels: ``"type0"``, ... when crossed, ``"condition0"``, ... when nested),
        ``support`` (the union of the markers; empty when ``log_fc=0``), ``feature_names``
        (``gene0``, ...), and ``counts``, ``donors``, ``markers``, ``design``, ``gene_means``,
        ``dispersions``, ``donor_groups``; ``to_anndata()`` for scanpy. Cells are in donor
        order; within a donor the groups are interleaved at random.

    References
    ----------
    J. W. Squair et al., "Confronting false discoveries in single-cell differential
    expression", Nat. Commun. 12:5692, 2021.
    K. D. Zimmerman, M. A. Espeland and C. D. Langefeld, "A practical solution to
    pseudoreplication bias in single-cell studies", Nat. Commun. 12:738, 2021.
    H. L. Crowell et al., "muscat detects subpopulation-specific state transitions from
    multi-sample multi-condition single-cell transcriptomics data", Nat. Commun. 11:6077,
    2020.

    Examples
    --------
    >>> from sparsefs.datasets import make_multi_donor_counts
    >>> data = make_multi_donor_counts(n_genes=300, n_groups=3, n_donors=4,
    ...                                cells_per_donor=(40, 60), n_markers=5, random_state=0)
    >>> data.X.format, data.X.dtype, int(data.support.sum()), sorted(data.markers)
    ('csr', dtype('float32'), 15, ['type0', 'type1', 'type2'])
    >>> len(set(data.donors))
    4
    """
    n_genes = _check_int("n_genes", n_genes, 1)
    n_groups = _check_int("n_groups", n_groups, 2)
    if design not in ("crossed", "nested"):
        raise ValueError(f"design must be 'crossed' or 'nested'; got {design!r}.")
    crossed = design == "crossed"
    n_donors = _check_int("n_donors", n_donors, 2 if crossed else n_groups)
    low, high = _check_range("cells_per_donor", cells_per_donor, 1, integer=True)
    if crossed and low < n_groups:
        raise ValueError(
            f"cells_per_donor={cells_per_donor!r}: in the crossed design every donor has a cell "
            f"of each of the {n_groups} groups; give at least {n_groups} cells per donor."
        )
    n_markers = _check_int("n_markers", n_markers, 0)
    if n_markers * n_groups > (n_genes + 1) // 2:
        raise ValueError(
            f"n_markers * n_groups = {n_markers * n_groups} markers do not fit among the "
            f"{(n_genes + 1) // 2} genes expressed at or above the median of {n_genes}."
        )
    log_fc = _check_real("log_fc", log_fc)
    donor_sd = _check_real("donor_sd", donor_sd, low=0.0)
    phi_low, phi_high = _check_range("dispersion", dispersion, 0.0, integer=False)
    rho = _check_real("donor_correlation", donor_correlation, low=0.0, high=1.0)
    mean_log = _check_real("mean_log", mean_log)
    sd_log = _check_real("sd_log", sd_log, low=0.0)
    library_sd = _check_real("library_sd", library_sd, low=0.0)
    target_sum = _check_real("target_sum", target_sum, low=0.0, closed=False)
    rng = check_random_state(random_state)
    label = "type" if crossed else "condition"
    groups = [f"{label}{t}" for t in range(n_groups)]

    # 1-2. genes and markers
    gene_means = np.exp(mean_log + sd_log * rng.standard_normal(n_genes))
    phis = rng.uniform(phi_low, phi_high, n_genes) if phi_high > phi_low else np.full(
        n_genes, float(phi_low))
    expressed = np.flatnonzero(gene_means >= np.median(gene_means))
    chosen = rng.choice(expressed, size=n_markers * n_groups, replace=False)
    markers = {}
    for t, g in enumerate(groups):
        mask = np.zeros(n_genes, dtype=bool)
        mask[chosen[t * n_markers:(t + 1) * n_markers]] = True
        markers[g] = mask
    fold = np.ones((n_groups, n_genes))
    for t, g in enumerate(groups):
        fold[t, markers[g]] = 2.0**log_fc

    # 3-4. donors, their cells' groups, their offsets
    sizes = rng.randint(low, high + 1, size=n_donors)
    if crossed:
        shared = rng.standard_normal((n_donors, 1, n_genes))
        own = rng.standard_normal((n_donors, n_groups, n_genes))
        offsets = donor_sd * (math.sqrt(rho) * shared + math.sqrt(1.0 - rho) * own)
    else:
        offsets = donor_sd * rng.standard_normal((n_donors, 1, n_genes))
    cell_groups = []
    for d in range(n_donors):
        if crossed:
            extra = rng.randint(0, n_groups, size=sizes[d] - n_groups)
            cell_groups.append(rng.permutation(np.concatenate([np.arange(n_groups), extra])))
        else:
            cell_groups.append(np.full(sizes[d], d % n_groups))
    seeds = rng.randint(np.iinfo(np.int32).max, size=n_donors)

    # 5-6. counts, donor by donor: each donor has its own random stream (thread-safe, and the
    # data do not depend on n_jobs), drawn by a compiled loop straight into CSR storage
    def donor_block(d):
        # mean per (group, gene) in this donor: m_g e^{o} 2^{lfc [marker]} (nested: one offset
        # row broadcast over the groups; only the donor's own group occurs)
        base = np.ascontiguousarray(gene_means[None, :] * np.exp(offsets[d]) * fold)
        t_idx = np.ascontiguousarray(cell_groups[d], dtype=np.intp)
        return _donor_counts(np.random.default_rng(int(seeds[d])), t_idx, base, phis,
                             library_sd)

    n_threads = resolve_n_jobs(n_jobs, n_tasks=n_donors)
    blocks = [None] * n_donors

    def fill(d):
        blocks[d] = donor_block(d)

    run_tasks(fill, n_donors, n_threads)
    counts = sp.vstack(blocks, format="csr")
    totals = np.asarray(counts.sum(axis=1), dtype=np.float64).ravel()
    scale = np.divide(target_sum, totals, out=np.zeros_like(totals), where=totals > 0)
    X = counts.copy()
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    X.data = np.log1p(counts.data.astype(np.float64) * scale[rows]).astype(np.float32)

    y = np.asarray([groups[t] for t in np.concatenate(cell_groups)], dtype=object).astype(str)
    donors = np.repeat([f"donor{d}" for d in range(n_donors)], sizes).astype(str)
    support = np.zeros(n_genes, dtype=bool)
    if log_fc != 0.0:
        for mask in markers.values():
            support |= mask
    if crossed:
        donor_groups = {f"donor{d}": list(groups) for d in range(n_donors)}
    else:
        donor_groups = {f"donor{d}": [groups[d % n_groups]] for d in range(n_donors)}
    description = (
        f"Multi-donor single-cell counts ({design}): {n_donors} donors x {low}-{high} cells, "
        f"{n_groups} groups, {n_genes} genes; NB counts (dispersion {phi_low:g}-{phi_high:g}), "
        f"log-normal gene means (mean_log={mean_log:g}, sd_log={sd_log:g}), donor offsets "
        f"N(0, {donor_sd:g}^2) on the log-mean"
        + (f" (correlation {rho:g} between a donor's types)" if crossed else "")
        + f", {n_markers} markers per group at log2 fold change {log_fc:g}; X = "
        f"log1p(counts / library size * {target_sum:g})."
    )
    return MultiDonorCounts(
        X=X,
        y=y,
        feature_names=np.array([f"gene{j}" for j in range(n_genes)]),
        support=support,
        name=f"multi_donor_counts_{design}",
        description=description,
        counts=counts,
        donors=donors,
        groups=donors,
        markers=markers,
        design=design,
        gene_means=gene_means,
        dispersions=phis,
        donor_groups=donor_groups,
    )


#: cells whose uniforms are drawn at once (a block of ``_CHUNK x n_genes`` float64)
_CHUNK = 64
#: ``log P(0)`` below which a count is drawn as a gamma-Poisson mixture (``P(0)`` underflows)
_LOG_P0_MIN = -700.0


@numba.njit(cache=True, nogil=True)
def _nb_csr_block(u, t_idx, sizes, base, phis):
    """NB counts of a block of cells by inversion of the CDF, as CSR arrays.

    Cell ``i`` of group ``t_idx[i]`` and size factor ``sizes[i]`` has counts NB(mean
    :math:`\\mu = s_i` ``base[t, g]``, dispersion :math:`\\phi` = ``phis[g]``), each from its
    uniform ``u[i, g]``: :math:`P(0) = (1 + \\phi\\mu)^{-1/\\phi}`,
    :math:`P(k+1)/P(k) = \\frac{k + r}{k + 1}\\frac{\\mu}{r + \\mu}`, :math:`r = 1/\\phi`
    (``exp(-mu)`` and ``mu/(k+1)`` for Poisson). Most entries are 0 and cost one comparison:
    :math:`P(0) \\ge e^{-\\mu} \\ge 1 - \\mu`, so a uniform below :math:`1 - \\mu` is a
    zero. The walk takes about :math:`c` steps for a count :math:`c` (the total work is the
    total count). Where :math:`P(0)` would underflow the entry is stored as ``-1``, for the
    caller to draw.
    """
    n, p = u.shape
    capacity = max(16, n * p // 8)
    indices = np.empty(capacity, dtype=np.int32)
    data = np.empty(capacity, dtype=np.float32)
    indptr = np.zeros(n + 1, dtype=np.int64)
    t = 0
    for i in range(n):
        row = base[t_idx[i]]
        size = sizes[i]
        for g in range(p):
            mu = size * row[g]
            ug = u[i, g]
            if ug < 1.0 - mu or mu <= 0.0:
                continue
            phi = phis[g]
            if phi > 0.0:
                r = 1.0 / phi
                log_p0 = -r * np.log1p(phi * mu)
                q = mu / (r + mu)
            else:
                r = 0.0
                log_p0 = -mu
                q = 0.0
            if log_p0 < _LOG_P0_MIN:
                c = -1.0
            else:
                pk = np.exp(log_p0)
                cdf = pk
                k = 0
                while ug > cdf:
                    pk *= ((k + r) * q if phi > 0.0 else mu) / (k + 1.0)
                    k += 1
                    cdf += pk
                    if pk < 1e-17 * cdf and k > mu:  # the rest of the tail is below rounding
                        break
                c = float(k)
            if c != 0.0:
                if t == capacity:
                    capacity *= 2
                    grown_i = np.empty(capacity, dtype=np.int32)
                    grown_d = np.empty(capacity, dtype=np.float32)
                    grown_i[:t] = indices[:t]
                    grown_d[:t] = data[:t]
                    indices, data = grown_i, grown_d
                indices[t] = g
                data[t] = c
                t += 1
        indptr[i + 1] = t
    return indptr, indices[:t].copy(), data[:t].copy()


def _donor_counts(gen: np.random.Generator, t_idx: np.ndarray, base: np.ndarray,
                  phis: np.ndarray, library_sd: float) -> sp.csr_matrix:
    """One donor's counts (CSR, float32) from its own stream ``gen``: size factors
    :math:`\\exp(N(-\\sigma_L^2/2, \\sigma_L^2))`, then blocks of ``_CHUNK`` cells
    (:func:`_nb_csr_block`); the rare entries whose ``P(0)`` underflows are drawn from the
    gamma-Poisson mixture."""
    n, p = t_idx.shape[0], base.shape[1]
    sizes = np.exp(library_sd * gen.standard_normal(n) - 0.5 * library_sd**2)
    blocks = []
    for a in range(0, n, _CHUNK):
        b = min(n, a + _CHUNK)
        u = gen.random((b - a, p))
        indptr, indices, data = _nb_csr_block(u, t_idx[a:b], sizes[a:b], base, phis)
        block = sp.csr_matrix((data, indices, indptr), shape=(b - a, p))
        late = np.flatnonzero(block.data < 0)
        if late.size:
            rows = np.repeat(np.arange(b - a), np.diff(block.indptr))[late]
            genes = block.indices[late]
            mu = sizes[a + rows] * base[t_idx[a + rows], genes]
            phi = phis[genes]
            lam = np.where(phi > 0, gen.gamma(1.0 / np.where(phi > 0, phi, 1.0), phi * mu), mu)
            block.data[late] = gen.poisson(lam)
            block.eliminate_zeros()
        blocks.append(block)
    return sp.vstack(blocks, format="csr") if len(blocks) > 1 else blocks[0]
