"""The defaults policy (docs/contract.md, "Changing a default") applied to a default.

A default changes only on the microarray benchmark's protocol: the candidate is chosen on one
half of the data sets (half ``A`` of ``configs/standing/microarray.toml``) and confirmed on the
other (half ``B``), and both halves are reported. :func:`policy_decision` is the rule;
:func:`defaults_section` renders the study of a default (``configs/standing/
defaults_<name>.toml``, whose first method is the current default and the others the
candidates; its stored cells; and the bisection of the history that found the change,
``OUT/standing/results/defaults/bisect.json``) for the standing page.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from sparsefs.harness._tables import md_table

__all__ = ["PolicyDecision", "defaults_section", "policy_decision"]

STUDY = "defaults_smba_csfs"
"""The config (``configs/standing/<STUDY>.toml``) of the default studied for issue #29."""


@dataclass(frozen=True)
class PolicyDecision:
    """The outcome of the defaults policy for one candidate against the current default.

    Attributes
    ----------
    keep : str
        The default to ship: ``"current"`` or ``"candidate"``.
    chosen_on_a : bool
        Whether the candidate's mean over half A is above the current default's.
    confirmed_on_b : bool
        Whether, then, its mean over half B is at least the current default's.
    mean_a, mean_b : tuple of float
        (current, candidate) means over the data sets of each half.
    wins_a, wins_b : tuple of int
        Data sets where the candidate is above / below the current default, per half.
    """

    keep: str
    chosen_on_a: bool
    confirmed_on_b: bool
    mean_a: tuple[float, float]
    mean_b: tuple[float, float]
    wins_a: tuple[int, int]
    wins_b: tuple[int, int]


def policy_decision(scores: pd.DataFrame, halves: dict[str, str], current: str,
                    candidate: str, *, tol: float = 1e-9) -> PolicyDecision:
    """The defaults policy: choose on half A, confirm on half B.

    The candidate replaces the current default only when its mean score over the data sets
    of half ``A`` is higher than the current default's **and** its mean over half ``B`` is not
    lower (within ``tol``). Otherwise the current default stays (ties keep it).

    Parameters
    ----------
    scores : DataFrame
        Data sets x methods (higher is better), both columns present.
    halves : dict
        Data set -> ``"A"`` or ``"B"``.
    current, candidate : str
        Columns of ``scores``.

    Returns
    -------
    PolicyDecision
    """
    both = scores[[current, candidate]].dropna()
    out = {}
    for half in ("A", "B"):
        sub = both[[halves.get(d) == half for d in both.index]]
        if sub.empty:
            raise ValueError(f"no data set of half {half} has both {current!r} and "
                             f"{candidate!r}.")
        d = sub[candidate] - sub[current]
        out[half] = ((float(sub[current].mean()), float(sub[candidate].mean())),
                     (int((d > tol).sum()), int((d < -tol).sum())))
    (ca, na), (cb, nb) = out["A"][0], out["B"][0]
    chosen = na > ca + tol
    confirmed = chosen and nb >= cb - tol
    return PolicyDecision(keep="candidate" if confirmed else "current", chosen_on_a=chosen,
                          confirmed_on_b=confirmed, mean_a=(ca, na), mean_b=(cb, nb),
                          wins_a=out["A"][1], wins_b=out["B"][1])


def _bisect_lines(path: Path) -> list[str]:
    if not path.is_file():
        return ["The bisection of the history has not been stored yet "
                f"(`{path}`).", ""]
    doc = json.loads(path.read_text(encoding="utf-8"))
    out = [f"Bisection of the first-parent history from `{doc['good'][:9]}` to "
           f"`{doc['bad'][:9]}` (`python benchmarks/study_smba_csfs_default.py bisect "
           f"{doc['good'][:7]} {doc['bad'][:7]}`): {len(doc['measured'])} commits measured "
           f"with the issue's protocol ({doc['protocol']}).", ""]
    rows = []
    for mv in doc.get("changes", []):
        before, after = mv["before"], mv["after"]
        rows.append([f"`{mv['commit'][:9]}`", mv["subject"][:110]]
                    + [f"{before[d]:.3f} → {after[d]:.3f}" for d in sorted(after)])
    names = sorted(doc["changes"][0]["after"]) if doc.get("changes") else []
    if rows:
        out += ["The commits that moved the numbers (each against its parent):", "",
                md_table(["commit", "subject", *names], rows), ""]
    patched = [r["commit"][:9] for r in doc["measured"] if r.get("patched")]
    if patched:
        out += [f"Commits {', '.join(patched)} do not import as committed (`base.py` imports "
                "`resolve_n_features_to_select` from `_kernels/ranking.py`, which defines it "
                "only from f5f10b9); they were measured with that self-contained function "
                "appended to their `ranking.py`.", ""]
    return out


