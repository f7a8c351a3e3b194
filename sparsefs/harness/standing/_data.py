"""Data of the standing benchmarks: shared files by name, scanpy's ``pbmc68k_reduced``, and the
simulated counts with planted markers (``make_multi_donor_counts``)."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from sparsefs._kernels.arrays import to_dense
from sparsefs.datasets import Dataset, load
from sparsefs.harness._data import MissingDataError

__all__ = ["PBMC_EXPERT_MARKERS", "MarkerData", "load_cells", "pbmc68k_reduced",
           "shared_file", "simulated_counts"]

PBMC_EXPERT_MARKERS: dict[str, tuple[str, ...]] = {
    "CD4+/CD45RA+/CD25- Naive T": ("IL7R", "CCR7"),
    "CD4+/CD45RO+ Memory": ("IL7R", "S100A4"),
    "CD14+ Monocyte": ("CD14", "LYZ"),
    "CD19+ B": ("MS4A1",),
    "CD8+ Cytotoxic T": ("CD8A",),
    "CD8+/CD45RA+ Naive Cytotoxic": ("CD8A",),
    "CD56+ NK": ("GNLY", "NKG7"),
    "Dendritic": ("FCER1A", "CST3"),
}
"""Canonical PBMC markers of the Seurat / scanpy PBMC 3k tutorials (Satija lab, "Seurat -
guided clustering tutorial"; scanpy's "Preprocessing and clustering 3k PBMCs": IL7R, CCR7
naive CD4 T; CD14, LYZ CD14+ monocytes; IL7R, S100A4 memory CD4 T; MS4A1 B; CD8A CD8 T; GNLY,
NKG7 NK; FCER1A, CST3 dendritic cells), mapped to the ``bulk_labels`` of ``pbmc68k_reduced``.
Genes absent from its 765 (CD14) are dropped when used; the types without a tutorial marker
(CD34+, T reg) have none."""


def shared_file(file: str, **params: Any) -> Dataset:
    """A data file of the shared data directory (``$SPARSEFS_DATA``), by file name.

    Raises
    ------
    MissingDataError
        When the directory or the file does not exist (the benchmark skips the data set).
    """
    from sparsefs.datasets._asu import shared_data_dir

    home = shared_data_dir()
    if home is None or not (home / file).is_file():
        raise MissingDataError(f"{file} is not in the shared data directory "
                               f"({home or 'SPARSEFS_DATA unset'})")
    return load(home / file, **params)


@dataclass(frozen=True)
class MarkerData:
    """Cells with known cell types, for the marker-gene benchmark.

    Attributes
    ----------
    X : scipy.sparse CSR matrix or ndarray of shape (n_cells, n_genes)
        log1p-normalised expression (what scanpy's tests and ``sparsefs.tl.select`` get).
    y : ndarray of str
        Cell type per cell.
    donors : ndarray or None
        Donor per cell (simulations): the held-out cells are whole donors.
    feature_names : ndarray of str
    markers : dict of str -> ndarray of bool, or None
        Planted up-regulated markers per type (simulations).
    expert : dict of str -> tuple of str, or None
        Expert-annotated markers per type (real data).
    note : str
    """

    X: Any
    y: np.ndarray
    donors: np.ndarray | None
    feature_names: np.ndarray
    markers: dict[str, np.ndarray] | None
    expert: dict[str, tuple[str, ...]] | None
    note: str = ""


def pbmc68k_reduced() -> MarkerData:
    """scanpy's bundled ``pbmc68k_reduced`` (no download): 700 cells x 765 genes, the
    log-normalised ``raw`` matrix, ``bulk_labels`` (10 FACS-sorted types) and the tutorial
    markers of :data:`PBMC_EXPERT_MARKERS` present among its genes."""
    import warnings

    try:
        import scanpy as sc
    except ImportError as exc:  # pragma: no cover - scanpy is a test dependency
        raise MissingDataError(f"pbmc68k_reduced needs scanpy ({exc})") from exc
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        adata = sc.datasets.pbmc68k_reduced()
    names = np.asarray(adata.raw.var_names, dtype=str)
    present = set(names)
    expert = {t: tuple(g for g in genes if g in present)
              for t, genes in PBMC_EXPERT_MARKERS.items()}
    expert = {t: g for t, g in expert.items() if g}
    import scipy.sparse as sp

    X = sp.csr_matrix(adata.raw.X, dtype=np.float32)
    return MarkerData(X=X, y=np.asarray(adata.obs["bulk_labels"].astype(str)), donors=None,
                      feature_names=names, markers=None, expert=expert,
                      note="scanpy pbmc68k_reduced: 700 cells x 765 genes (raw, "
                      "log-normalised), bulk_labels")


def simulated_counts(**params: Any) -> MarkerData:
    """Counts with planted markers from :func:`sparsefs.datasets.make_multi_donor_counts`
    (log1p-normalised), with the planted up-regulated markers of each type."""
    try:
        from sparsefs.datasets import make_multi_donor_counts
    except ImportError as exc:
        raise MissingDataError("sparsefs.datasets.make_multi_donor_counts is not available "
                               f"in this checkout ({exc})") from exc
    sim = make_multi_donor_counts(**params)
    y = np.asarray(sim.y).astype(str)
    markers = {str(g): np.asarray(m, dtype=bool) for g, m in sim.markers.items()}
    desc = ", ".join(f"{k}={v}" for k, v in sorted(params.items()) if k != "random_state")
    return MarkerData(X=sim.X, y=y, donors=np.asarray(sim.donors), markers=markers,
                      feature_names=np.asarray(sim.feature_names, dtype=str), expert=None,
                      note=f"make_multi_donor_counts({desc})")


_CELL_LOADERS = {"pbmc68k_reduced": pbmc68k_reduced, "simulated_counts": simulated_counts}


@functools.lru_cache(maxsize=4)
def _cells(kind: str, params_json: str) -> MarkerData:
    return _CELL_LOADERS[kind](**json.loads(params_json))


def load_cells(loader: str, params: dict[str, Any]) -> MarkerData:
    """A :class:`MarkerData` by loader name (``pbmc68k_reduced`` or ``simulated_counts``),
    cached per process (a worker computes many cells of one data set)."""
    kind = loader.rsplit(":", 1)[-1]
    if kind not in _CELL_LOADERS:
        raise ValueError(f"unknown cell data loader {loader!r}; known: {sorted(_CELL_LOADERS)}")
    return _cells(kind, json.dumps(params, sort_keys=True))


@functools.lru_cache(maxsize=4)
def _matrix(spec_json: str) -> Dataset:
    import inspect

    from sparsefs.harness._data import import_object, load_dataset
    from sparsefs.harness._spec import DataSpec

    spec = json.loads(spec_json)
    if spec.get("loader"):
        # a generator without its own random_state gets 0: the same data in every cell
        func = import_object(spec["loader"])
        params = dict(spec.get("params", {}))
        if "random_state" in inspect.signature(func).parameters:
            params.setdefault("random_state", 0)
        spec["params"] = params
    return load_dataset(DataSpec(**spec), seed=0)


def load_matrix(data) -> Dataset:
    """The :class:`~sparsefs.datasets.Dataset` of a :class:`StandingData`, cached per process.

    ``pbmc68k_reduced`` as a loader gives its log-normalised matrix and ``bulk_labels``.
    """
    if data.loader and data.loader.rsplit(":", 1)[-1] == "pbmc68k_reduced":
        cells = load_cells("pbmc68k_reduced", {})
        X = to_dense(cells.X)
        return Dataset(X=X.astype(np.float64), y=cells.y, feature_names=cells.feature_names,
                       support=None, name=data.label, description=cells.note)
    return _matrix(json.dumps(data.data_spec().to_dict(), sort_keys=True))
