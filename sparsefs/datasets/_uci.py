"""The three UCI data sets of Lapanowski & Gaynanova (2019, Section 6), read locally.

``configs/sparse_kos.toml`` reads them through these loaders, from ``$SPARSEFS_DATA`` or
``../shared/data`` (never downloaded or copied into the package; a clear ``FileNotFoundError``
names the variable when absent).
"""

from pathlib import Path

import numpy as np

from sparsefs.datasets._loaders import Dataset

__all__ = [
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
