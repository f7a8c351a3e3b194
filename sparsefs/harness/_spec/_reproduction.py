"""Reproductions: experiments plus the paper's values, tables and claims
(:class:`ReproductionSpec`, read from ``configs/<stem>.toml``)."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from sparsefs.harness._spec._common import (
    _check_keys,
)
from sparsefs.harness._spec._experiment import (
    ExperimentSpec,
)


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
