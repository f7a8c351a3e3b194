"""The standing benchmarks as declarative specs: ``configs/standing/<benchmark>.toml``.

A :class:`StandingSpec` names one benchmark (``microarray``, ``markers`` or ``clustering``),
its data sets, its methods (sparsefs stems, peers from other packages, baselines) and the
protocol's numbers (the k grid, the folds, the time budget of a cell). Unknown keys are
errors, as in every harness spec.

Every (data set, method) **cell** is computed and stored on its own (``_store.py``); its
hash (:meth:`StandingSpec.cell_hash`) covers everything that can change its numbers (the
method's entry, the data set's entry and the benchmark's protocol), so a rerun recomputes
exactly the cells whose definition changed and keeps the rest.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from sparsefs.harness._spec._common import _check_keys, _jsonable, parse_k_grid
from sparsefs.harness._spec._parts import DataSpec, MethodSpec

__all__ = [
    "BENCHMARKS",
    "KINDS",
    "StandingData",
    "StandingMethod",
    "StandingSpec",
    "cell_seed",
    "find_standing_config",
    "load_standing_spec",
]

BENCHMARKS: dict[str, str] = {
    "a": "microarray",
    "b": "markers",
    "c": "clustering",
}
"""The three benchmarks of ``docs/standing.md`` by their letter in issue #29."""

KINDS: tuple[str, ...] = ("sparsefs", "peer", "baseline")
"""What a method is: a registered sparsefs method, a peer from another package (run in the
same process), or a reference baseline (random ranking, all features; shown, never ranked)."""

INPUTS: tuple[str, ...] = ("zscore", "raw")
"""What a method is fed: features z-scored with the training rows' statistics (``zscore``),
or the data as stored (``raw``: variance and chi-square filters, which z-scoring would make
meaningless)."""

K_CHOICES: tuple[str, ...] = ("inner_cv", "own")


def _crc(text: str) -> int:
    return zlib.crc32(text.encode("utf-8")) & 0x7FFFFFFF


def cell_seed(root: int, dataset: str, method: str, *key: int) -> int:
    """A 32-bit seed of one (data set, method, ...) stream, from labels rather than positions.

    Seeds are tied to the *labels* so that adding, removing or reordering methods and data
    sets never changes the numbers of the others (the store keeps cells by label). ``method``
    ``""`` is the data set's own stream (its splits), shared by every method.

    Examples
    --------
    >>> cell_seed(0, "ALLAML", "", 1) == cell_seed(0, "ALLAML", "", 1)
    True
    >>> cell_seed(0, "ALLAML", "lasso", 0) != cell_seed(0, "ALLAML", "fisher_score", 0)
    True
    """
    seq = np.random.SeedSequence(entropy=int(root),
                                 spawn_key=(_crc(dataset), _crc(method), *map(int, key)))
    return int(seq.generate_state(1, dtype=np.uint32)[0])


