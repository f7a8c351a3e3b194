"""The Claims table of a reproduction report: a verdict for every claim of the paper.

A claim is declared in ``configs/<stem>.toml`` (``[[paper.claims]]``, see
:class:`~sparsefs.harness.PaperClaim`). A numeric claim names a ``check`` function
(``"module:function"``, usually in :mod:`sparsefs.harness.hooks`) that reads the stored
results and returns a :class:`ClaimVerdict`, so that a rerun updates the verdict; a claim that
no number of ours can decide carries a fixed verdict and its reason in the config.

The verdicts (:data:`CLAIM_VERDICTS`):

* ``reproduced``: our numbers say what the paper says (within the tolerance the check states);
* ``partly``: some of it holds (some data sets, some of the statement), or it holds only in trend;
* ``not reproduced``: our numbers contradict it; the reason says why (data, protocol, tuning or
  method) when we know;
* ``inconclusive``: our numbers were computed but cannot decide it (every method ties at a
  ceiling, such as a clustering error of 0 for all: "beats" is then neither true nor false);
* ``not attempted``: not run here, with the reason (data not available offline, an experiment
  not implemented, a quick run that leaves it out).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sparsefs.harness._data import import_object
from sparsefs.harness._results import Results
from sparsefs.harness._spec._reproduction import CLAIM_VERDICTS, PaperClaim, ReproductionSpec

__all__ = [
    "CLAIM_VERDICTS",
    "ClaimNotRun",
    "ClaimRow",
    "ClaimVerdict",
    "claims_markdown",
    "evaluate_claims",
    "experiment_results",
    "fraction_verdict",
    "paper_table_agreement",
    "values_agreement",
]


@dataclass(frozen=True)
class ClaimVerdict:
    """What a claim check returns.

    Parameters
    ----------
    verdict : str
        One of :data:`CLAIM_VERDICTS`.
    ours : str
        Our figure, in a few words (``"0.975 (k = 19)"``, ``"12 of 20 data sets"``).
    why : str
        One line: why this verdict.
    paper : str, optional
        The paper's figure when the check computes it (else the config's ``paper``).
    """

    verdict: str
    ours: str
    why: str
    paper: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in CLAIM_VERDICTS:
            raise ValueError(f"verdict={self.verdict!r} is not one of {CLAIM_VERDICTS}.")


class ClaimNotRun(Exception):
    """Raised by a claim check when the results it needs are absent (the claim is then
    ``not attempted`` with the exception's message as the reason)."""


@dataclass(frozen=True)
class ClaimRow:
    """One row of the Claims table (a :class:`PaperClaim` with its verdict)."""

    id: str
    claim: str
    source: str
    paper: str
    ours: str
    verdict: str
    why: str


def experiment_results(reproduction: Any, name: str) -> Results:
    """The results of experiment ``name`` of a reproduction; :class:`ClaimNotRun` when absent
    or empty (every data set skipped)."""
    for r in reproduction.results:
        if r.meta.get("experiment") == name:
            if r.table.empty:
                raise ClaimNotRun(f"experiment `{name}` has no results (its data sets were "
                                  "skipped)")
            return r
    raise ClaimNotRun(f"experiment `{name}` was not run")


def fraction_verdict(n_ok: int, n: int, *, all_for_reproduced: bool = True,
                     partly_at: float = 0.25) -> str:
    """``reproduced`` when every case holds (or, with ``all_for_reproduced=False``, at least
    three quarters), ``partly`` when at least ``partly_at`` of them do, else ``not reproduced``."""
    if n == 0:
        return "not attempted"
    share = n_ok / n
    if (n_ok == n) if all_for_reproduced else share >= 0.75:
        return "reproduced"
    return "partly" if share >= partly_at else "not reproduced"


def paper_table_agreement(reproduction: Any, *, table: str, tolerance: float,
                          methods: Sequence[str] | None = None,
                          datasets: Sequence[str] | None = None) -> ClaimVerdict:
    """A paper table, cell by cell: how many of our numbers lie within ``tolerance`` of the
    paper's (in the paper's printed units, e.g. percentage points).

    ``reproduced`` when at least three quarters of the cells we ran agree, ``partly`` when at
    least a quarter do, else ``not reproduced``.
    """
    from sparsefs.harness._tables import paper_comparison

    spec: ReproductionSpec = reproduction.spec
    matches = [t for t in spec.tables if t.id == table]
    if not matches:
        raise ValueError(f"claim check: no paper table {table!r} in {spec.stem}.toml "
                         f"(tables: {[t.id for t in spec.tables]}).")
    t = matches[0]
    res = experiment_results(reproduction, t.experiment or spec.experiments[0].name)
    try:
        comp = paper_comparison(t, res)
    except ValueError as exc:  # the metric / estimator was not recorded by this run
        raise ClaimNotRun(f"{table}: {exc}") from exc
    if methods is not None:
        comp = comp[comp["method"].isin(list(methods))]
    if datasets is not None:
        comp = comp[comp["dataset"].isin(list(datasets))]
    ran = comp[np.isfinite(comp["ours"].to_numpy(dtype=float))]
    if ran.empty:
        raise ClaimNotRun(f"none of the data sets of {table} was run here")
    diff = ran["difference"].abs().to_numpy(dtype=float)
    n_ok = int((diff <= tolerance).sum())
    verdict = fraction_verdict(n_ok, len(ran), all_for_reproduced=False)
    worst = ran.iloc[int(np.argmax(diff))]
    return ClaimVerdict(
        verdict=verdict,
        ours=f"{n_ok} of {len(ran)} cells within ±{tolerance:g}; median |ours − paper| "
             f"{np.median(diff):.2f}",
        why=f"largest gap {worst['difference']:+.2f} ({worst['method']}, {worst['dataset']})"
            + (f"; {len(comp) - len(ran)} cell(s) of data sets not run here left out"
               if len(comp) > len(ran) else "") + ".",
    )


def _evaluate(claim: PaperClaim, reproduction: Any) -> ClaimRow:
    paper, ours, why, verdict = claim.paper, claim.ours, claim.why, claim.verdict
    if claim.check:
        func = import_object(claim.check)
        try:
            got = func(reproduction, **dict(claim.args))
        except ClaimNotRun as exc:
            got = ClaimVerdict("not attempted", ours or "—", str(exc))
        if not isinstance(got, ClaimVerdict):
            raise TypeError(f"claim check {claim.check} returned {type(got).__name__}, not a "
                            "ClaimVerdict.")
        verdict, ours, paper = got.verdict, got.ours, got.paper or paper
        why = got.why
        if claim.why:
            why = f"{why.rstrip().rstrip('.')}. {claim.why}"
    if claim.diagnosis and verdict in ("partly", "not reproduced"):
        why = f"{why.rstrip('.')}. Diagnosis: {claim.diagnosis}"
    return ClaimRow(id=claim.id, claim=claim.text, source=claim.source, paper=paper or "—",
                    ours=ours or "—", verdict=verdict, why=why)


def evaluate_claims(spec: ReproductionSpec, results: Sequence[Results], *,
                    quick: bool = False) -> list[ClaimRow]:
    """Every claim of ``spec`` with its verdict, computed from ``results`` where it is numeric.

    Parameters
    ----------
    spec : ReproductionSpec
    results : sequence of Results
        One per experiment (stored or fresh).
    quick : bool, default=False

    Returns
    -------
    list of ClaimRow
    """
    from sparsefs.harness._results import Reproduction

    repro = Reproduction(spec=spec, results=list(results), quick=quick)
    return [_evaluate(c, repro) for c in spec.claims]


def claims_markdown(rows: Sequence[ClaimRow], *, counts: bool = True) -> str:
    """The ``## Claims`` section: one table row per claim, and the count of each verdict."""
    from sparsefs.harness._tables import md_table as _md_table

    out = ["## Claims", ""]
    if not rows:
        return "\n".join([*out, "No claims are declared for this reproduction.", ""])
    out += ["Each claim of the paper, quoted with its section, table or figure; the paper's "
            "figure where it has one; ours; and a verdict (`reproduced`, `partly`, `not "
            "reproduced`, `inconclusive`, `not attempted`) with its reason. Numeric verdicts "
            "are computed by the report from the stored results, so a rerun updates them.", ""]
    table = [[i, f"{r.claim} *({r.source})*" if r.source else r.claim, r.paper, r.ours,
              f"**{r.verdict}**", r.why] for i, r in enumerate(rows, 1)]
    out += [_md_table(["#", "claim (paper)", "paper", "ours", "verdict", "why"], table), ""]
    if counts:
        tally: Mapping[str, int] = {v: sum(r.verdict == v for r in rows) for v in CLAIM_VERDICTS}
        out += ["Verdicts: " + ", ".join(f"{n} {v}" for v, n in tally.items()) + ".", ""]
    return "\n".join(out)


def values_agreement(reproduction: Any, *, experiment: str, metric: str, method: str,
                     values: Mapping[str, float], tolerance: float, scale: float = 1.0,
                     estimator: str | None = None, k_max: int | None = None) -> ClaimVerdict:
    """Printed paper values ``{dataset: value}`` of one method against our best over k
    (scaled by ``scale``): how many lie within ``tolerance`` (``reproduced`` at three quarters
    of the data sets we ran, ``partly`` at a quarter)."""
    from sparsefs.metrics._summary import best_over_k

    try:
        best = best_over_k(experiment_results(reproduction, experiment), metric, estimator,
                           k_max=k_max)
    except ValueError as exc:
        raise ClaimNotRun(str(exc)) from exc
    best = best[best["method"] == method].set_index("dataset")
    parts, n_ok = [], 0
    for ds, paper in values.items():
        if ds not in best.index:
            continue
        ours = float(best.loc[ds, "value"]) * scale
        n_ok += int(abs(ours - paper) <= tolerance)
        parts.append(f"{ds} {ours:.2f} ({ours - paper:+.2f})")
    if not parts:
        raise ClaimNotRun(f"none of {sorted(values)} was run here")
    return ClaimVerdict(fraction_verdict(n_ok, len(parts), all_for_reproduced=False),
                        "; ".join(parts),
                        f"{n_ok} of {len(parts)} data sets within ±{tolerance:g} of the paper.",
                        paper="; ".join(f"{d} {v:g}" for d, v in values.items()))
