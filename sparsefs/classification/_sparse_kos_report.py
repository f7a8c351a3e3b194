"""Data loaders and the report hook of ``sparsefs reproduce sparse_kos``.

``configs/sparse_kos.toml`` reads the three UCI data sets of Lapanowski & Gaynanova (2019,
Section 6) through the loaders below (from ``$SPARSEFS_DATA`` or ``../shared/data``; never
downloaded or copied), and :func:`extra_sections` adds what the generic report cannot know: how
often each feature gets a nonzero weight and the mean |w| (the paper's claims, spec
``sparse-kos.md`` 2.11, are judged by ``sparsefs.benchmark.hooks.sparse_kos``). It reads the
results tables only (the estimator packages never import the harness, plotting or
matplotlib).
"""

from pathlib import Path
from typing import Any

import numpy as np

from sparsefs.datasets import Dataset

__all__ = [
    "extra_sections",
    "load_blood_transfusion",
    "load_climate_crashes",
    "load_credit_default",
]

_CLIMATE_NAMES = [
    "vconst_corr", "vconst_2", "vconst_3", "vconst_4", "vconst_5", "vconst_7", "ah_corr",
    "ah_bolus", "slm_corr", "efficiency_factor", "tidal_mix_max", "vertical_decay_scale",
    "convect_corr", "bckgrnd_vdc1", "bckgrnd_vdc_ban", "bckgrnd_vdc_eq", "bckgrnd_vdc_psim",
    "Prandtl",
]


def _file(name: str) -> Path:
    from sparsefs.datasets._asu import shared_data_dir

    root = shared_data_dir()
    path = None if root is None else root / name
    if path is None or not path.is_file():
        raise FileNotFoundError(
            f"{name} not found: set SPARSEFS_DATA to the directory of the shared data sets "
            "(see its MANIFEST.md)."
        )
    return path


def load_blood_transfusion() -> Dataset:
    """Blood transfusion service center (Yeh, Yang & Ting 2009): 748 x 4, donated in March
    2007 (1) or not (0). Monetary = 250 x Frequency (perfectly collinear)."""
    import pandas as pd

    frame = pd.read_csv(_file("transfusion.data"))
    X = frame.iloc[:, :4].to_numpy(dtype=np.float64)
    y = frame.iloc[:, 4].to_numpy().astype(np.int64)
    return Dataset(X=X, y=y, feature_names=np.array(["Recency", "Frequency", "Monetary", "Time"]),
                   support=None, name="blood transfusion",
                   description="UCI blood transfusion service center, 748 x 4")


def load_climate_crashes() -> Dataset:
    """Climate model simulation crashes (Lucas et al. 2013): 540 x 18 parameters, outcome
    0 = crash, 1 = success (Study and Run dropped)."""
    import pandas as pd

    frame = pd.read_csv(_file("pop_failures.dat"), sep=r"\s+", header=None)
    X = frame.iloc[:, 2:20].to_numpy(dtype=np.float64)
    y = frame.iloc[:, 20].to_numpy().astype(np.int64)
    return Dataset(X=X, y=y, feature_names=np.array(_CLIMATE_NAMES), support=None,
                   name="climate crashes", description="UCI climate model crashes, 540 x 18")


def load_credit_default(n_samples: int = 3000, random_state: int = 0) -> Dataset:
    """Default of credit card clients (Yeh & Lien 2009): X1..X23, subsampled to ``n_samples``
    rows without replacement by ``numpy.random.default_rng(random_state)`` (the paper uses
    n = 3000)."""
    import pandas as pd

    frame = pd.read_csv(_file("UCI_Credit_Card.csv"))
    names = [f"X{i}" for i in range(1, 24)]
    X = frame[names].to_numpy(dtype=np.float64)
    y = frame["Y"].to_numpy().astype(np.int64)
    rows = np.sort(np.random.default_rng(random_state).choice(X.shape[0], n_samples,
                                                              replace=False))
    return Dataset(X=X[rows], y=y[rows], feature_names=np.array(names), support=None,
                   name="credit default",
                   description=f"UCI default of credit card clients, {n_samples} of 30000 rows "
                   f"(seed {random_state})")


# --------------------------------------------------------------------------------------------
# report hook
# --------------------------------------------------------------------------------------------

def _errors(table) -> Any:
    rows = table[(table["metric"] == "error") & (table["estimator"] == "self")]
    return rows.groupby(["dataset", "method"])["value"].agg(["mean", "std", "count"])


def extra_sections(reproduction: Any, outdir: Path) -> str:
    """Feature frequencies, mean |w| and the mean test errors (markdown); the claims are
    judged by the Claims table (``sparsefs.benchmark.hooks.sparse_kos``)."""
    import pandas as pd

    tables = [r.table for r in reproduction.results]
    supports = [r.supports for r in reproduction.results if r.supports is not None]
    if not tables:
        return ""
    table = pd.concat(tables, ignore_index=True)
    lines = ["## Sparse KOS: how often each feature is selected (ours)", "",
             "The paper's claims on these features are judged in the Claims table above.", ""]
    if not supports:
        return "\n".join([*lines, "(no per-split selections recorded)"])
    sup = pd.concat(supports, ignore_index=True)
    sup = sup[sup["method"] == "sparse KOS"]
    errors = _errors(table)
    for dataset, rows in sup.groupby("dataset", sort=False):
        freq = rows.groupby("feature")["selected"].mean().sort_index().to_numpy()
        weight = rows.groupby("feature")["score"].mean().sort_index().to_numpy()
        n_splits = rows["fold"].nunique()
        lines += [f"### {dataset}", "",
                  f"How often each feature has w != 0 over {n_splits} splits, and its mean |w|:",
                  "", "| feature | " + " | ".join(str(j + 1) for j in range(freq.size)) + " |",
                  "|---|" + "---:|" * freq.size,
                  "| w != 0 | " + " | ".join(f"{v:.0%}" for v in freq) + " |",
                  "| mean abs(w) | " + " | ".join(f"{v:.2f}" for v in weight) + " |", ""]
        if dataset in errors.index.get_level_values(0):
            err = errors.loc[dataset].sort_values("mean")
            ranking = ", ".join(f"{m} {r['mean']:.3f}" for m, r in err.iterrows())
            lines += [f"Mean test error, best first: {ranking}.", ""]
    return "\n".join(lines)