@dataclass(frozen=True)
class StandingData:
    """One data set of a standing benchmark.

    Exactly one source: ``name`` (an ASU set, :func:`sparsefs.datasets.fetch_asu`), ``file``
    (a file in ``$SPARSEFS_DATA``), ``loader`` (``"module:function"`` returning a
    :class:`~sparsefs.datasets.Dataset` or a simulation) with ``params``.

    Parameters
    ----------
    label : str
        The name in tables and in the store.
    half : {"A", "B", ""}
        The half of the data sets it belongs to for the defaults policy
        (``docs/contract.md``, "Changing a default").
    note : str
        Shown on the page (what the data are, why this cohort).
    """

    label: str
    name: str | None = None
    file: str | None = None
    loader: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    half: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        given = [k for k in ("name", "file", "loader") if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(f"data set {self.label!r}: give exactly one of name, file, loader; "
                             f"got {given or 'none'}.")
        if self.half not in ("A", "B", ""):
            raise ValueError(f"data set {self.label!r}: half={self.half!r} must be 'A' or 'B'.")
        object.__setattr__(self, "params", dict(self.params))

    def data_spec(self) -> DataSpec:
        """The harness :class:`~sparsefs.harness.DataSpec` that loads it."""
        if self.name:
            return DataSpec(name=self.name, label=self.label)
        if self.file:
            return DataSpec(loader="sparsefs.harness.standing._data:shared_file",
                            params={"file": self.file, **self.params}, label=self.label)
        return DataSpec(loader=self.loader, params=self.params, label=self.label)

    def to_dict(self) -> dict[str, Any]:
        """The fields that define the data (not ``half`` or ``note``)."""
        return {k: _jsonable(getattr(self, k)) for k in ("label", "name", "file", "loader",
                                                         "params") if getattr(self, k)}


@dataclass(frozen=True)
class StandingMethod:
    """One method of a standing benchmark.

    Parameters
    ----------
    label : str
        The name in tables (default: the stem or the class name).
    stem : str, optional
        A registry stem.
    estimator : str, optional
        ``"module:Class"`` (peers and baselines): a scikit-learn style selector exposing
        ``ranking_``, ``scores_``, ``feature_importances_`` or ``coef_``.
    params : dict
        Constructor parameters (the runner adds ``random_state`` and ``n_features_to_select``
        where accepted and not given).
    kind : {"sparsefs", "peer", "baseline"}
        Default: ``sparsefs`` with a stem, else ``peer``.
    input : {"zscore", "raw"}, default="zscore"
    k_choice : {"inner_cv", "own"}, default="inner_cv"
        How the number of features fed to the classifiers is chosen (microarray benchmark):
        by the inner cross-validation, or the method's own rule (``n_features_to_select=None``;
        e.g. the sparse center classifier's own CV).
    own_predictions : bool, default=False
        Also score the method's own ``predict`` (a selecting classifier), with its own nested
        choice of k (refitted inside the inner folds).
    budget_s : float, optional
        The cell's time budget (default: the benchmark's).
    package : str, optional
        The distribution that must be importable for a peer (``scanpy``, ``skrebate``, ...);
        a missing one makes the cell "not installed" (said so on the page).
    note : str
        Shown on the page: a setting cheaper than the default, a licence, a caveat.
    """

    label: str
    stem: str | None = None
    estimator: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    kind: str = ""
    input: str = "zscore"
    k_choice: str = "inner_cv"
    own_predictions: bool = False
    budget_s: float | None = None
    package: str | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if self.stem and self.estimator:
            raise ValueError(f"method {self.label!r}: give stem or estimator, not both.")
        kind = self.kind or ("sparsefs" if self.stem else "peer")
        if kind not in KINDS:
            raise ValueError(f"method {self.label!r}: kind={kind!r} is not one of {KINDS}.")
        if kind != "baseline" and not (self.stem or self.estimator):
            raise ValueError(f"method {self.label!r}: a {kind} needs a stem or an estimator.")
        if self.input not in INPUTS:
            raise ValueError(f"method {self.label!r}: input={self.input!r} not in {INPUTS}.")
        if self.k_choice not in K_CHOICES:
            raise ValueError(f"method {self.label!r}: k_choice={self.k_choice!r} not in "
                             f"{K_CHOICES}.")
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "params", dict(self.params))

    @property
    def method_spec(self) -> MethodSpec:
        """The harness :class:`~sparsefs.harness.MethodSpec` (for ``build_method``)."""
        if self.kind == "baseline" and not (self.stem or self.estimator):
            return MethodSpec(label=self.label, mode="all")
        return MethodSpec(stem=self.stem, estimator=self.estimator, params=self.params,
                          label=self.label)

    def to_dict(self) -> dict[str, Any]:
        """The fields that define the numbers (not ``note``, ``package`` or ``budget_s``)."""
        keys = ("label", "stem", "estimator", "params", "kind", "input", "k_choice",
                "own_predictions")
        return {k: _jsonable(getattr(self, k)) for k in keys
                if getattr(self, k) not in (None, {}, False, "")}


