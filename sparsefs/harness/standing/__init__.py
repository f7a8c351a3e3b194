"""The standing benchmarks: where each sparsefs method stands on the field's own benchmarks.

Three benchmarks written from the field's comparisons (issue #29; ``docs/standing.md``):

* ``microarray`` (a): filter methods with nested CV on the microarray cohorts, after Bommert et
  al., CSDA 2020;
* ``markers`` (b): marker genes on simulated counts with planted markers and on scanpy's
  ``pbmc68k_reduced``, after Pullin & McCarthy, Genome Biology 2024;
* ``clustering`` (c): unsupervised selection judged by k-means, after Cho et al., Brief.
  Bioinform. 2024.

Each is a config in ``configs/standing/`` (:class:`StandingSpec`); :func:`run_standing`
computes every (data set, method) cell that is not stored yet (:class:`ResultStore`: one
compressed JSON file per data set), each in a worker process with a time budget;
:func:`analyse` turns the stored cells into tables, rank tests, pairwise tests against the
simple winner and verdicts; :func:`render_page` writes the page. The figures are drawn by
:func:`sparsefs.plotting.standing_figures`; ``sparsefs standing`` puts the pieces together.
"""

from __future__ import annotations

import os
from pathlib import Path

from sparsefs.harness.standing._analysis import Analysis, Headline, analyse
from sparsefs.harness.standing._budget import Budget, OverBudget
from sparsefs.harness.standing._engine import CellOutcome, compute_cell, pending_cells, run_cells
from sparsefs.harness.standing._page import render_page
from sparsefs.harness.standing._spec import (
    BENCHMARKS,
    StandingData,
    StandingMethod,
    StandingSpec,
    cell_seed,
    find_standing_config,
    load_standing_spec,
)
from sparsefs.harness.standing._stats import (
    PairwiseResult,
    cluster_order,
    pairwise_wilcoxon_holm,
    rank_tests,
    ranking_similarity,
    simple_winner,
    stability_by_dataset,
    summarise_stability,
    verdict,
)
from sparsefs.harness.standing._store import ResultStore

__all__ = [
    "BENCHMARKS",
    "Analysis",
    "Budget",
    "CellOutcome",
    "Headline",
    "OverBudget",
    "PairwiseResult",
    "ResultStore",
    "StandingData",
    "StandingMethod",
    "StandingSpec",
    "analyse",
    "cell_seed",
    "cluster_order",
    "compute_cell",
    "find_standing_config",
    "load_standing_spec",
    "pairwise_wilcoxon_holm",
    "pending_cells",
    "rank_tests",
    "ranking_similarity",
    "render_page",
    "results_dir",
    "run_cells",
    "run_standing",
    "simple_winner",
    "stability_by_dataset",
    "summarise_stability",
    "verdict",
]


def results_dir(out: str | os.PathLike[str], benchmark: str, *, quick: bool = False) -> Path:
    """Where the cells of a benchmark (or study: its ``name``) are stored under an ``--out``
    directory: ``OUT/standing/results/<name>`` (``<name>-quick`` for ``--quick``)."""
    return Path(out) / "standing" / "results" / (benchmark + ("-quick" if quick else ""))


def run_standing(benchmark: str, out: str | os.PathLike[str], *, quick: bool = False,
                 n_jobs: int = 2, force: bool = False, retry: tuple[str, ...] = (),
                 progress: bool | None = None, config_dir: str | None = None,
                 reuse_from: tuple[str, ...] = ()) -> list[CellOutcome]:
    """Compute (and store) every cell of one benchmark that is not stored yet.

    Parameters
    ----------
    benchmark : str
        ``a`` / ``b`` / ``c`` or ``microarray`` / ``markers`` / ``clustering``.
    out : path
        The ``--out`` directory (results under :func:`results_dir`).
    quick : bool, default=False
        The reduced spec (``[quick]`` of the config), stored apart from the full run.
    n_jobs : int, default=2
        Worker processes (each single-threaded); 0 runs in this process without a hard stop.
    force, retry, progress :
        See :func:`run_cells`.
    reuse_from : tuple of str
        Names of other results directories whose cells with the same hash are copied instead
        of recomputed (a study sharing cells with a benchmark).

    Returns
    -------
    list of CellOutcome
        The cells computed by this call.
    """
    spec = load_standing_spec(benchmark, quick=quick, config_dir=config_dir)
    store = ResultStore(results_dir(out, spec.name, quick=quick))
    return run_cells(spec, store, n_jobs=n_jobs, force=force, retry=retry, progress=progress,
                     reuse=[ResultStore(results_dir(out, name, quick=quick))
                            for name in reuse_from])
