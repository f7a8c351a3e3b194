"""Chiaretti et al.'s adult ALL microarray with its clinical covariates, as outcome targets.

The worked example of continuous and survival targets (``docs/outcomes.md``): the 128 x 12625
expression matrix ``ALL_Chiaretti.mat`` (RMA log2, HG-U95Av2) with the phenotype table
``ALL_Chiaretti_pheno.csv`` (Bioconductor data package ``ALL``), both read locally from
``$SPARSEFS_DATA`` (never downloaded).
"""

from __future__ import annotations

import numpy as np

from sparsefs.datasets._loaders import Dataset, load
from sparsefs.datasets._uci import _file

__all__ = ["load_chiaretti"]

_ENDPOINTS = ("relapse", "age", "bt")


def _dates(values) -> np.ndarray:
    import pandas as pd

    return pd.to_datetime(values, format="%m/%d/%Y", errors="coerce").to_numpy()


def load_chiaretti(endpoint: str = "relapse") -> Dataset:
    """The ALL data set of Chiaretti et al. (Blood 103(7), 2004) with a clinical target.

    Parameters
    ----------
    endpoint : {"relapse", "age", "bt"}, default="relapse"
        * ``"relapse"``: **relapse-free time**, a survival target
          (:func:`sparsefs.utils.survival_target`): time in days from complete remission
          (``date.cr``) to ``date last seen``; event = ``relapse`` is TRUE. Patients without
          a remission date, a last-seen date or a relapse status are left out: **88 of the
          128 patients, 64 relapses** (24 censored).
        * ``"age"``: the patient's age in years (a continuous target; the 123 patients with a
          known age). Integer-valued: estimators that also take classes need
          ``target_type="regression"``.
        * ``"bt"``: the B- or T-cell lineage (``B`` / ``T``, from ``BT``; 128 patients), the
          classification target of ``ALL_Chiaretti.mat``.

    Returns
    -------
    Dataset
        ``X`` 12625 probes (names from the file), ``y`` the target, ``name`` ``"ALL
        Chiaretti (<endpoint>)"``; the caveats in ``description``.

    Notes
    -----
    Caveats of the relapse-free endpoint, derived here from the phenotype table (the data
    package documents the columns, not an endpoint): the time of a relapse is taken to be the
    ``date last seen`` (for the 64 relapses the follow-up status ``f.u`` is ``REL`` or
    ``... / REL``; the table holds no separate relapse date); deaths in remission (8
    patients, ``DEATH IN CR``) are **censored** at their last-seen date, i.e. treated as
    non-informative, which ignores a competing risk; transplants (``BMT``, ``MUD``,
    ``AUBMT``: 10 patients) are not modelled. 88 patients and 12625 probes: a selection is
    unstable and any p-value is for exploration (use ``StabilitySelector`` and
    ``ErrorControlSelector``).

    Raises
    ------
    FileNotFoundError
        When the files are not in ``$SPARSEFS_DATA``.
    ValueError
        For an unknown endpoint.

    Examples
    --------
    >>> from sparsefs.datasets import load_chiaretti
    >>> ds = load_chiaretti("relapse")  # doctest: +SKIP
    >>> ds.X.shape, int(ds.y["event"].sum())  # doctest: +SKIP
    ((88, 12625), 64)
    """
    import pandas as pd

    from sparsefs.utils._targets import survival_target

    if endpoint not in _ENDPOINTS:
        raise ValueError(f"endpoint={endpoint!r} is not one of {_ENDPOINTS}.")
    expr = load(_file("ALL_Chiaretti.mat"))
    pheno = pd.read_csv(_file("ALL_Chiaretti_pheno.csv"), dtype={"sample": str})
    if pheno.shape[0] != expr.X.shape[0]:
        raise ValueError(f"ALL_Chiaretti_pheno.csv has {pheno.shape[0]} rows for "
                         f"{expr.X.shape[0]} samples.")
    X = np.asarray(expr.X, dtype=np.float64)
    if endpoint == "bt":
        y = np.where(pheno["BT"].astype(str).str.startswith("B"), "B", "T")
        keep = np.ones(X.shape[0], dtype=bool)
        what = "B- or T-lineage (128 patients)"
    elif endpoint == "age":
        age = pheno["age"].to_numpy(dtype=np.float64)
        keep = np.isfinite(age)
        y = age[keep]
        what = f"age in years ({int(keep.sum())} patients with a known age)"
    else:
        start, seen = _dates(pheno["date.cr"]), _dates(pheno["date last seen"])
        relapse = pheno["relapse"]
        keep = (~pd.isna(start)) & (~pd.isna(seen)) & relapse.notna().to_numpy()
        days = ((seen - start) / np.timedelta64(1, "D"))[keep]
        event = relapse[keep].astype(bool).to_numpy()
        y = survival_target(event, days)
        what = (f"relapse-free time in days from complete remission to relapse or last seen "
                f"({int(keep.sum())} patients, {int(event.sum())} relapses; deaths in "
                "remission censored)")
    return Dataset(
        X=X[keep], y=y, feature_names=expr.feature_names, support=None,
        name=f"ALL Chiaretti ({endpoint})",
        description=f"Chiaretti et al. 2004 adult ALL, RMA log2 expression of 12625 probes; "
                    f"target: {what}. Derived from ALL_Chiaretti_pheno.csv (see "
                    "load_chiaretti's Notes for the caveats).",
    )
