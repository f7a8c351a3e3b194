"""Declarative experiment specifications: plain dataclasses, loadable from TOML.

An :class:`ExperimentSpec` says *what* to run (data sets, methods, the grid of numbers of
selected features, the resampling scheme, downstream estimators, metrics, the root seed); the
runner (:func:`sparsefs.harness.run`) says *how*. A :class:`ReproductionSpec` bundles one or
more experiments with the paper's values (``[paper]``) for ``sparsefs reproduce``.

Every ``from_dict`` rejects unknown keys with a message that lists the allowed ones, so a typo
in a TOML file fails loudly instead of being ignored.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

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

PROTOCOLS: tuple[str, ...] = ("supervised", "unsupervised", "clustering", "regression",
                               "survival")
"""The evaluation protocols (see ``docs/harness.md``): class labels (``supervised``),
clusters (``unsupervised``, ``clustering``), a continuous target (``regression``) and a
censored survival target (``survival``; docs/outcomes.md)."""

OUTCOME_PROTOCOLS: tuple[str, ...] = ("regression", "survival")
"""The protocols whose target is not class labels."""

MODES: tuple[str, ...] = ("rank", "refit", "own", "all")
"""How a method is turned into feature subsets: ``rank`` (fit once per fold, top-k of its
ranking for every k), ``refit`` (one fit per k with ``n_features_to_select=k``), ``own`` (one
fit with the given parameters; the method's own rule decides the count), ``all`` (no
selection: every feature)."""

SCHEMES: tuple[str, ...] = ("kfold", "split", "none")
PREPROCESSING: tuple[str, ...] = ("zscore", "smote")

SUPERVISED_METRICS: tuple[str, ...] = (
    "accuracy",
    "error",
    "precision_macro",
    "recall_macro",
    "f1_macro",
    "roc_auc",
)
"""Metrics of the supervised protocol, computed on each test fold."""

UNSUPERVISED_METRICS: tuple[str, ...] = ("acc", "nmi")
"""Metrics of the unsupervised protocol (k-means on the selected features)."""

CLUSTERING_METRICS: tuple[str, ...] = ("cer", "acc", "nmi")
"""Metrics of the clustering protocol (the clusterer's own labels)."""

REGRESSION_METRICS: tuple[str, ...] = ("r2", "rmse")
"""Metrics of the regression protocol (a model of the continuous target on the selected
features, on each test fold)."""

SURVIVAL_METRICS: tuple[str, ...] = ("c_index",)
"""Metrics of the survival protocol: Harrell's concordance index of a Cox model's risk score
on each test fold (:func:`sparsefs.metrics.concordance_index`)."""

_PROTOCOL_METRICS = {
    "supervised": SUPERVISED_METRICS,
    "unsupervised": UNSUPERVISED_METRICS,
    "clustering": CLUSTERING_METRICS,
    "regression": REGRESSION_METRICS,
    "survival": SURVIVAL_METRICS,
}
_DEFAULT_METRICS = {
    "supervised": ("accuracy", "precision_macro", "recall_macro", "f1_macro", "roc_auc"),
    "unsupervised": UNSUPERVISED_METRICS,
    "clustering": CLUSTERING_METRICS,
    "regression": REGRESSION_METRICS,
    "survival": SURVIVAL_METRICS,
}
_DEFAULT_ESTIMATORS = {
    "supervised": ("svm", "nb", "knn", "tree"),
    "unsupervised": ("kmeans",),
    "clustering": ("self",),
    "regression": ("ridge",),
    "survival": ("cox",),
}
BUILTIN_ESTIMATORS: tuple[str, ...] = ("svm", "nb", "knn", "tree", "self", "kmeans", "ridge",
                                       "cox")
"""Downstream estimators known by name: ``svm`` (linear SVM, C=1), ``nb`` (Gaussian naive
Bayes), ``knn`` (5 nearest neighbours), ``tree`` (decision tree), ``self`` (the method's own
``predict`` or ``labels_``), ``kmeans`` (k-means, the unsupervised protocol), ``ridge``
(ridge regression with its penalty chosen by leave-one-out CV on the training rows, the
regression protocol), ``cox`` (a ridge-penalised Cox model, the survival protocol)."""


def _check_keys(data: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    if not isinstance(data, Mapping):
        raise TypeError(f"{where} must be a table (mapping), got {type(data).__name__}.")
    unknown = sorted(set(data) - set(allowed))
    if unknown:
        raise ValueError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; allowed keys are "
            f"{', '.join(allowed)}."
        )


def _jsonable(value: Any) -> Any:
    """A plain-data view of spec values (for hashing, metadata and reports)."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, type):
        return f"{value.__module__}:{value.__qualname__}"
    return repr(value)


# --------------------------------------------------------------------------------------------
# the k grid
# --------------------------------------------------------------------------------------------


def parse_k_grid(value: Any) -> tuple[int, ...]:
    """Parse a grid of numbers of selected features.

    Parameters
    ----------
    value : int, str or sequence of int
        An int ``k``; a range ``"a:b"`` (inclusive) or ``"a:b:step"``; a comma-separated list
        ``"5,10,20"``; or a sequence of ints (and range strings).

    Returns
    -------
    tuple of int
        Sorted, without duplicates, all >= 1.

    Raises
    ------
    ValueError
        If the grid is empty or holds a value that is not a positive integer.

    Examples
    --------
    >>> parse_k_grid("1:5")
    (1, 2, 3, 4, 5)
    >>> parse_k_grid("10:50:20")
    (10, 30, 50)
    >>> parse_k_grid([20, "5,10", 5])
    (5, 10, 20)
    """
    out: list[int] = []

    def add(item: Any) -> None:
        if isinstance(item, bool | np.bool_):
            raise ValueError(f"k grid: {item!r} is a bool, not a number of features.")
        if isinstance(item, int | np.integer):
            out.append(int(item))
            return
        if isinstance(item, float) and item.is_integer():
            out.append(int(item))
            return
        if isinstance(item, str):
            text = item.strip()
            if "," in text:
                for part in text.split(","):
                    if part.strip():
                        add(part)
                return
            if ":" in text:
                parts = text.split(":")
                try:
                    nums = [int(p) for p in parts]
                except ValueError:
                    raise ValueError(
                        f"k grid {item!r}: a range is 'first:last' or 'first:last:step' with "
                        "integers, e.g. '1:80'."
                    ) from None
                if len(nums) not in (2, 3) or (len(nums) == 3 and nums[2] < 1):
                    raise ValueError(f"k grid {item!r}: expected 'first:last[:step]', step >= 1.")
                step = nums[2] if len(nums) == 3 else 1
                out.extend(range(nums[0], nums[1] + 1, step))
                return
            try:
                out.append(int(text))
                return
            except ValueError:
                raise ValueError(
                    f"k grid {item!r}: give an int, 'first:last[:step]' or '5,10,20'."
                ) from None
        if isinstance(item, Sequence):
            for sub in item:
                add(sub)
            return
        raise ValueError(f"k grid: cannot read {item!r} as numbers of features.")

    add(value)
    grid = sorted(set(out))
    if not grid:
        raise ValueError(f"k grid {value!r} is empty.")
    if grid[0] < 1:
        raise ValueError(f"k grid {value!r} holds {grid[0]}; every k must be >= 1.")
    return tuple(grid)


# --------------------------------------------------------------------------------------------
# parts of an experiment
# --------------------------------------------------------------------------------------------



#: (current import path, the path stored runs were hashed with): code moved by issues #23 and
#: #34, applied in this order (the #34 rows first: their old paths then take the #23 rename)
HASH_RENAMES: tuple[tuple[str, str], ...] = (
    ("sparsefs.classification:ShrunkenCentroidsAtK",
     "sparsefs.harness.baselines:ShrunkenCentroidsAtK"),
    ("sparsefs.selection:OddsRatioSelector", "sparsefs.harness.baselines:OddsRatioSelector"),
    ("sparsefs.harness.", "sparsefs.benchmark."),
    ("sparsefs.datasets:load_blood_transfusion",
     "sparsefs.classification._sparse_kos_report:load_blood_transfusion"),
    ("sparsefs.datasets:load_climate_crashes",
     "sparsefs.classification._sparse_kos_report:load_climate_crashes"),
    ("sparsefs.datasets:load_credit_default",
     "sparsefs.classification._sparse_kos_report:load_credit_default"),
)

#: (stem, parameter, value): a parameter a config now names explicitly, with the value that
#: was the default when stored runs were hashed (issue #31: the sparse KOS reproduction names
#: the paper's tuning, ``sigma2_selection="joint"``, so that it does not follow the default
#: if that ever changes; likewise ``acceleration="none"``, the paper's plain Algorithm 1, when
#: the default became the extrapolated loop). Such a parameter is left out of the hash: naming
#: the default of the stored runs is not a change of the experiment. A config that sets it to
#: anything else hashes differently.
HASH_FORMER_DEFAULTS: tuple[tuple[str, str, Any], ...] = (
    ("sparse_kos", "sigma2_selection", "joint"),
    ("sparse_kos", "acceleration", "none"),
    # the sparse k-means family's gap path before the chain path (issue #33)
    ("l1_kmeans", "gap_path", "restarts"),
    ("sparse_kmeans", "gap_path", "restarts"),
    ("l0_kmeans", "gap_path", "restarts"),
)


def _hash_view(data: dict[str, Any]) -> dict[str, Any]:
    """``ExperimentSpec.to_dict()`` with the :data:`HASH_FORMER_DEFAULTS` left out."""
    methods = []
    for method in data.get("methods", []):
        params = dict(method.get("params", {}))
        for stem, name, value in HASH_FORMER_DEFAULTS:
            if method.get("stem") == stem and name in params and params[name] == value:
                del params[name]
        method = {k: v for k, v in method.items() if k != "params"}
        methods.append({**method, **({"params": params} if params else {})})
    return {**data, "methods": methods}

@dataclass(frozen=True)
class DataSpec:
    """One data set of an experiment; exactly one of ``name``, ``path``, ``generator``,
    ``loader`` is given.

    Parameters
    ----------
    name : str, optional
        ``"default"`` (:func:`sparsefs.datasets.load_default`) or an ASU name
        (:func:`sparsefs.datasets.fetch_asu`, never downloading unless
        ``params = {download = true}``).
    path : str, optional
        A local file read by :func:`sparsefs.datasets.load` (relative paths are resolved
        against the TOML file's directory).
    generator : str, optional
        The name of a ``make_*`` function of :mod:`sparsefs.datasets`.
    loader : str, optional
        ``"module:function"`` returning a :class:`~sparsefs.datasets.Dataset` or ``(X, y)``
        (how a reproduction brings its own data preparation, e.g. text to bag of words).
    params : dict
        Keyword arguments of the generator / loader / ``load_default``.
    target, transpose :
        Passed to :func:`sparsefs.datasets.load` for files.
    time, event : str, optional
        The columns of a survival target in a file (:func:`sparsefs.datasets.load`).
    groups : str, optional
        For files: the column (``adata.obs`` key, ``.mat`` / ``.npz`` variable) holding the
        group of every sample, e.g. the donor of every cell (:func:`sparsefs.datasets.load`).
        When a data set has groups (from this column, or a generator such as
        ``make_multi_donor_counts``), the folds keep every group whole: no group is in the
        training and the test rows of one fold.
    label : str, optional
        The data set's name in the results (default: the name, file stem or generator).
    redraw : bool, optional
        Draw a generator's data afresh (seeded) for each repetition. Default: ``True`` in the
        clustering protocol, ``False`` otherwise.
    """

    name: str | None = None
    path: str | None = None
    generator: str | None = None
    loader: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    target: str | None = None
    transpose: bool = False
    groups: str | None = None
    label: str | None = None
    redraw: bool | None = None
    time: str | None = None
    event: str | None = None

    def __post_init__(self) -> None:
        given = [k for k in ("name", "path", "generator", "loader") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(
                "a data set needs exactly one of name, path, generator, loader; got "
                f"{given or 'none'}."
            )
        if self.generator and not self.generator.startswith("make_"):
            raise ValueError(
                f"generator={self.generator!r}: give the name of a make_* function of "
                "sparsefs.datasets, e.g. 'make_planted_classification'."
            )
        object.__setattr__(self, "params", dict(self.params))

    @property
    def display(self) -> str:
        """The label used in result tables."""
        if self.label:
            return self.label
        if self.name:
            return self.name
        if self.path:
            base = Path(self.path).name
            for ext in (".gz", ".bz2", ".xz"):
                base = base.removesuffix(ext)
            return base.rsplit(".", 1)[0] if "." in base else base
        if self.generator:
            return self.generator.removeprefix("make_")
        return str(self.loader).rsplit(":", 1)[-1]

    @classmethod
    def from_value(cls, value: Any) -> DataSpec:
        """From a TOML table or a string.

        A string is ``"default"``, an ASU name, a ``make_*`` generator name or a file path.
        """
        if isinstance(value, DataSpec):
            return value
        if isinstance(value, str):
            return cls.from_string(value)
        allowed = [f.name for f in fields(cls)]
        _check_keys(value, allowed, "[[datasets]]")
        return cls(**value)

    @classmethod
    def from_string(cls, text: str) -> DataSpec:
        """Interpret ``"default"``, an ASU name, a generator name, or a path."""
        from sparsefs.datasets import ASU_DATASETS

        if text == "default":
            return cls(name="default")
        asu = {k.lower().replace("-", "_"): k for k in ASU_DATASETS}
        asu.update({"lung_small": "lung_discrete", "tox_171": "TOX_171"})
        key = text.lower().replace("-", "_")
        if key in asu and not Path(text).exists():
            return cls(name=asu[key])
        if text.startswith("make_") and not Path(text).exists():
            return cls(generator=text)
        return cls(path=text)

    def to_dict(self) -> dict[str, Any]:
        """The non-default fields, as plain data."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value not in (None, False, {}):
                out[f.name] = _jsonable(value)
        return out


@dataclass(frozen=True)
class MethodSpec:
    """One method of an experiment.

    Parameters
    ----------
    stem : str, optional
        A registry stem or class name (``sparsefs methods``).
    estimator : str, type or estimator, optional
        Instead of ``stem``: ``"module:Class"`` (or ``"module:factory"``, a function returning
        an estimator), a class, or an estimator instance (cloned). This is how baselines that
        are not in the registry enter (``"sklearn.ensemble:RandomForestClassifier"``).
    params : dict
        Estimator parameters. Unless given here, the runner sets ``random_state`` (derived
        seed), ``n_clusters`` (the number of classes) and, in ``rank`` mode,
        ``n_features_to_select`` (the largest k) when the estimator accepts them.
    label : str, optional
        The method's name in the results (default: the stem, class name, or "all features").
    mode : {"rank", "refit", "own", "all"}, optional
        See :data:`MODES`. Default: ``"all"`` when neither ``stem`` nor ``estimator`` is given
        (the all-features baseline), ``"own"`` in the clustering protocol, else ``"rank"``.
    """

    stem: str | None = None
    estimator: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)
    label: str | None = None
    mode: str | None = None

    def __post_init__(self) -> None:
        if self.stem and self.estimator is not None:
            raise ValueError(f"method {self.stem!r}: give stem or estimator, not both.")
        if self.mode is not None and self.mode not in MODES:
            raise ValueError(f"mode={self.mode!r} is not one of {MODES}.")
        if self.mode in ("rank", "refit", "own") and not self.stem and self.estimator is None:
            raise ValueError(f"mode={self.mode!r} needs a stem or an estimator.")
        object.__setattr__(self, "params", dict(self.params))

    @property
    def display(self) -> str:
        """The label used in result tables."""
        if self.label:
            return self.label
        if self.stem:
            return self.stem
        if self.estimator is None:
            return "all features"
        if isinstance(self.estimator, str):
            return self.estimator.rsplit(":", 1)[-1]
        cls = self.estimator if isinstance(self.estimator, type) else type(self.estimator)
        return cls.__name__

    def resolved_mode(self, protocol: str) -> str:
        """The mode used under ``protocol`` (see the ``mode`` parameter)."""
        if self.mode is not None:
            return self.mode
        if not self.stem and self.estimator is None:
            return "all"
        return "own" if protocol == "clustering" else "rank"

    @classmethod
    def from_value(cls, value: Any) -> MethodSpec:
        """From a TOML table or a string (a stem)."""
        if isinstance(value, MethodSpec):
            return value
        if isinstance(value, str):
            if value.strip().lower() in ("all", "all_features", "all features"):
                return cls(label="all features", mode="all")
            return cls(stem=value.strip())
        _check_keys(value, [f.name for f in fields(cls)], "[[methods]]")
        return cls(**value)

    def to_dict(self) -> dict[str, Any]:
        """The non-default fields, as plain data."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None and value != {}:
                out[f.name] = _jsonable(value)
        return out


@dataclass(frozen=True)
class EstimatorSpec:
    """A downstream estimator: a built-in name or ``"module:Class"`` with parameters.

    Parameters
    ----------
    name : str
        A name of :data:`BUILTIN_ESTIMATORS` or, with ``estimator``, any label.
    estimator : str, type or estimator, optional
        ``"module:Class"``, a class or an instance (cloned) for a custom estimator.
    params : dict
        Parameters (merged over the built-in defaults).
    """

    name: str
    estimator: Any = None
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.estimator is None and self.name not in BUILTIN_ESTIMATORS:
            raise ValueError(
                f"estimator {self.name!r} is not built in ({', '.join(BUILTIN_ESTIMATORS)}); "
                "give {name = ..., estimator = 'module:Class'} for another one."
            )
        object.__setattr__(self, "params", dict(self.params))

    @classmethod
    def from_value(cls, value: Any) -> EstimatorSpec:
        """From a name or a table ``{name, estimator, params}``."""
        if isinstance(value, EstimatorSpec):
            return value
        if isinstance(value, str):
            return cls(name=value.strip())
        _check_keys(value, ["name", "estimator", "params"], "estimators entry")
        return cls(**value)

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        out: dict[str, Any] = {"name": self.name}
        if self.estimator is not None:
            out["estimator"] = _jsonable(self.estimator)
        if self.params:
            out["params"] = _jsonable(self.params)
        return out


@dataclass(frozen=True)
class CVSpec:
    """The resampling scheme.

    Parameters
    ----------
    scheme : {"kfold", "split", "none"}
        ``kfold``: stratified K-fold, repeated ``n_repeats`` times (fold index
        ``repeat * n_splits + i``). ``split``: ``n_repeats`` random stratified train/test
        splits with ``train_size`` of the samples for training. ``none``: no split, every
        method sees all samples (only for unsupervised methods and clusterers); repeated
        ``n_repeats`` times with different seeds.
    n_splits : int, default=5
    n_repeats : int, default=1
    train_size : float, default=2/3
        For ``split``.
    """

    scheme: str = "kfold"
    n_splits: int = 5
    n_repeats: int = 1
    train_size: float = 2 / 3

    def __post_init__(self) -> None:
        if self.scheme not in SCHEMES:
            raise ValueError(f"cv scheme={self.scheme!r} is not one of {SCHEMES}.")
        if not isinstance(self.n_splits, int) or self.n_splits < 2:
            raise ValueError(f"cv n_splits={self.n_splits!r}: must be an int >= 2.")
        if not isinstance(self.n_repeats, int) or self.n_repeats < 1:
            raise ValueError(f"cv n_repeats={self.n_repeats!r}: must be an int >= 1.")
        if not 0 < float(self.train_size) < 1:
            raise ValueError(f"cv train_size={self.train_size!r}: must be in (0, 1).")

    @property
    def n_folds(self) -> int:
        """Number of (train, test) pairs per data set."""
        return self.n_splits * self.n_repeats if self.scheme == "kfold" else self.n_repeats

    @classmethod
    def from_value(cls, value: Any) -> CVSpec:
        """From an int (K-fold), ``"none"``, ``"split"`` or a table."""
        if isinstance(value, CVSpec):
            return value
        if isinstance(value, bool):
            raise ValueError(f"cv={value!r}: give a number of folds, 'none' or a table.")
        if isinstance(value, int):
            return cls(scheme="kfold", n_splits=value)
        if isinstance(value, str):
            text = value.strip().lower()
            if text.isdigit():
                return cls(scheme="kfold", n_splits=int(text))
            if text in SCHEMES:
                return cls(scheme=text)
            raise ValueError(f"cv={value!r}: give a number of folds, 'none', 'split' or a table.")
        _check_keys(value, [f.name for f in fields(cls)], "[cv]")
        return cls(**value)

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def describe(self) -> str:
        """A short human description."""
        if self.scheme == "kfold":
            rep = f", repeated {self.n_repeats}x" if self.n_repeats > 1 else ""
            return f"stratified {self.n_splits}-fold CV{rep}"
        if self.scheme == "split":
            return (
                f"{self.n_repeats} random stratified splits, {self.train_size:.3g} of the "
                "samples for training"
            )
        rep = f", {self.n_repeats} repetitions" if self.n_repeats > 1 else ""
        return f"no split (all samples){rep}"


@dataclass(frozen=True)
class ReportSpec:
    """What the report puts first.

    Parameters
    ----------
    metric : str, optional
        The headline metric (default: accuracy / acc / cer by protocol).
    estimator : str, optional
        The headline downstream estimator (default: the first).
    k_max : int, optional
        Best-over-k tables consider only k <= k_max (the papers' "top 20").
    """

    metric: str | None = None
    estimator: str | None = None
    k_max: int | None = None

    @classmethod
    def from_value(cls, value: Any) -> ReportSpec:
        """From a table."""
        if isinstance(value, ReportSpec):
            return value
        _check_keys(value or {}, [f.name for f in fields(cls)], "[report]")
        return cls(**(value or {}))


# --------------------------------------------------------------------------------------------
# the experiment
# --------------------------------------------------------------------------------------------

_EXPERIMENT_KEYS = (
    "name",
    "description",
    "protocol",
    "datasets",
    "methods",
    "k",
    "cv",
    "estimators",
    "metrics",
    "preprocessing",
    "preprocessing_scope",
    "smote_k_neighbors",
    "n_runs",
    "seed",
    "missing_data",
    "record_support",
    "report",
    "quick",
)


@dataclass(frozen=True)
class ExperimentSpec:
    """A declarative experiment: what to run, not how.

    Parameters
    ----------
    datasets : sequence of DataSpec (or str / dict)
    methods : sequence of MethodSpec (or str / dict)
    protocol : {"supervised", "unsupervised", "clustering", "regression", "survival"}, \
default="supervised"
    k : grid, default="1:80"
        Numbers of selected features (:func:`parse_k_grid`); values above a data set's number
        of features are dropped for that data set. Ignored by the ``own`` and ``all`` modes.
    cv : CVSpec, int, str or dict, optional
        Default: 5-fold CV (supervised: stratified by class; regression: plain; survival:
        stratified by the event indicator), ``none`` (unsupervised and clustering).
    estimators : sequence, optional
        Downstream estimators (default: svm, nb, knn, tree / kmeans / self / ridge / cox by
        protocol).
    metrics : sequence of str, optional
        Default: every metric of the protocol except ``error``.
    preprocessing : sequence of {"zscore", "smote"}, default=()
        Fitted on the training rows of each fold, in this order, before selection.
    preprocessing_scope : {"fold", "global"}, default="fold"
        ``global`` applies the preprocessing to all rows *before* splitting - the leaky
        protocol of some papers, kept only to reproduce them; reports flag it. With
        ``preprocessing = ["zscore", "smote"]`` this is the SMBA-CSFS protocol (Nardone et al.
        2019): synthetic neighbours of every test row sit in the training folds.
    smote_k_neighbors : int or "smallest", default=5
        SMOTE's neighbours: ``min(k, smallest class - 1)``; ``"smallest"`` = smallest class
        - 1 (the SMBA-CSFS code's setting, e.g. 24 on ALLAML).
    n_runs : int, default=20
        k-means runs per k in the unsupervised protocol.
    seed : int, default=0
        The root seed; every (data set, method, fold) gets its own seed derived from it.
    missing_data : {"error", "skip"}, default="error"
        What to do when a data file is absent.
    record_support : bool, default=False
        Keep every fold's scores, ranks and selections (``Results.supports``).
    report : ReportSpec or dict, optional
    quick : dict, optional
        Overrides applied by :meth:`quick_version` (``sparsefs reproduce --quick``).
    name, description : str
    """

    datasets: tuple[DataSpec, ...]
    methods: tuple[MethodSpec, ...]
    protocol: str = "supervised"
    k: Any = "1:80"
    cv: Any = None
    estimators: Any = None
    metrics: Any = None
    preprocessing: Sequence[str] = ()
    preprocessing_scope: str = "fold"
    smote_k_neighbors: Any = 5
    n_runs: int = 20
    seed: int = 0
    missing_data: str = "error"
    record_support: bool = False
    report: Any = None
    quick: Mapping[str, Any] | None = None
    name: str = "experiment"
    description: str = ""

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"protocol={self.protocol!r} is not one of {PROTOCOLS}.")
        datasets = tuple(DataSpec.from_value(d) for d in _as_list(self.datasets, "datasets"))
        methods = tuple(MethodSpec.from_value(m) for m in _as_list(self.methods, "methods"))
        if not datasets:
            raise ValueError("an experiment needs at least one data set.")
        if not methods:
            raise ValueError("an experiment needs at least one method.")
        for kind, items in (("data set", datasets), ("method", methods)):
            labels = [i.display for i in items]
            dup = sorted({x for x in labels if labels.count(x) > 1})
            if dup:
                raise ValueError(f"duplicate {kind} label(s) {dup}; give each a distinct label.")
        object.__setattr__(self, "datasets", datasets)
        object.__setattr__(self, "methods", methods)
        object.__setattr__(self, "k", parse_k_grid(self.k))

        cv = self.cv
        if cv is None:
            cv = (CVSpec() if self.protocol in ("supervised", *OUTCOME_PROTOCOLS)
                  else CVSpec(scheme="none"))
        cv = CVSpec.from_value(cv)
        object.__setattr__(self, "cv", cv)

        est = self.estimators if self.estimators is not None else _DEFAULT_ESTIMATORS[self.protocol]
        est = tuple(EstimatorSpec.from_value(e) for e in _as_list(est, "estimators"))
        if not est:
            raise ValueError("estimators is empty.")
        names = [e.name for e in est]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate estimator names in {names}.")
        object.__setattr__(self, "estimators", est)

        metrics = self.metrics if self.metrics is not None else _DEFAULT_METRICS[self.protocol]
        metrics = tuple(str(m) for m in _as_list(metrics, "metrics"))
        allowed = _PROTOCOL_METRICS[self.protocol]
        bad = [m for m in metrics if m not in allowed]
        if bad or not metrics:
            raise ValueError(
                f"metrics {bad or metrics}: the {self.protocol} protocol computes "
                f"{', '.join(allowed)}."
            )
        object.__setattr__(self, "metrics", metrics)

        prep = tuple(str(p).lower() for p in _as_list(self.preprocessing, "preprocessing"))
        bad = [p for p in prep if p not in PREPROCESSING]
        if bad:
            raise ValueError(f"preprocessing {bad}: known steps are {PREPROCESSING}.")
        object.__setattr__(self, "preprocessing", prep)
        if self.preprocessing_scope not in ("fold", "global"):
            raise ValueError(
                f"preprocessing_scope={self.preprocessing_scope!r}: 'fold' or 'global'."
            )
        k_nn = self.smote_k_neighbors
        if k_nn != "smallest" and (not isinstance(k_nn, int) or isinstance(k_nn, bool)
                                   or k_nn < 1):
            raise ValueError(f"smote_k_neighbors={k_nn!r}: an int >= 1 or 'smallest'.")
        if not isinstance(self.n_runs, int) or isinstance(self.n_runs, bool) or self.n_runs < 1:
            raise ValueError(f"n_runs={self.n_runs!r}: must be an int >= 1.")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise ValueError(f"seed={self.seed!r}: must be an int >= 0.")
        if self.missing_data not in ("error", "skip"):
            raise ValueError(f"missing_data={self.missing_data!r}: 'error' or 'skip'.")
        object.__setattr__(self, "report", ReportSpec.from_value(self.report))
        if self.quick is not None:
            _check_keys(self.quick, _EXPERIMENT_KEYS, "[quick]")
        self._check_protocol()

    def _check_protocol(self) -> None:
        names = [e.name for e in self.estimators]
        if self.protocol == "supervised":
            if "kmeans" in names:
                raise ValueError("estimator 'kmeans' belongs to the unsupervised protocol.")
            if self.cv.scheme == "none":
                raise ValueError(
                    "the supervised protocol needs held-out rows: cv must be 'kfold' or 'split'."
                )
            if "self" in names:
                ranked = [m.display for m in self.methods
                          if m.resolved_mode(self.protocol) == "rank"]
                if ranked:
                    raise ValueError(
                        f"estimator 'self' uses each method's own predictions, which needs one "
                        f"fit per k: give methods {ranked} mode = 'refit' (or 'own')."
                    )
        elif self.protocol in OUTCOME_PROTOCOLS:
            wrong = [n for n in names if n in BUILTIN_ESTIMATORS
                     and n != _DEFAULT_ESTIMATORS[self.protocol][0]]
            if wrong:
                raise ValueError(
                    f"estimators {wrong}: the {self.protocol} protocol's built-in estimator is "
                    f"{_DEFAULT_ESTIMATORS[self.protocol][0]!r} (or a custom "
                    f"{'regressor' if self.protocol == 'regression' else 'risk model'})."
                )
            if self.cv.scheme == "none":
                raise ValueError(f"the {self.protocol} protocol needs held-out rows: cv must be "
                                 "'kfold' or 'split'.")
        elif self.protocol == "unsupervised":
            if names != ["kmeans"]:
                raise ValueError("the unsupervised protocol's estimator is 'kmeans' only.")
        else:
            if names != ["self"]:
                raise ValueError("the clustering protocol evaluates the clusterers' own labels "
                                 "(estimators = ['self']).")
            if self.cv.scheme != "none":
                raise ValueError("the clustering protocol uses cv = 'none' (with n_repeats).")
            if "smote" in self.preprocessing:
                raise ValueError("SMOTE needs labels; it has no place in the clustering protocol.")
            ranked = [m.display for m in self.methods if m.resolved_mode(self.protocol) == "rank"]
            if ranked:
                raise ValueError(
                    f"methods {ranked}: the clustering protocol evaluates each clusterer's own "
                    "labels; use mode 'own' or 'refit'."
                )
        if "smote" in self.preprocessing and self.protocol != "supervised":
            raise ValueError("SMOTE is for the supervised protocol only.")

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, base_dir: str | Path | None = None
                  ) -> ExperimentSpec:
        """Build from plain data (a parsed TOML document).

        Parameters
        ----------
        data : mapping
            Keys as the parameters of this class; ``datasets`` / ``methods`` are lists of
            tables or strings.
        base_dir : path, optional
            Relative data paths are resolved against it.

        Returns
        -------
        ExperimentSpec
        """
        _check_keys(data, _EXPERIMENT_KEYS, "experiment")
        data = dict(data)
        if base_dir is not None:
            data["datasets"] = [
                _resolve_path(d, Path(base_dir)) for d in _as_list(data.get("datasets"), "datasets")
            ]
        if "datasets" not in data or "methods" not in data:
            raise ValueError("an experiment needs 'datasets' and 'methods'.")
        return cls(**data)

    @classmethod
    def from_toml(cls, path: str | Path) -> ExperimentSpec:
        """Read a TOML file whose top level is one experiment.

        Examples
        --------
        A file such as::

            name = "fisher-demo"
            protocol = "supervised"
            k = "1:20"
            cv = 5
            estimators = ["svm", "nb"]

            [[datasets]]
            name = "default"

            [[methods]]
            stem = "fisher_score"
        """
        path = Path(path)
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
        return cls.from_dict(data, base_dir=path.parent)

    def to_dict(self) -> dict[str, Any]:
        """Plain data that :meth:`from_dict` reads back (used for the hash and metadata)."""
        report = self.report
        return {
            "name": self.name,
            "description": self.description,
            "protocol": self.protocol,
            "datasets": [d.to_dict() for d in self.datasets],
            "methods": [m.to_dict() for m in self.methods],
            "k": list(self.k),
            "cv": self.cv.to_dict(),
            "estimators": [e.to_dict() for e in self.estimators],
            "metrics": list(self.metrics),
            "preprocessing": list(self.preprocessing),
            "preprocessing_scope": self.preprocessing_scope,
            # only when changed, so that the hashes of existing specs stay the same
            **({} if self.smote_k_neighbors == 5 else
               {"smote_k_neighbors": self.smote_k_neighbors}),
            "n_runs": self.n_runs,
            "seed": self.seed,
            "missing_data": self.missing_data,
            "record_support": self.record_support,
            "report": {f.name: getattr(report, f.name) for f in fields(report)},
        }

    def spec_hash(self) -> str:
        """sha256 (first 16 hex digits) of the canonical JSON of :meth:`to_dict`.

        Import paths of moved code are hashed under their names before the move
        (:data:`HASH_RENAMES`), and a method parameter equal to the estimator's former default
        is left out (:data:`HASH_FORMER_DEFAULTS`): neither is a change of the experiment, and
        stored runs keep matching their configs.
        """
        text = json.dumps(_jsonable(_hash_view(self.to_dict())), sort_keys=True,
                          separators=(",", ":"))
        for new, old in HASH_RENAMES:
            text = text.replace(new, old)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def quick_version(self) -> ExperimentSpec:
        """A reduced copy that runs in seconds (``sparsefs reproduce --quick``).

        Without a ``quick`` table: the first two data sets, at most four k values spread over
        the grid, at most 3 folds / 3 splits / 2 repetitions, at most 5 k-means runs. A
        ``quick`` table overrides any key; ``datasets`` / ``methods`` given as a list of
        labels keep those entries.
        """
        grid = np.asarray(self.k)
        pick = np.unique(np.round(np.linspace(0, grid.size - 1, min(4, grid.size))).astype(int))
        cv = self.cv
        if cv.scheme == "kfold":
            cv = replace(cv, n_splits=min(cv.n_splits, 3), n_repeats=1)
        else:
            cv = replace(cv, n_repeats=min(cv.n_repeats, 3 if cv.scheme == "split" else 2))
        spec = replace(
            self,
            datasets=self.datasets[:2],
            k=tuple(int(v) for v in grid[pick]),
            cv=cv,
            n_runs=min(self.n_runs, 5),
            quick=None,
        )
        if not self.quick:
            return spec
        over = dict(self.quick)
        for key, items in (("datasets", self.datasets), ("methods", self.methods)):
            chosen = over.get(key)
            if chosen is not None and all(isinstance(c, str) for c in chosen):
                by_label = {i.display: i for i in items}
                missing = [c for c in chosen if c not in by_label]
                if missing:
                    raise ValueError(f"[quick] {key}: no entry labelled {missing}.")
                over[key] = tuple(by_label[c] for c in chosen)
        if "cv" in over and isinstance(over["cv"], Mapping):
            over["cv"] = replace(self.cv, **over["cv"])
        return replace(spec, **over)


def _as_list(value: Any, name: str) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str | Mapping | DataSpec | MethodSpec | EstimatorSpec):
        return [value]
    if isinstance(value, Sequence):
        return list(value)
    raise TypeError(f"{name} must be a list, got {type(value).__name__}.")


def _resolve_path(entry: Any, base: Path) -> Any:
    if isinstance(entry, Mapping) and entry.get("path"):
        p = Path(entry["path"]).expanduser()
        if not p.is_absolute():
            entry = {**entry, "path": str((base / p).resolve())}
    return entry


# --------------------------------------------------------------------------------------------
# reproductions: experiments + the paper's values
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PaperValue:
    """One number transcribed from a paper.

    Parameters
    ----------
    dataset, method : str
        Labels as in the experiment (so our number can be matched).
    value : float
        As printed (see ``PaperTable.scale``).
    sd : float, optional
    k : int, optional
        The number of features the paper reports with it.
    note : str
        Anything odd about the printed value (a typo, a value outside the stated range).
    """

    dataset: str
    method: str
    value: float
    sd: float | None = None
    k: int | None = None
    note: str = ""


@dataclass(frozen=True)
class PaperTable:
    """A table of the paper, with how to compute our matching numbers.

    Parameters
    ----------
    id : str
        E.g. ``"Table 2"``.
    source : str
        The full source: paper, table, what the cells mean.
    experiment : str, optional
        The experiment (by name) our numbers come from (default: the first).
    metric, estimator : str
        Which of our metrics, from which downstream estimator.
    statistic : {"best_over_k", "mean_over_k", "at_k"}, default="best_over_k"
    k_max : int, optional
        For ``best_over_k`` / ``mean_over_k``: only k <= k_max.
    k : int, optional
        For ``at_k``.
    scale : float, default=1.0
        Printed value = ours * scale (100 for percentages).
    values : tuple of PaperValue
    """

    id: str
    source: str
    metric: str
    estimator: str | None = None
    experiment: str | None = None
    statistic: str = "best_over_k"
    k_max: int | None = None
    k: int | None = None
    scale: float = 1.0
    values: tuple[PaperValue, ...] = ()

    def __post_init__(self) -> None:
        if self.statistic not in ("best_over_k", "mean_over_k", "at_k"):
            raise ValueError(
                f"paper table {self.id!r}: statistic={self.statistic!r} is not one of "
                "best_over_k, mean_over_k, at_k."
            )
        if self.statistic == "at_k" and self.k is None:
            raise ValueError(f"paper table {self.id!r}: statistic 'at_k' needs k.")
        vals = []
        for v in self.values:
            if isinstance(v, PaperValue):
                vals.append(v)
            else:
                _check_keys(v, [f.name for f in fields(PaperValue)], f"{self.id} values")
                vals.append(PaperValue(**v))
        object.__setattr__(self, "values", tuple(vals))


CLAIM_VERDICTS = ("reproduced", "partly", "not reproduced", "inconclusive", "not attempted")
"""The verdicts of a reproduction report's Claims table (``inconclusive``: the numbers were
computed but cannot decide the claim, e.g. every method ties at a ceiling)."""


@dataclass(frozen=True)
class PaperClaim:
    """A claim of the paper, and how the report judges it.

    Parameters
    ----------
    text : str
        The claim, quoted from the paper.
    source : str
        Section / table / figure.
    id : str
        A short stable key (tests and hooks refer to it).
    paper : str
        The paper's figure, where it has one.
    check : str
        ``"module:function"`` called as ``function(reproduction, **args)``; it computes ours, the
        verdict and its reason from the stored results (numeric claims), returning a
        :class:`sparsefs.harness.ClaimVerdict`.
    args : dict
        Keyword arguments of ``check``.
    verdict, why, ours : str
        A fixed verdict (one of :data:`CLAIM_VERDICTS`), its one-line reason and our figure, for
        claims no number can decide (used when ``check`` is empty).
    diagnosis : str
        A sentence appended to the reason when the verdict is ``partly`` or ``not reproduced``
        (data, protocol, tuning or method).
    """

    text: str
    source: str = ""
    id: str = ""
    paper: str = ""
    check: str = ""
    args: Mapping[str, Any] = field(default_factory=dict)
    verdict: str = ""
    why: str = ""
    ours: str = ""
    diagnosis: str = ""

    def __post_init__(self) -> None:
        if not self.check and self.verdict not in CLAIM_VERDICTS:
            raise ValueError(
                f"claim {self.id or self.text[:40]!r}: give check = 'module:function' or a "
                f"verdict in {CLAIM_VERDICTS}, got verdict={self.verdict!r}."
            )
        if self.verdict and self.verdict not in CLAIM_VERDICTS:
            raise ValueError(f"claim {self.id!r}: verdict={self.verdict!r} is not one of "
                             f"{CLAIM_VERDICTS}.")


@dataclass(frozen=True)
class ReproductionSpec:
    """A paper reproduction: experiments, the paper's values and claims, report hooks.

    The TOML layout (``configs/<stem>.toml``)::

        [reproduction]
        title = "..."
        reference = "Authors, title, venue, year"
        description = "..."
        hooks = ["module:function"]       # optional extra report sections

        [[experiments]]                   # one or more ExperimentSpec tables
        name = "main"
        ...
        [[experiments.datasets]]
        ...
        [[experiments.methods]]
        ...

        [[paper.tables]]                  # optional; or file = "sidecar.csv"
        id = "Table 2"
        source = "..."
        metric = "accuracy"
        ...
        values = [{dataset = "ALLAML", method = "Fisher", value = 96.84, sd = 0.04, k = 19}]

        [[paper.claims]]
        text = "..."
        source = "..."
    """

    stem: str
    title: str
    experiments: tuple[ExperimentSpec, ...]
    reference: str = ""
    description: str = ""
    tables: tuple[PaperTable, ...] = ()
    claims: tuple[PaperClaim, ...] = ()
    hooks: tuple[str, ...] = ()
    path: str | None = None
    protocol: tuple[str, ...] = ()

    @classmethod
    def from_toml(cls, path: str | Path) -> ReproductionSpec:
        """Read ``configs/<stem>.toml``; the stem is the file name."""
        path = Path(path)
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
        return cls.from_dict(data, stem=path.name.removesuffix(".toml"), base_dir=path.parent,
                             path=str(path))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, stem: str, base_dir: str | Path | None = None,
                  path: str | None = None) -> ReproductionSpec:
        """Build from plain data (a parsed TOML document)."""
        _check_keys(data, ["reproduction", "experiments", "paper"], f"{stem}.toml")
        head = dict(data.get("reproduction", {}))
        _check_keys(head, ["title", "reference", "description", "hooks", "protocol"],
                    "[reproduction]")
        raw = data.get("experiments")
        if not raw:
            raise ValueError(f"{stem}.toml: no [[experiments]] table.")
        experiments = tuple(ExperimentSpec.from_dict(e, base_dir=base_dir) for e in raw)
        names = [e.name for e in experiments]
        if len(set(names)) != len(names):
            raise ValueError(f"{stem}.toml: experiment names {names} must be distinct.")
        paper = dict(data.get("paper", {}))
        _check_keys(paper, ["tables", "claims"], "[paper]")
        tables = []
        for t in paper.get("tables", []):
            t = dict(t)
            _check_keys(t, [*(f.name for f in fields(PaperTable)), "file"], "[[paper.tables]]")
            if "file" in t:
                t["values"] = _read_values_file(Path(base_dir or ".") / t.pop("file"))
            table = PaperTable(**t)
            if table.experiment is not None and table.experiment not in names:
                raise ValueError(
                    f"paper table {table.id!r}: experiment {table.experiment!r} is not one of "
                    f"{names}."
                )
            tables.append(table)
        claims = []
        for c in paper.get("claims", []):
            _check_keys(c, [f.name for f in fields(PaperClaim)], "[[paper.claims]]")
            claims.append(PaperClaim(**c))
        return cls(
            stem=stem,
            title=head.get("title", stem),
            reference=head.get("reference", ""),
            description=head.get("description", ""),
            hooks=tuple(head.get("hooks", ())),
            protocol=tuple(head.get("protocol", ())),
            experiments=experiments,
            tables=tuple(tables),
            claims=tuple(claims),
            path=path,
        )

    def quick_version(self) -> ReproductionSpec:
        """Every experiment reduced by :meth:`ExperimentSpec.quick_version`."""
        return replace(self, experiments=tuple(e.quick_version() for e in self.experiments))

    def experiment(self, name: str | None) -> ExperimentSpec:
        """The experiment called ``name`` (the first when ``None``)."""
        if name is None:
            return self.experiments[0]
        for e in self.experiments:
            if e.name == name:
                return e
        raise KeyError(name)


def _read_values_file(path: Path) -> list[dict[str, Any]]:
    """Paper values from a CSV sidecar with columns dataset, method, value[, sd, k, note]."""
    import pandas as pd

    frame = pd.read_csv(path)
    missing = {"dataset", "method", "value"} - set(frame.columns)
    if missing:
        raise ValueError(f"{path.name}: missing column(s) {sorted(missing)}.")
    out = []
    for row in frame.to_dict("records"):
        rec: dict[str, Any] = {"dataset": str(row["dataset"]), "method": str(row["method"]),
                               "value": float(row["value"])}
        for key, conv in (("sd", float), ("k", int), ("note", str)):
            if key in row and not pd.isna(row[key]):
                rec[key] = conv(row[key])
        out.append(rec)
    return out
