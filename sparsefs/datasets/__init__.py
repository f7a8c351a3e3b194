"""Data sets for sparse feature selection: local loaders, the ASU benchmark sets, generators.

* :class:`Dataset`: the result type of every function here (``X``, ``y``, ``feature_names``,
  ``support`` = the true relevant features when known, ``name``, ``description``).
* :func:`load`: read a local ``.mat``, ``.csv``/``.tsv``/``.txt``, ``.parquet``, ``.npz`` or
  ``.h5ad`` file.
* :func:`fetch_asu`, :func:`list_asu`, :func:`get_data_home`: the scikit-feature (ASU)
  benchmark sets, found locally (``SPARSEFS_DATA``) or downloaded, always checksum-verified.
* ``make_*``: synthetic designs from the papers sparsefs implements, with the true support;
  :func:`make_multi_donor_counts`: single-cell counts from several donors (NB, donor effects,
  planted markers) for donor-aware error control.
* :func:`load_default`: the wine data plus noise features, bundled (no download).
* :func:`load_text_corpus`, :func:`list_text_corpora`: two-class sentiment corpora (local copies)
  as bag-of-words CSR matrices.
* :func:`load_blood_transfusion`, :func:`load_climate_crashes`, :func:`load_credit_default`: the
  UCI sets of the sparse KOS paper (local copies).
* :func:`load_chiaretti`: Chiaretti et al.'s adult ALL microarray with a relapse-free survival,
  age or lineage target (local copies; docs/outcomes.md).
"""

from ._asu import ASU_DATASETS, BASE_URL, ChecksumError, fetch_asu, get_data_home, list_asu
from ._chiaretti import load_chiaretti
from ._embedded import load_default
from ._loaders import SUPPORTED_EXTENSIONS, Dataset, load
from ._single_cell import MultiDonorCounts, make_multi_donor_counts
from ._synthetic import (
    make_kos_rings,
    make_kos_sine,
    make_planted_classification,
    make_planted_regression,
    make_planted_survival,
    make_sparse_clusters_exp1,
    make_sparse_clusters_exp2,
    make_sparse_clusters_exp3,
    make_sparse_clusters_exp4,
)
from ._text import TEXT_CORPORA, list_text_corpora, load_text_corpus
from ._uci import load_blood_transfusion, load_climate_crashes, load_credit_default

__all__ = [
    "ASU_DATASETS",
    "BASE_URL",
    "SUPPORTED_EXTENSIONS",
    "TEXT_CORPORA",
    "ChecksumError",
    "Dataset",
    "MultiDonorCounts",
    "fetch_asu",
    "get_data_home",
    "list_asu",
    "list_text_corpora",
    "load",
    "load_blood_transfusion",
    "load_chiaretti",
    "load_climate_crashes",
    "load_credit_default",
    "load_default",
    "load_text_corpus",
    "make_kos_rings",
    "make_kos_sine",
    "make_multi_donor_counts",
    "make_planted_classification",
    "make_planted_regression",
    "make_planted_survival",
    "make_sparse_clusters_exp1",
    "make_sparse_clusters_exp2",
    "make_sparse_clusters_exp3",
    "make_sparse_clusters_exp4",
]
