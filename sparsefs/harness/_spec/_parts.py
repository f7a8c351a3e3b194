"""The parts of an experiment: its data sets, methods, downstream estimators, resampling
scheme and report options (each a frozen dataclass read from a TOML table)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from sparsefs.harness._spec._common import (
    BUILTIN_ESTIMATORS,
    MODES,
    SCHEMES,
    _check_keys,
    _jsonable,
)


def _set_fields(spec: Any, is_set: Any) -> dict[str, Any]:
    """The fields of the dataclass ``spec`` whose value passes ``is_set``, as plain data."""
    return {f.name: _jsonable(getattr(spec, f.name)) for f in fields(spec)
            if is_set(getattr(spec, f.name))}


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
        return _set_fields(self, lambda value: value not in (None, False, {}))


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
        return _set_fields(self, lambda value: value is not None and value != {})


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