@dataclass(frozen=True)
class StandingSpec:
    """One standing benchmark: data sets x methods, and the protocol.

    Parameters
    ----------
    benchmark : {"microarray", "markers", "clustering"}
    title, description : str
    datasets : tuple of StandingData
    methods : tuple of StandingMethod
    protocol : dict
        The benchmark's numbers (read by its cell function; see the config files): e.g.
        ``k``, ``outer_splits``, ``inner_splits``, ``classifiers``, ``stability_k``.
    simple : tuple of str
        Labels of the simple methods among which the "simple winner" is chosen (the method of
        best average rank among them is the reference of the pairwise tests and verdicts).
    budget_s : float
        Time budget of one cell (data set x method), in seconds of wall time; a cell that runs
        longer is stopped and shown as "not run in budget" (as Bommert et al. 2020 did).
    seed : int
    quick : dict, optional
        Overrides of :meth:`quick_version` (``datasets`` / ``methods`` as lists of labels,
        ``protocol`` keys merged, ``budget_s``).
    path : str, optional
        The TOML file it was read from.
    name : str
        The name of its results directory (default: ``benchmark``); a study that reuses a
        benchmark's protocol (``configs/standing/defaults_smba_csfs.toml``) has its own.
    """

    benchmark: str
    title: str
    datasets: tuple[StandingData, ...]
    methods: tuple[StandingMethod, ...]
    protocol: Mapping[str, Any] = field(default_factory=dict)
    simple: tuple[str, ...] = ()
    budget_s: float = 300.0
    seed: int = 0
    description: str = ""
    quick: Mapping[str, Any] | None = None
    is_quick: bool = False
    path: str | None = None
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", self.name or self.benchmark)
        if self.benchmark not in BENCHMARKS.values():
            raise ValueError(f"benchmark={self.benchmark!r} is not one of "
                             f"{sorted(BENCHMARKS.values())}.")
        for kind, items in (("data set", self.datasets), ("method", self.methods)):
            labels = [i.label for i in items]
            dup = sorted({x for x in labels if labels.count(x) > 1})
            if dup:
                raise ValueError(f"{self.benchmark}: duplicate {kind} label(s) {dup}.")
            if not labels:
                raise ValueError(f"{self.benchmark}: no {kind}s.")
        missing = [s for s in self.simple if s not in {m.label for m in self.methods}]
        if missing:
            raise ValueError(f"{self.benchmark}: simple = {missing} are not method labels.")
        if "k" in self.protocol:
            parse_k_grid(self.protocol["k"])
        object.__setattr__(self, "protocol", dict(self.protocol))
        object.__setattr__(self, "simple", tuple(self.simple))

    # -- reading ----------------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, path: str | None = None) -> StandingSpec:
        """Build from a parsed TOML document (``[standing]``, ``[protocol]``,
        ``[[datasets]]``, ``[[methods]]``, ``[quick]``)."""
        _check_keys(data, ["standing", "protocol", "datasets", "methods", "quick"],
                    "standing config")
        head = dict(data.get("standing", {}))
        _check_keys(head, ["benchmark", "name", "title", "description", "simple", "budget_s",
                           "seed"], "[standing]")
        datasets = []
        for d in data.get("datasets", []):
            _check_keys(d, [f.name for f in fields(StandingData)], "[[datasets]]")
            datasets.append(StandingData(**d))
        methods = []
        for m in data.get("methods", []):
            _check_keys(m, [f.name for f in fields(StandingMethod)], "[[methods]]")
            m = dict(m)
            m.setdefault("label", m.get("stem") or str(m.get("estimator", "")).rsplit(":")[-1])
            methods.append(StandingMethod(**m))
        quick = data.get("quick")
        if quick is not None:
            _check_keys(quick, ["datasets", "methods", "protocol", "budget_s", "params",
                                "data_params"], "[quick]")
        return cls(benchmark=head.get("benchmark", ""), title=head.get("title", ""),
                   description=head.get("description", ""), datasets=tuple(datasets),
                   methods=tuple(methods), protocol=dict(data.get("protocol", {})),
                   simple=tuple(head.get("simple", ())),
                   budget_s=float(head.get("budget_s", 300.0)), seed=int(head.get("seed", 0)),
                   quick=quick, path=path, name=str(head.get("name", "")))

    @classmethod
    def from_toml(cls, path: str | Path) -> StandingSpec:
        """Read ``configs/standing/<benchmark>.toml``."""
        path = Path(path)
        with open(path, "rb") as fh:
            return cls.from_dict(tomllib.load(fh), path=str(path))

    # -- variants ----------------------------------------------------------------------------

    def quick_version(self) -> StandingSpec:
        """The reduced benchmark of ``--quick`` (its ``[quick]`` table).

        ``datasets`` / ``methods``: labels to keep (default: all); ``protocol``: keys
        replaced; ``params``: ``{label = {param = value}}`` replacing a method's parameters
        (a cheaper setting for the quick run); ``data_params``: the same for a data set's
        loader parameters (a smaller simulation); ``budget_s``.
        """
        over = dict(self.quick or {})
        datasets = _keep_labelled(self.datasets, over, "datasets", "data set")
        methods = _keep_labelled(self.methods, over, "methods", "method")
        methods = _with_params(methods, over, "params", "method")
        datasets = _with_params(datasets, over, "data_params", "data set")
        simple = tuple(s for s in self.simple if s in {m.label for m in methods})
        return replace(self, datasets=datasets, methods=methods, simple=simple,
                       protocol={**self.protocol, **dict(over.get("protocol", {}))},
                       budget_s=float(over.get("budget_s", self.budget_s)), quick=None,
                       is_quick=True)

    # -- identities ---------------------------------------------------------------------------

    def protocol_dict(self) -> dict[str, Any]:
        """What every cell's numbers depend on besides its method and data set (with the
        version of the benchmark's cell function)."""
        return {"benchmark": self.benchmark, "protocol": _jsonable(self.protocol),
                "seed": self.seed, "version": _cell_version(self.benchmark)}

    def cell_hash(self, dataset: StandingData, method: StandingMethod) -> str:
        """sha256 (16 hex digits) of the cell's definition: a stored cell with another hash
        is recomputed."""
        method_dict = method.to_dict()
        if self.benchmark == "microarray" and method.input == "raw":
            # since microarray VERSION 2: raw input ranks, the classifiers see z-scores
            method_dict["classifier_input"] = "zscore"
        text = json.dumps({"protocol": self.protocol_dict(), "data": dataset.to_dict(),
                           "method": method_dict}, sort_keys=True,
                          separators=(",", ":"), default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def method(self, label: str) -> StandingMethod:
        """The method labelled ``label``."""
        for m in self.methods:
            if m.label == label:
                return m
        raise KeyError(label)

    def dataset(self, label: str) -> StandingData:
        """The data set labelled ``label``."""
        for d in self.datasets:
            if d.label == label:
                return d
        raise KeyError(label)

    def k_grid(self) -> tuple[int, ...]:
        """The protocol's k grid (``protocol.k``)."""
        return parse_k_grid(self.protocol.get("k", "1:20"))


def _keep_labelled(items: tuple, over: Mapping[str, Any], key: str, noun: str) -> tuple:
    """``over[key]``: the labels of ``items`` to keep, in that order (default: all)."""
    if key not in over:
        return items
    by = {x.label: x for x in items}
    missing = [x for x in over[key] if x not in by]
    if missing:
        raise ValueError(f"[quick] {key}: no {noun} labelled {missing}.")
    return tuple(by[x] for x in over[key])


def _with_params(items: tuple, over: Mapping[str, Any], key: str, noun: str) -> tuple:
    """``over[key]``: ``{label = {param = value}}`` replacing the parameters of ``items``."""
    new = dict(over.get(key, {}))
    unknown = sorted(set(new) - {x.label for x in items})
    if unknown:
        raise ValueError(f"[quick] {key}: no {noun} labelled {unknown}.")
    return tuple(replace(x, params={**x.params, **new[x.label]}) if x.label in new else x
                 for x in items)


def _cell_version(benchmark: str) -> int:
    import importlib

    module = {"microarray": "_microarray", "markers": "_markers", "clustering": "_clustering"}
    return int(importlib.import_module(f"sparsefs.harness.standing.{module[benchmark]}").VERSION)


def _config_dirs(config_dir: str | Path | None) -> list[Path]:
    from sparsefs.harness._reproduce import config_dirs

    return [d / "standing" for d in config_dirs(config_dir) if (d / "standing").is_dir()]


def find_standing_config(benchmark: str, config_dir: str | Path | None = None) -> Path:
    """``configs/standing/<benchmark>.toml`` (``a`` / ``b`` / ``c``, a benchmark or a study
    name).

    Raises
    ------
    FileNotFoundError
        With the directories searched.
    """
    name = BENCHMARKS.get(benchmark, benchmark)
    as_path = Path(benchmark)
    if as_path.suffix == ".toml" and as_path.is_file():
        return as_path
    dirs = _config_dirs(config_dir)
    for d in dirs:
        if (d / f"{name}.toml").is_file():
            return d / f"{name}.toml"
    raise FileNotFoundError(
        f"no standing config {name!r} (searched {', '.join(map(str, dirs)) or 'no configs/'}"
        "standing directory found); set SPARSEFS_CONFIGS or pass a .toml path"
    )


def load_standing_spec(benchmark: str, *, quick: bool = False,
                       config_dir: str | Path | None = None) -> StandingSpec:
    """The spec of one benchmark (its quick version with ``quick=True``)."""
    spec = StandingSpec.from_toml(find_standing_config(benchmark, config_dir))
    return spec.quick_version() if quick else spec
