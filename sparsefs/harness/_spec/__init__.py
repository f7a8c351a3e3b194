"""Declarative experiment specifications: plain dataclasses, loadable from TOML.

An :class:`ExperimentSpec` says *what* to run (data sets, methods, the grid of numbers of
selected features, the resampling scheme, downstream estimators, metrics, the root seed); the
runner (:func:`sparsefs.harness.run`) says *how*. A :class:`ReproductionSpec` bundles one or
more experiments with the paper's values (``[paper]``) for ``sparsefs reproduce``.

Every ``from_dict`` rejects unknown keys with a message that lists the allowed ones, so a typo
in a TOML file fails loudly instead of being ignored.

The package is split along its seams: ``_common`` (protocols, metrics, modes, key checks,
the k grid), ``_parts`` (data sets, methods, downstream estimators, resampling, report
options), ``_experiment`` (:class:`ExperimentSpec`, its hash and quick version) and
``_reproduction`` (the paper's values, tables and claims, :class:`ReproductionSpec`).
"""

from sparsefs.harness._spec._common import (  # noqa: F401 (two private names tests read)
    _PROTOCOL_METRICS,
    BUILTIN_ESTIMATORS,
    CLUSTERING_METRICS,
    MODES,
    OUTCOME_PROTOCOLS,
    PROTOCOLS,
    REGRESSION_METRICS,
    SUPERVISED_METRICS,
    SURVIVAL_METRICS,
    UNSUPERVISED_METRICS,
    parse_k_grid,
)
from sparsefs.harness._spec._experiment import ExperimentSpec
from sparsefs.harness._spec._parts import CVSpec, DataSpec, EstimatorSpec, MethodSpec, ReportSpec
from sparsefs.harness._spec._reproduction import (
    PaperClaim,
    PaperTable,
    PaperValue,
    ReproductionSpec,
)

__all__ = [
    "CLUSTERING_METRICS",
    "MODES",
    "OUTCOME_PROTOCOLS",
    "PROTOCOLS",
    "REGRESSION_METRICS",
    "SUPERVISED_METRICS",
    "SURVIVAL_METRICS",
    "UNSUPERVISED_METRICS",
    "CVSpec",
    "DataSpec",
    "EstimatorSpec",
    "ExperimentSpec",
    "MethodSpec",
    "PaperClaim",
    "PaperTable",
    "PaperValue",
    "ReportSpec",
    "ReproductionSpec",
    "parse_k_grid",
]