def defaults_section(out: str | os.PathLike[str], *, study: str = STUDY,
                     config_dir: str | None = None) -> str:
    """The page's section on the studied default (empty when nothing is stored).

    Parameters
    ----------
    out : path
        The ``--out`` directory of ``sparsefs standing``.
    study : str
        The study's config name.
    config_dir : path, optional
    """
    from sparsefs.harness.standing import ResultStore, analyse, load_standing_spec, results_dir

    try:
        spec = load_standing_spec(study, config_dir=config_dir)
    except FileNotFoundError:
        return ""
    store = ResultStore(results_dir(out, spec.name))
    bisect = Path(out) / "standing" / "results" / "defaults" / "bisect.json"
    if not store.datasets() and not bisect.is_file():
        return ""
    lines = [f"## Defaults policy: {spec.title}", "", spec.description, "",
             "**The policy** (docs/contract.md, *Changing a default*): a default changes only "
             "on the microarray benchmark's protocol, chosen on half A of its data sets and "
             "confirmed on half B, both halves reported: the candidate replaces the current "
             "default when its mean over half A is higher and its mean over half B is not "
             "lower.", ""]
    lines += _bisect_lines(bisect)
    if not store.datasets():
        return "\n".join([*lines, "The policy's runs are not stored yet.", ""])
    a = analyse(spec, store)
    halves = {d.label: d.half for d in spec.datasets}
    current = spec.methods[0].label  # the study's first method is the current default
    candidates = [m.label for m in spec.methods if m.label != current]
    metrics = []
    own = a.tables.get("own")
    if own is not None and current in own.columns:
        metrics.append(("own predictions (nested accuracy)", own))
    for h in a.headlines:
        metrics.append((h.title, h.scores))
    for title, scores in metrics:
        for cand in candidates:
            if cand not in scores.columns or scores[[current, cand]].dropna().empty:
                continue
            dec = policy_decision(scores, halves, current, cand)
            rows = []
            for d in scores.index:
                if np.isfinite(scores.loc[d, current]) and np.isfinite(scores.loc[d, cand]):
                    rows.append([d, halves.get(d, ""), f"{scores.loc[d, current]:.3f}",
                                 f"{scores.loc[d, cand]:.3f}",
                                 f"{scores.loc[d, cand] - scores.loc[d, current]:+.3f}"])
            rows.sort(key=lambda r: (r[1], r[0]))
            rows += [["**mean, half A**", "A", f"{dec.mean_a[0]:.3f}", f"{dec.mean_a[1]:.3f}",
                      f"{dec.mean_a[1] - dec.mean_a[0]:+.3f}"],
                     ["**mean, half B**", "B", f"{dec.mean_b[0]:.3f}", f"{dec.mean_b[1]:.3f}",
                      f"{dec.mean_b[1] - dec.mean_b[0]:+.3f}"]]
            verdict = ("the candidate is chosen on half A and confirmed on half B: it becomes "
                       "the default" if dec.keep == "candidate" else
                       "the candidate is chosen on half A but not confirmed on half B: the "
                       "current default stays" if dec.chosen_on_a else
                       "the candidate is not better on half A: the current default stays")
            lines += [f"### {cand} against {current}: {title}", "",
                      md_table(["data set", "half", current, cand, "difference"], rows), "",
                      f"Half A: candidate ahead on {dec.wins_a[0]}, behind on {dec.wins_a[1]} "
                      f"data sets; half B: ahead on {dec.wins_b[0]}, behind on "
                      f"{dec.wins_b[1]}. **Decision by the policy: {verdict}.**", ""]
    bad = a.cells[a.cells["status"] != "ok"]
    if len(bad):
        lines += ["Cells without a result: " + "; ".join(
            f"{r.dataset} / {r.method} ({r.status})" for r in bad.itertuples()) + ".", ""]
    return "\n".join(lines)
