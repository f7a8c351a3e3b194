"""The evaluation harness: the papers' protocols as declarative, seeded experiments.

* :class:`ExperimentSpec` (with :class:`DataSpec`, :class:`MethodSpec`, :class:`CVSpec`,
  :class:`EstimatorSpec`, :class:`ReportSpec`): what to run, loadable from TOML.
* :func:`run`: runs it (joblib, a progress bar); selection always inside each training fold.
* :class:`Results`: one tidy table plus metadata; ``save``/``load`` as CSV or Parquet.
* Summaries: :func:`summarize`, :func:`best_over_k`, :func:`mean_over_k`,
  :func:`friedman_nemenyi`, :func:`nemenyi_critical_difference`, :func:`average_ranks`.
* Reports and reproductions: :func:`markdown_report`, :class:`ReproductionSpec`,
  :func:`reproduce`, :func:`find_config`, :func:`list_reproductions`.

Figures live in :mod:`sparsefs.plotting` (which reads these results). See ``docs/harness.md``.
"""

from sparsefs.harness._claims import (
    CLAIM_VERDICTS,
    ClaimNotRun,
    ClaimVerdict,
    evaluate_claims,
    paper_table_agreement,
)
from sparsefs.harness._data import MissingDataError, load_dataset
from sparsefs.harness._metrics import binary_roc_auc, macro_prf, roc_auc_ovr
from sparsefs.harness._report import headline, markdown_report, paper_comparison
from sparsefs.harness._reproduce import (
    Reproduction,
    find_config,
    list_reproductions,
    load_reproduction,
    render_report,
    reproduce,
    run_hooks,
)
from sparsefs.harness._results import LoadMonitor, Results
from sparsefs.harness._runner import fit_method, run
from sparsefs.harness._seeds import derive_seed, task_seed
from sparsefs.harness._spec import (
    MODES,
    PROTOCOLS,
    CVSpec,
    DataSpec,
    EstimatorSpec,
    ExperimentSpec,
    MethodSpec,
    PaperClaim,
    PaperTable,
    PaperValue,
    ReportSpec,
    ReproductionSpec,
    parse_k_grid,
)
from sparsefs.metrics._summary import (
    GREATER_IS_BETTER,
    TIE_DECIMALS,
    RankTestResult,
    average_ranks,
    best_over_k,
    friedman_nemenyi,
    mean_over_k,
    nemenyi_critical_difference,
    score_matrix,
    summarize,
)

__all__ = [
    "CLAIM_VERDICTS",
    "GREATER_IS_BETTER",
    "MODES",
    "PROTOCOLS",
    "TIE_DECIMALS",
    "CVSpec",
    "ClaimNotRun",
    "ClaimVerdict",
    "DataSpec",
    "EstimatorSpec",
    "ExperimentSpec",
    "LoadMonitor",
    "MethodSpec",
    "MissingDataError",
    "PaperClaim",
    "PaperTable",
    "PaperValue",
    "RankTestResult",
    "ReportSpec",
    "Reproduction",
    "ReproductionSpec",
    "Results",
    "average_ranks",
    "best_over_k",
    "binary_roc_auc",
    "derive_seed",
    "evaluate_claims",
    "find_config",
    "fit_method",
    "friedman_nemenyi",
    "headline",
    "list_reproductions",
    "load_dataset",
    "load_reproduction",
    "macro_prf",
    "markdown_report",
    "mean_over_k",
    "nemenyi_critical_difference",
    "paper_comparison",
    "paper_table_agreement",
    "parse_k_grid",
    "render_report",
    "reproduce",
    "roc_auc_ovr",
    "run",
    "run_hooks",
    "score_matrix",
    "summarize",
    "task_seed",
]
